// examples/oauth-three-legged.mjs, run as pasted: it prints the authorize page, the user
// allows there and types the code shown, and the access token it prints posts an entry.
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { startStack, type Stack } from '../helpers/stack.js'
import { csrfOf, hiddenField, oauthFetch, WebClient } from '../gateway/provider/helpers.js'

let stack: Stack
beforeAll(async () => {
  stack = await startStack()
})
afterAll(() => stack?.close())

it('runs the three-legged flow with oob and prints a working access token', async () => {
  const bob = await stack.addUser('bobby', 'Bobby')
  const app = await stack.admin<{ consumer_key: string; consumer_secret: string }>('POST', '/admin/apps', { name: 'Example', owner: 'bobby', scopes: ['write_public'] })
  const child = spawn(process.execPath, [join(process.cwd(), 'examples', 'oauth-three-legged.mjs'), stack.url, app.body.consumer_key, app.body.consumer_secret])
  let out = ''
  child.stdout.on('data', (c: Buffer) => (out += c.toString()))
  let err = ''
  child.stderr.on('data', (c: Buffer) => (err += c.toString()))
  const exited = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? -1)))
  while (!out.includes('Code shown: ')) {
    if (child.exitCode !== null) throw new Error(`exited early: ${err}`)
    await new Promise((r) => setTimeout(r, 50))
  }
  const authorize = /(http:\S+\/oauth\/authorize\?oauth_token=\S+)/.exec(out)![1]!
  const web = new WebClient(stack.url)
  await web.signIn('/account/login', 'bobby', bob.password)
  const consent = await web.get(authorize.slice(stack.url.length))
  const shown = await web.post('/oauth/authorize', { csrf_token: csrfOf(consent.text), oauth_token: hiddenField(consent.text, 'oauth_token')!, decision: 'allow' })
  const code = /id="oauth_verifier"[^>]*>([^<]+)</.exec(shown.text)![1]!
  // Typed by a person: in small letters.
  child.stdin.end(`${code.toLowerCase()}\n`)
  expect(await exited).toBe(0)
  const token = /access token:\s+(\S+)/.exec(out)![1]!
  const tokenSecret = /access token secret:\s+(\S+)/.exec(out)![1]!
  const posted = await oauthFetch({ url: `${stack.url}/api/statuses/update.json`, consumer: { key: app.body.consumer_key, secret: app.body.consumer_secret }, token: { token, secret: tokenSecret }, form: { status: 'haiku=from the example' } })
  expect(posted.status).toBe(200)
  expect(posted.json().keyword).toBe('haiku')
}, 60_000)
