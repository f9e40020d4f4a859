// Every sample of the developer guide (/developers), run as a developer would run it,
// with the language's real OAuth library, against a running gateway: register an
// application on the account page, the three-legged flow with oob (the user allows in
// the authorize page and the code shown is passed to the sample), a signed post with a
// photo and a signed read. Python, Perl and Ruby use Debian's packages, which .ci/run
// installs: under CI=true a missing one fails the run.
import { execFile } from 'node:child_process'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { inCi } from '../helpers/services.js'
import { startStack, type Stack } from '../helpers/stack.js'
import { codeOf, csrfOf, hiddenField, WebClient } from '../gateway/provider/helpers.js'

const run = promisify(execFile)
const samples = join(process.cwd(), 'examples', 'guide')

export const languages = [
  { name: 'curl', command: ['/bin/bash', join(samples, 'curl.sh')], check: ['/bin/bash', '-c', 'command -v curl && command -v openssl'], package: 'curl, openssl' },
  { name: 'python', command: ['/usr/bin/python3', join(samples, 'python.py')], check: ['/usr/bin/python3', '-c', 'import requests_oauthlib'], package: 'python3-requests-oauthlib' },
  { name: 'node', command: [process.execPath, join(samples, 'node.mjs')], check: [process.execPath, '-e', '0'], package: 'node' },
  { name: 'perl', command: ['/usr/bin/perl', join(samples, 'perl.pl')], check: ['/usr/bin/perl', '-MNet::OAuth', '-MLWP::UserAgent', '-e', '1'], package: 'libnet-oauth-perl' },
  { name: 'ruby', command: ['/usr/bin/ruby', join(samples, 'ruby.rb')], check: ['/usr/bin/ruby', '-roauth', '-e', '1'], package: 'ruby-oauth' },
] as const

/** The samples with a `status` step (a text status, its form body signed). */
const textStatusSamples = new Set(['curl', 'python', 'node'])

function available(l: (typeof languages)[number]): boolean {
  const r = spawnSync(l.check[0], l.check.slice(1), { stdio: 'ignore' })
  if (r.status === 0) return true
  const reason = `the ${l.name} sample needs ${l.package} (apt-get install -y ${l.package})`
  if (inCi) throw new Error(`${reason}; under CI=true the guide's samples must run`)
  console.warn(`skipping: ${reason}`)
  return false
}

// A 1×1 PNG (the README's dot.png).
const png = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c63f8ffff3f0005fe02fea73581840000000049454e44ae426082', 'hex')

function lines(out: string): Record<string, string> {
  const o: Record<string, string> = {}
  for (const line of out.split('\n')) {
    const eq = line.indexOf('=')
    if (eq > 0) o[line.slice(0, eq)] ??= line.slice(eq + 1).trim()
  }
  return o
}

describe('the developer guide samples', () => {
  let stack: Stack
  let web: WebClient
  let app: { key: string; secret: string }
  let photo: string

  beforeAll(async () => {
    stack = await startStack()
    const alice = await stack.addUser('alice', 'Alice')
    web = new WebClient(stack.url)
    await web.signIn('/account/login', 'alice', alice.password)
    // Register: the account page's form, as the guide tells.
    const account = await web.get('/account')
    const registered = await web.postAndFollow('/account/apps', { csrf_token: csrfOf(account.text), name: 'Guide samples', callback: '', scope: ['read_public', 'write_public', 'write_private'] })
    // The page the registration redirects to is the one page that shows the secret.
    expect(registered.posted).toBe(303)
    expect(registered.status).toBe(200)
    app = { key: codeOf(registered.text, 'consumer_key')!, secret: codeOf(registered.text, 'consumer_secret')! }
    photo = join(mkdtempSync(join(tmpdir(), 'kigo-guide-')), 'dot.png')
    writeFileSync(photo, png)
  })
  afterAll(() => stack?.close())

  /** The user allows the request token on the authorize page; returns the code shown (oob). */
  async function allow(authorizeUrl: string): Promise<string> {
    const consent = await web.get(authorizeUrl)
    expect(consent.status).toBe(200)
    const shown = await web.post('/oauth/authorize', { csrf_token: csrfOf(consent.text), oauth_token: hiddenField(consent.text, 'oauth_token')!, decision: 'allow' })
    return /id="oauth_verifier"[^>]*>([^<]+)</.exec(shown.text)![1]!
  }

  for (const l of languages) {
    it.runIf(available(l))(`${l.name}: three-legged flow (oob), a post with a photo, a read`, async () => {
      const env = { ...process.env, KIGO: stack.url, CONSUMER_KEY: app.key, CONSUMER_SECRET: app.secret }
      const sample = (args: string[], more: Record<string, string> = {}) => run(l.command[0], [...l.command.slice(1), ...args], { env: { ...env, ...more }, timeout: 30_000 }).then((r) => r.stdout)

      const initiated = lines(await sample(['initiate']))
      expect(initiated.oauth_token).toMatch(/^[A-Za-z0-9_-]{16,}$/)
      expect(initiated.authorize).toBe(`${stack.url}/oauth/authorize?oauth_token=${initiated.oauth_token}`)
      const verifier = await allow(initiated.authorize!.slice(stack.url.length))

      const exchanged = lines(await sample(['token'], { REQUEST_TOKEN: initiated.oauth_token!, REQUEST_SECRET: initiated.oauth_token_secret!, VERIFIER: verifier }))
      expect(exchanged.oauth_token).toMatch(/^[A-Za-z0-9_-]{16,}$/)
      const token = { TOKEN: exchanged.oauth_token!, TOKEN_SECRET: exchanged.oauth_token_secret! }

      const posted = JSON.parse(await sample(['post', `photos-${l.name}`, photo], token))
      expect(posted.keyword).toBe(`photos-${l.name}`)
      expect(posted.user.screen_name ?? posted.user.url_name ?? posted.user.id).toBeTruthy()

      const read = JSON.parse(await sample(['read', String(posted.id)], token))
      expect(read.id).toBe(posted.id)
      expect(read.keyword).toBe(`photos-${l.name}`)

      // A text status: the signed form body (spaces, reserved and non-ASCII characters).
      if (textStatusSamples.has(l.name)) {
        const text = `an old pond & a frog's leap: 100% ~ 古池や (${l.name})`
        const status = JSON.parse(await sample(['status', `text-${l.name}`, text], token))
        expect(status.keyword).toBe(`text-${l.name}`)
        expect(status.text).toBe(`text-${l.name}=${text}`)
      }
    }, 60_000)
  }
})
