// The developer guide's OAuth 2.0 samples (/developers#oauth2), run as a developer would
// run them, each with its language's OAuth 2.0 library, against a running gateway: the
// client registered on the account page; the authorization code with PKCE (the sample
// prints the page, the user signs in and allows there, and the address the browser is
// sent to is pasted into the sample); Bearer calls with each scope asked for; refresh;
// revocation; the device flow for a command-line tool, the user typing its code at
// /device; and an OAuth 1.0a application's stored token exchanged (requests-oauthlib's
// OAuth1 with the signature in the body). Python, Ruby and Perl use Debian's packages, which .ci/run installs: under
// CI=true a missing one fails the run.
import { spawn, spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { decodeJwt } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { inCi } from '../helpers/services.js'
import { startStack, type Stack } from '../helpers/stack.js'
import { browse } from '../gateway/oidc/helpers.js'
import { approveOnPhone, bearer, issueOAuth1Token, registerExchangeApp } from '../gateway/oauth2/helpers.js'
import { codeOf, csrfOf, WebClient } from '../gateway/provider/helpers.js'

const samples = join(process.cwd(), 'examples', 'guide')

/** The redirect URI the samples are written with: nothing listens there, the user copies the address. */
const redirectUri = 'http://127.0.0.1:8000/callback'

interface Sample {
  name: string
  command: string[]
  check: string[]
  package: string
  type: 'confidential' | 'public'
  /** Has a `revoke` step. */
  revoke?: boolean
}

export const codeFlowSamples: Sample[] = [
  { name: 'python', command: ['/usr/bin/python3', join(samples, 'oauth2-python.py')], check: ['/usr/bin/python3', '-c', 'import requests_oauthlib; from oauthlib.oauth2 import WebApplicationClient; WebApplicationClient("x").create_code_verifier(43)'], package: 'python3-requests-oauthlib', type: 'confidential' },
  { name: 'ruby', command: ['/usr/bin/ruby', join(samples, 'oauth2-ruby.rb')], check: ['/usr/bin/ruby', '-roauth2', '-e', '1'], package: 'ruby-oauth2', type: 'confidential' },
  { name: 'node', command: [process.execPath, join(samples, 'oauth2-node.mjs')], check: [process.execPath, '--input-type=module', '-e', "await import('openid-client')"], package: 'openid-client (npm ci)', type: 'public', revoke: true },
  { name: 'perl', command: ['/usr/bin/perl', join(samples, 'oauth2-perl.pl')], check: ['/usr/bin/perl', '-MLWP::Authen::OAuth2', '-MJSON::PP', '-MDigest::SHA', '-e', '1'], package: 'liblwp-authen-oauth2-perl', type: 'public' },
]

export const deviceSample: Sample = { name: 'curl', command: ['/bin/bash', join(samples, 'oauth2-device.sh')], check: ['/bin/bash', '-c', 'command -v curl && command -v jq'], package: 'curl, jq', type: 'public', revoke: true }

/** The token exchange of an OAuth 1.0a application's stored tokens (the migration page's exchange step). */
export const exchangeSample: Sample = { name: 'python exchange', command: ['/usr/bin/python3', join(samples, 'oauth2-exchange.py')], check: ['/usr/bin/python3', '-c', 'import requests_oauthlib; from oauthlib.oauth1 import SIGNATURE_TYPE_BODY'], package: 'python3-requests-oauthlib', type: 'confidential' }

function available(s: Sample): boolean {
  const r = spawnSync(s.check[0]!, s.check.slice(1), { stdio: 'ignore', cwd: process.cwd() })
  if (r.status === 0) return true
  const reason = `the ${s.name} OAuth 2.0 sample needs ${s.package}${s.package.includes('npm') ? '' : ` (apt-get install -y ${s.package.replace(',', '')})`}`
  if (inCi) throw new Error(`${reason}; under CI=true the guide's samples must run`)
  console.warn(`skipping: ${reason}`)
  return false
}

function lines(out: string): Record<string, string> {
  const o: Record<string, string> = {}
  for (const line of out.split('\n')) {
    const eq = line.indexOf('=')
    if (eq > 0) o[line.slice(0, eq)] ??= line.slice(eq + 1).trim()
  }
  return o
}

interface Run {
  code: number | null
  stdout: string
  stderr: string
}

/**
 * Runs a sample step. `answer`, if given, plays the person: it is called with the first
 * lines the sample prints (once `until` matches them) and returns what is typed on stdin.
 */
function runSample(s: Sample, args: string[], env: Record<string, string>, answer?: { until: RegExp; then: (printed: string) => Promise<string> }): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(s.command[0]!, [...s.command.slice(1), ...args], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    let answered = false
    const timer = setTimeout(() => child.kill(), 60_000)
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString()
      if (answer && !answered && answer.until.test(stdout)) {
        answered = true
        answer.then(stdout).then((typed) => child.stdin.end(typed), (err: unknown) => {
          child.kill()
          reject(err instanceof Error ? err : new Error(String(err)))
        })
      }
    })
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    if (!answer) child.stdin.end()
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}

describe('the developer guide\'s OAuth 2.0 samples', () => {
  let stack: Stack
  let alice: { id: string; password: string }
  let web: WebClient

  beforeAll(async () => {
    stack = await startStack()
    alice = await stack.addUser('alice', 'Alice')
    web = new WebClient(stack.url)
    await web.signIn('/account/login', 'alice', alice.password)
  })
  afterAll(() => stack?.close())

  /** Registers a client on the account page, as the guide tells: its client_id and (confidential) secret. */
  async function register(name: string, type: 'confidential' | 'public'): Promise<Record<string, string>> {
    const form = await web.get('/account/oidc-clients')
    const created = await web.postAndFollow('/account/oidc-clients', { csrf_token: csrfOf(form.text), name, redirect_uris: redirectUri, type, api_scope: ['read_public', 'write_public'] })
    expect(created.posted).toBe(303)
    const env: Record<string, string> = { KIGO: stack.url, CLIENT_ID: codeOf(created.text, 'client_id')! }
    if (type === 'confidential') env.CLIENT_SECRET = codeOf(created.text, 'client_secret')!
    expect(env.CLIENT_ID).toBeTruthy()
    if (type === 'confidential') expect(env.CLIENT_SECRET).toBeTruthy()
    return env
  }

  /** The sample's login: the person allows on kigo's pages; `landed` may alter the address pasted back. */
  async function login(s: Sample, env: Record<string, string>, o: { landed?: (u: URL) => URL } = {}): Promise<Run & { authorize: URL }> {
    let authorize: URL | undefined
    const run = await runSample(s, ['login'], env, {
      until: /^authorize=.*\n/m,
      then: async (printed) => {
        authorize = new URL(lines(printed).authorize!)
        const { callback } = await browse(authorize, redirectUri, alice)
        return `${(o.landed ?? ((u) => u))(callback).href}\n`
      },
    })
    expect(authorize, run.stdout + run.stderr).toBeDefined()
    return { ...run, authorize: authorize! }
  }

  function expectApiToken(token: string | undefined, scope: string): void {
    expect(token).toBeTruthy()
    expect(decodeJwt(token!)).toMatchObject({ iss: stack.url, aud: `${stack.url}/api`, sub: 'alice', scope })
  }

  /** A post (write_public) and a read (read_public) with the sample's Bearer token, then its refresh: the entry and the renewed tokens. */
  async function postReadRefresh(s: Sample, env: Record<string, string>, tokens: Record<string, string>, keyword: string, text: string): Promise<{ entry: { id: number }; renewed: Record<string, string> }> {
    const posted = await runSample(s, ['post', keyword, text], { ...env, ACCESS_TOKEN: tokens.access_token! })
    expect(posted.code, posted.stderr).toBe(0)
    const entry = JSON.parse(posted.stdout) as { id: number }
    expect(entry).toMatchObject({ keyword, text: `${keyword}=${text}`, user: { id: 'alice' } })
    const read = await runSample(s, ['read', String(entry.id)], { ...env, ACCESS_TOKEN: tokens.access_token! })
    expect(read.code, read.stderr).toBe(0)
    expect(JSON.parse(read.stdout)).toMatchObject({ id: entry.id })

    const refreshed = await runSample(s, ['refresh'], { ...env, REFRESH_TOKEN: tokens.refresh_token! })
    expect(refreshed.code, refreshed.stderr).toBe(0)
    const renewed = lines(refreshed.stdout)
    expectApiToken(renewed.access_token, 'read_public write_public')
    expect(renewed.refresh_token).toBeTruthy()
    expect(renewed.refresh_token).not.toBe(tokens.refresh_token)
    return { entry, renewed }
  }

  for (const s of codeFlowSamples) {
    it.runIf(available(s))(`${s.name}: authorization code with PKCE, a post (write_public) and a read (read_public) with Bearer, refresh${s.revoke ? ', revocation' : ''}`, async () => {
      const env = await register(`OAuth 2.0 sample (${s.name})`, s.type)

      const logged = await login(s, env)
      expect(logged.code, logged.stderr).toBe(0)
      // The page the user is sent to: kigo's authorization endpoint, PKCE S256, the API scopes.
      expect(`${logged.authorize.origin}${logged.authorize.pathname}`).toBe(`${stack.url}/oidc/auth`)
      expect(logged.authorize.searchParams.get('code_challenge_method')).toBe('S256')
      expect(logged.authorize.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/)
      expect(logged.authorize.searchParams.get('scope')).toBe('read_public write_public')
      expect(logged.authorize.searchParams.get('client_secret')).toBeNull()
      const tokens = lines(logged.stdout)
      expectApiToken(tokens.access_token, 'read_public write_public')
      expect(tokens.refresh_token).toBeTruthy()
      expect(tokens.expires_in).toBe('3600')

      // write_public: a post, as Alice.
      const text = `an old pond & a frog's leap: 100% ~ 古池や (${s.name})`
      const posted = await runSample(s, ['post', `oauth2-${s.name}`, text], { ...env, ACCESS_TOKEN: tokens.access_token! })
      expect(posted.code, posted.stderr).toBe(0)
      const entry = JSON.parse(posted.stdout)
      expect(entry).toMatchObject({ keyword: `oauth2-${s.name}`, text: `oauth2-${s.name}=${text}`, user: { id: 'alice' } })

      // read_public: the entry read back.
      const read = await runSample(s, ['read', String(entry.id)], { ...env, ACCESS_TOKEN: tokens.access_token! })
      expect(read.code, read.stderr).toBe(0)
      expect(JSON.parse(read.stdout)).toMatchObject({ id: entry.id, keyword: `oauth2-${s.name}` })

      // Refresh: a new access token that works, and a new refresh token; the old one is spent.
      const refreshed = await runSample(s, ['refresh'], { ...env, REFRESH_TOKEN: tokens.refresh_token! })
      expect(refreshed.code, refreshed.stderr).toBe(0)
      const renewed = lines(refreshed.stdout)
      expectApiToken(renewed.access_token, 'read_public write_public')
      expect(renewed.access_token).not.toBe(tokens.access_token)
      expect(renewed.refresh_token).toBeTruthy()
      expect(renewed.refresh_token).not.toBe(tokens.refresh_token)
      const again = await runSample(s, ['read', String(entry.id)], { ...env, ACCESS_TOKEN: renewed.access_token! })
      expect(again.code, again.stderr).toBe(0)
      expect(JSON.parse(again.stdout)).toMatchObject({ id: entry.id })

      if (s.revoke) {
        // Revoking the refresh token ends the grant: its access token is refused at once.
        const revoked = await runSample(s, ['revoke'], { ...env, TOKEN: renewed.refresh_token! })
        expect(revoked.code, revoked.stderr).toBe(0)
        expect(revoked.stdout.trim()).toBe('revoked')
        const refused = await runSample(s, ['read', String(entry.id)], { ...env, ACCESS_TOKEN: renewed.access_token! })
        expect(refused.code).not.toBe(0)
        expect(refused.stderr).toMatch(/401 Bearer realm="[^"]+", error="invalid_token"/)
        expect((await bearer(stack.url, 'GET', `/api/statuses/show/${entry.id}.json`, renewed.access_token!)).status).toBe(401)
        const noRefresh = await runSample(s, ['refresh'], { ...env, REFRESH_TOKEN: renewed.refresh_token! })
        expect(noRefresh.code).not.toBe(0)
        expect(noRefresh.stderr).toContain('invalid_grant')
      }
    }, 90_000)

    it.runIf(available(s))(`${s.name}: a token for read_public alone reads, and its post is refused with insufficient_scope`, async () => {
      const env = { ...(await register(`OAuth 2.0 reader (${s.name})`, s.type)), SCOPE: 'read_public' }
      const logged = await login(s, env)
      expect(logged.code, logged.stderr).toBe(0)
      const token = lines(logged.stdout).access_token!
      expectApiToken(token, 'read_public')
      const entry = await bearer(stack.url, 'POST', '/api/statuses/update.json', await writerToken(), { status: `read me (${s.name})` })
      const read = await runSample(s, ['read', String(entry.body.id)], { ...env, ACCESS_TOKEN: token })
      expect(read.code, read.stderr).toBe(0)
      expect(JSON.parse(read.stdout)).toMatchObject({ id: entry.body.id })
      const post = await runSample(s, ['post', 'nope', `must not appear (${s.name})`], { ...env, ACCESS_TOKEN: token })
      expect(post.code).not.toBe(0)
      expect(post.stderr).toMatch(/403 Bearer realm="[^"]+", error="insufficient_scope", error_description="[^"]*", scope="write_public"/)
      const mine = await bearer(stack.url, 'GET', '/api/statuses/user_timeline.json', token)
      expect(JSON.stringify(mine.body)).not.toContain(`must not appear (${s.name})`)
    }, 60_000)

    it.runIf(available(s))(`${s.name}: an address pasted back with another state is refused, no token printed`, async () => {
      const env = await register(`OAuth 2.0 state check (${s.name})`, s.type)
      const run = await login(s, env, {
        landed: (u) => {
          u.searchParams.set('state', 'forged-state-value')
          return u
        },
      })
      expect(run.code).not.toBe(0)
      expect(lines(run.stdout).access_token).toBeUndefined()
      expect(run.stderr).toMatch(/state/i)
    }, 60_000)
  }

  let writer: string | undefined
  /** A write_public token of Alice's (through the node sample), to post the entry a read_public token reads. */
  async function writerToken(): Promise<string> {
    if (writer) return writer
    const s = codeFlowSamples.find((x) => x.name === 'node')!
    const env = await register('OAuth 2.0 writer', 'public')
    writer = lines((await login(s, env)).stdout).access_token!
    return writer
  }

  it.runIf(available(deviceSample))('curl: the device flow for a command-line tool: the code typed at /device, a post and a read with Bearer, refresh, revocation', async () => {
    const env = await register('OAuth 2.0 device sample', 'public')
    const s = deviceSample
    let shown: Record<string, string> = {}
    const logged = await runSample(s, ['login'], env, {
      until: /^verification_uri=.*\n/m,
      then: async (printed) => {
        shown = lines(printed)
        // The person, on a phone: signs in, opens the address, types the code, allows.
        await approveOnPhone(stack.url, shown.verification_uri!, shown.user_code!, alice)
        return ''
      },
    })
    expect(logged.code, logged.stderr).toBe(0)
    expect(shown.verification_uri).toBe(`${stack.url}/device`)
    expect(shown.user_code).toMatch(/^[A-Z]{4}-[A-Z]{4}$/)
    expect(logged.stderr).toContain(`Open ${stack.url}/device and type ${shown.user_code}`)
    const tokens = lines(logged.stdout)
    expectApiToken(tokens.access_token, 'read_public write_public')

    const { entry, renewed } = await postReadRefresh(s, env, tokens, 'oauth2-device', 'from the command line & no password')

    // Revoking the access token ends the grant: it is refused, and so is its refresh token.
    const revoked = await runSample(s, ['revoke'], { ...env, TOKEN: renewed.access_token! })
    expect(revoked.code, revoked.stderr).toBe(0)
    const refused = await runSample(s, ['read', String(entry.id)], { ...env, ACCESS_TOKEN: renewed.access_token! })
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toMatch(/^401 .*invalid_token/)
    const noRefresh = await runSample(s, ['refresh'], { ...env, REFRESH_TOKEN: renewed.refresh_token! })
    expect(noRefresh.code).not.toBe(0)
    expect(noRefresh.stderr).toContain('invalid_grant')
  }, 90_000)

  it.runIf(available(exchangeSample))('python exchange: an OAuth 1.0a application\'s stored token exchanged without asking the user, a post and a read with Bearer, refresh', async () => {
    const s = exchangeSample
    // The application, OAuth 2.0 turned on, and a user's token it stored; the sample is linked where the exchange is explained.
    const app = await registerExchangeApp(stack, 'Exchange sample', 'alice', ['read_public', 'write_public'])
    const stored = await issueOAuth1Token(stack, app, 'alice', ['read_public', 'write_public'])
    const env = { KIGO: stack.url, CONSUMER_KEY: app.key, CONSUMER_SECRET: app.secret, CLIENT_ID: app.clientId, CLIENT_SECRET: app.clientSecret! }
    const download = `href="/developers/samples/oauth2-exchange.py"`
    expect((await web.get('/migration')).text).toContain(download)
    expect((await web.get('/developers')).text).toContain(download)
    expect((await web.get('/developers/samples/oauth2-exchange.py')).text).toBe(readFileSync(s.command[1]!, 'utf8').replaceAll('http://localhost:8080', stack.url))

    const exchanged = await runSample(s, ['exchange'], { ...env, TOKEN: stored.token, TOKEN_SECRET: stored.secret })
    expect(exchanged.code, exchanged.stderr).toBe(0)
    const tokens = lines(exchanged.stdout)
    expectApiToken(tokens.access_token, 'read_public write_public')
    expect(decodeJwt(tokens.access_token!).client_id).toBe(app.clientId)
    expect(tokens.refresh_token).toBeTruthy()
    expect(tokens.expires_in).toBe('3600')

    const { entry, renewed } = await postReadRefresh(s, env, tokens, 'oauth2-exchange', 'moved without asking again')
    expect((await bearer(stack.url, 'GET', `/api/statuses/show/${entry.id}.json`, renewed.access_token!)).status).toBe(200)

    // A wrong token secret: the signature is refused, no token printed.
    const wrong = await runSample(s, ['exchange'], { ...env, TOKEN: stored.token, TOKEN_SECRET: 'not-the-secret' })
    expect(wrong.code).not.toBe(0)
    expect(wrong.stderr).toContain('invalid_grant')
    expect(lines(wrong.stdout).access_token).toBeUndefined()
  }, 90_000)
})
