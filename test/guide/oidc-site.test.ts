// The developer guide's OpenID Connect sample (examples/guide/oidc-site.mjs), run as a
// developer would run it against a running gateway: a visitor goes to the site's /login,
// signs in on kigo's pages and allows, and the site shows who signed in; a callback whose
// state is not the site's is refused by the site. The guide page shows that very file.
import { spawn, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort, startStack, type Stack } from '../helpers/stack.js'
import { browse, registerClient } from '../gateway/oidc/helpers.js'

const sample = join(process.cwd(), 'examples', 'guide', 'oidc-site.mjs')

describe('the OpenID Connect sample site', () => {
  let stack: Stack
  let site: ChildProcess
  let siteUrl: string
  let alice: { id: string; password: string }

  beforeAll(async () => {
    stack = await startStack()
    alice = await stack.addUser('alice', 'Alice')
    const port = await freePort()
    siteUrl = `http://127.0.0.1:${port}`
    const client = await registerClient(stack, { name: 'My site', owner: 'alice', redirect_uris: [`${siteUrl}/callback`] })
    site = spawn(process.execPath, [sample], { env: { ...process.env, KIGO: stack.url, CLIENT_ID: client.client_id, CLIENT_SECRET: client.client_secret!, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] })
    await new Promise<void>((resolve, reject) => {
      let err = ''
      site.stdout!.on('data', (d: Buffer) => d.toString().includes('listening') && resolve())
      site.stderr!.on('data', (d: Buffer) => (err += d.toString()))
      site.on('exit', (code) => reject(new Error(`the sample exited with ${code}: ${err}`)))
    })
  })

  afterAll(async () => {
    site?.kill()
    await stack?.close()
  })

  async function startAtSite(): Promise<{ to: URL; cookie: string }> {
    const res = await fetch(`${siteUrl}/login`, { redirect: 'manual' })
    expect(res.status).toBe(302)
    return { to: new URL(res.headers.get('location')!), cookie: res.headers.get('set-cookie')!.split(';')[0]! }
  }

  it('signs Alice in: kigo login, consent, and the site shows her name and user ID', async () => {
    const { to, cookie } = await startAtSite()
    expect(to.origin).toBe(stack.url)
    expect(to.searchParams.get('code_challenge_method')).toBe('S256')
    const { callback } = await browse(to, `${siteUrl}/callback`, alice)
    const done = await fetch(callback, { headers: { cookie } })
    const text = await done.text()
    expect(done.status, text).toBe(200)
    expect(text).toContain('Signed in as <strong>Alice</strong> (<span id="sub">alice</span>)')
    expect(text).toContain(`${stack.url}/users/alice/profile.png`)
  })

  it('refuses a callback carrying another state', async () => {
    const { to, cookie } = await startAtSite()
    const { callback } = await browse(to, `${siteUrl}/callback`, alice)
    callback.searchParams.set('state', 'forged')
    const done = await fetch(callback, { headers: { cookie } })
    expect(done.status).toBe(400)
    expect(await done.text()).toMatch(/Sign-in failed: .*state/)
  })

  it('is shown on the guide page as the file that ran, with this deployment\'s URL', async () => {
    const guide = await (await fetch(`${stack.url}/developers`)).text()
    expect(guide).toContain('id="oidc"')
    expect(guide).toContain('data-file="oidc-site.mjs"')
    expect(guide).toContain('oidc.authorizationCodeGrant')
    expect(guide).toContain(`${stack.url}/.well-known/openid-configuration`)
  })
})
