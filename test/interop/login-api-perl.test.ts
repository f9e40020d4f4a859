// The login API with an independent client: the CPAN module Hatena::API::Auth, taken at
// test time from its public repository (test/interop/sources.ts) at the commit pinned in
// login-api-clients.json, with only its two URLs changed to the running kigo, and run by
// perl. The module writes the sign-in URL and performs the exchange; the browser between
// them is this test's cookie-keeping client. Then both icon URLs it returned are fetched
// with perl's LWP. Embedded, and on PostgreSQL with two gateways (sign-in on one,
// exchange on the other). The client's code never enters this repository.
import { execFile, execFileSync, spawnSync } from 'node:child_process'
import { promisify } from 'node:util'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshPostgres, inCi } from '../helpers/services.js'
import { startStack, type Stack } from '../helpers/stack.js'
import { WebClient, signInThrough } from '../gateway/login-api/helpers.js'
import { clientSource } from './sources.js'

const execFileAsync = promisify(execFile)
const here = dirname(fileURLToPath(import.meta.url))
const manifest = (JSON.parse(readFileSync(join(here, 'login-api-clients.json'), 'utf8')) as Record<string, {
  repo: string
  commit: string
  path: string
  urls: { signIn: string; exchange: string }
}>)['Hatena::API::Auth']!
const source = clientSource({ repository: manifest.repo, commit: manifest.commit })
const gitDir = 'gitDir' in source ? source.gitDir : ''

/** Why the client cannot run here, or null. */
function missing(): string | null {
  if (spawnSync('perl', ['-v']).status !== 0) return 'perl is not installed'
  if ('missing' in source) return source.missing
  if (spawnSync('git', ['--git-dir', gitDir, 'cat-file', '-e', `${manifest.commit}:${manifest.path}`]).status !== 0) return `${manifest.repo} has no ${manifest.path} at ${manifest.commit}`
  const deps = spawnSync('perl', ['-MURI', '-MLWP::UserAgent', '-MClass::Accessor::Fast', '-MClass::ErrorHandler', '-MJSON::Syck', '-e', '1'], { encoding: 'utf8' })
  if (deps.status !== 0) return `perl modules missing (Debian: libyaml-syck-perl libclass-accessor-perl libclass-errorhandler-perl liburi-perl libwww-perl): ${deps.stderr.split('\n')[0]}`
  return null
}
const reason = missing()
if (reason !== null) {
  if (inCi) throw new Error(`${reason}; under CI=true the Perl login API client must run`)
  console.warn(`skipping the Perl login API client: ${reason}`)
}

/** The module at the pinned commit, its two URLs replaced (and nothing else), in a lib dir of its own. */
function moduleFor(signInUrl: string, exchangeUrl: string): string {
  const original = execFileSync('git', ['--git-dir', gitDir, 'show', `${manifest.commit}:${manifest.path}`], { encoding: 'utf8' })
  const changed = original.replace(`'${manifest.urls.signIn}'`, `'${signInUrl}'`).replace(`'${manifest.urls.exchange}'`, `'${exchangeUrl}'`)
  // Exactly the two URLs differ: the same lines but two.
  const a = original.split('\n')
  const b = changed.split('\n')
  expect(b.length).toBe(a.length)
  expect(a.filter((line, i) => line !== b[i]).map((l) => l.trim())).toEqual([`my $uri = URI->new('${manifest.urls.signIn}');`, `my $uri = URI->new('${manifest.urls.exchange}');`])
  const lib = mkdtempSync(join(tmpdir(), 'kigo-perl-'))
  mkdirSync(join(lib, 'Hatena/API'), { recursive: true })
  writeFileSync(join(lib, 'Hatena/API/Auth.pm'), changed)
  return lib
}

// The site's own code, as its documentation shows it: the login URL with extra
// parameters, then login($cert) and the user's fields, then the two icons.
const driver = `
use strict; use warnings;
use Hatena::API::Auth; use LWP::UserAgent;
my ($cmd, $key, $secret, $arg) = @ARGV;
my $api = Hatena::API::Auth->new({ api_key => $key, secret => $secret });
if ($cmd eq 'uri') { print $api->uri_to_login(back => '/entries?page=2', lang => 'ja')->as_string, "\\n"; exit 0 }
my $user = $api->login($arg) or do { print "ERROR\\t", $api->errstr, "\\n"; exit 0 };
print join("\\t", 'USER', $user->name, $user->image_url, $user->thumbnail_url), "\\n";
my $ua = LWP::UserAgent->new;
for my $url ($user->image_url, $user->thumbnail_url) {
  my $res = $ua->get($url);
  print join("\\t", 'ICON', $res->code, scalar($res->header('Content-Type')), length($res->content), substr($res->content, 1, 3)), "\\n";
}
`

/** Runs the site's code (asynchronously: kigo answers it from this very process). */
async function perl(lib: string, args: string[]): Promise<string[]> {
  const { stdout } = await execFileAsync('perl', ['-I', lib, '-e', driver, ...args], { encoding: 'utf8', timeout: 30_000 })
  return stdout.trim().split('\n')
}

function suite(name: string, open: () => Promise<{ signIn: Stack; exchange: Stack; close: () => Promise<void> }>) {
  describe.skipIf(reason !== null)(`Hatena::API::Auth against kigo (${name})`, () => {
    let stacks: Awaited<ReturnType<typeof open>>
    let site: { api_key: string; secret: string; callback: string }
    let lib: string
    let alice: { id: string; password: string }

    beforeAll(async () => {
      stacks = await open()
      alice = await stacks.signIn.addUser('alice', 'Alice')
      const r = await stacks.signIn.admin<typeof site>('POST', '/admin/sites', { name: 'Perl site', owner: 'alice', callback: 'https://perl-site.example/login' })
      expect(r.status).toBe(201)
      site = r.body
      lib = moduleFor(`${stacks.signIn.url}/auth`, `${stacks.exchange.url}/api/auth.json`)
    })
    afterAll(async () => {
      if (lib) rmSync(lib, { recursive: true, force: true })
      await stacks?.close()
    })

    it('signs a visitor in, exchanges the cert, and gets both icons', async () => {
      const [uri] = await perl(lib, ['uri', site.api_key, site.secret])
      expect(uri!.startsWith(`${stacks.signIn.url}/auth?`)).toBe(true)
      const path = uri!.slice(stacks.signIn.url.length)
      const { answer } = await signInThrough(new WebClient(stacks.signIn.url), path, alice)
      expect(answer.status).toBe(302)
      const back = new URL(answer.headers.get('location')!)
      expect(back.origin + back.pathname).toBe(site.callback)
      expect(back.searchParams.get('back')).toBe('/entries?page=2')
      expect(back.searchParams.get('lang')).toBe('ja')
      const cert = back.searchParams.get('cert')!

      const lines = await perl(lib, ['login', site.api_key, site.secret, cert])
      const base = `${stacks.exchange.url}/users/alice`
      expect(lines[0]).toBe(['USER', 'alice', `${base}/profile.png`, `${base}/profile_s.png`].join('\t'))
      const icons = lines.slice(1).map((l) => l.split('\t'))
      expect(icons).toHaveLength(2)
      for (const [tag, status, type, length, magic] of icons) {
        expect([tag, status, type, magic]).toEqual(['ICON', '200', 'image/png', 'PNG'])
        expect(Number(length)).toBeGreaterThan(50)
      }
      expect(Number(icons[1]![3])).toBeLessThan(Number(icons[0]![3]))

      // A second exchange is refused; the module reads a failure's status line, not its body.
      const again = await perl(lib, ['login', site.api_key, site.secret, cert])
      expect(again[0]).toBe('ERROR\t400 Bad Request')
    })

    it('reports a wrong secret as the exchange error', async () => {
      const lines = await perl(lib, ['login', site.api_key, 'not-the-secret', 'some-cert-value-0000'])
      expect(lines[0]).toBe('ERROR\t401 Unauthorized')
    })
  })
}

suite('embedded', async () => {
  const stack = await startStack()
  return { signIn: stack, exchange: stack, close: () => stack.close() }
})

// Absent PostgreSQL skips this run outside CI and fails it under CI=true (services.ts).
const pg = reason === null ? await freshPostgres() : null
if (pg) {
  suite('PostgreSQL, two gateways', async () => {
    const shared = { databaseUrl: pg.url, secretKey: randomBytes(32).toString('base64'), adminToken: randomBytes(24).toString('base64url') }
    const a = await startStack(shared)
    const b = await startStack({ ...shared, coreUrl: a.coreUrl })
    return {
      signIn: a,
      exchange: b,
      close: async () => {
        await b.close()
        await a.close()
        await pg.drop()
      },
    }
  })
}
