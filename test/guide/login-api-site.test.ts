// The developer guide's sample for moving a site off the login API (#login-api): run as
// the site would run it, with the oauth-1.0a library, against a running gateway. The
// visitor allows on the authorize page, the callback's oauth_token and oauth_verifier go
// to the sample's second step, which prints what /api/auth.json used to answer.
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../helpers/stack.js'
import { csrfOf, hiddenField, WebClient } from '../gateway/provider/helpers.js'

const run = promisify(execFile)
const sample = join(process.cwd(), 'examples', 'guide', 'login-api-site.mjs')

function lines(out: string): Record<string, string> {
  return Object.fromEntries(out.trim().split('\n').map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]))
}

describe('the guide: a login-API site moved to OAuth and applications/my', () => {
  let stack: Stack
  let alice: { id: string; password: string }
  let app: { consumer_key: string; consumer_secret: string }

  beforeAll(async () => {
    stack = await startStack()
    alice = await stack.addUser('alice', 'Alice')
    app = (await stack.admin<typeof app>('POST', '/admin/apps', { name: 'Former login-API site', owner: 'alice', scopes: ['read_public'], callback: 'https://site.example/login/callback' })).body
  })
  afterAll(() => stack?.close())

  it('is shown on /developers#login-api, with the deployment URL', async () => {
    const page = await (await fetch(`${stack.url}/developers`)).text()
    expect(page).toContain('id="login-api"')
    expect(page).toContain('data-file="login-api-site.mjs"')
    expect(page).toContain(`KIGO=${stack.url}`)
    expect(page).toContain('id="login-api-oidc"')
  })

  it('signs a visitor in and prints name, image_url and thumbnail_url', async () => {
    const env = { ...process.env, KIGO: stack.url, CONSUMER_KEY: app.consumer_key, CONSUMER_SECRET: app.consumer_secret, CALLBACK: 'https://site.example/login/callback' }
    const started = lines((await run(process.execPath, [sample, 'start'], { env })).stdout)
    expect(started.authorize).toBe(`${stack.url}/oauth/authorize?oauth_token=${started.oauth_token}`)

    const web = new WebClient(stack.url)
    const path = started.authorize!.slice(stack.url.length)
    const login = await web.get(path)
    await web.post('/account/login', { csrf_token: csrfOf(login.text), next: hiddenField(login.text, 'next')!, username: alice.id, password: alice.password })
    const consent = await web.get(path)
    const allowed = await web.post('/oauth/authorize', { csrf_token: csrfOf(consent.text), oauth_token: hiddenField(consent.text, 'oauth_token')!, decision: 'allow' })
    expect(allowed.status).toBe(303)
    const back = new URL(allowed.headers.get('location')!)
    expect(back.origin + back.pathname).toBe('https://site.example/login/callback')

    const finished = lines((await run(process.execPath, [sample, 'finish'], { env: { ...env, REQUEST_TOKEN: back.searchParams.get('oauth_token')!, REQUEST_SECRET: started.oauth_token_secret!, VERIFIER: back.searchParams.get('oauth_verifier')! } })).stdout)
    expect(finished).toEqual({ name: 'alice', image_url: `${stack.url}/users/alice/profile.png`, thumbnail_url: `${stack.url}/users/alice/profile_s.png` })
    for (const url of [finished.image_url!, finished.thumbnail_url!]) {
      const icon = await fetch(url)
      expect(icon.status).toBe(200)
      expect(icon.headers.get('content-type')).toBe('image/png')
    }
  })

  it('keeps the sample free of anything but the deployment URL to change', () => {
    expect(readFileSync(sample, 'utf8')).toContain("process.env.KIGO ?? 'http://localhost:8080'")
  })
})
