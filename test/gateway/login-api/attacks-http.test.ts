// The login API from an attacker's side, over HTTP against a running gateway and core
// (docs/security.md#login-api): the separator-less signature, re-split.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../../helpers/stack.js'
import { WebClient, callbackOf, exchangePath, sign, signInPath, signInThrough, type Site } from './helpers.js'

let stack: Stack
let alice: { id: string; password: string }
let site: Site

async function get(path: string) {
  const res = await fetch(stack.url + path, { redirect: 'manual' })
  return { status: res.status, headers: res.headers, text: await res.text() }
}

async function certFor(s: Site): Promise<string> {
  const { answer } = await signInThrough(new WebClient(stack.url), signInPath(s), alice)
  expect(answer.status).toBe(302)
  return callbackOf(answer.headers.get('location'), s.callback).get('cert')!
}

beforeAll(async () => {
  stack = await startStack()
  alice = await stack.addUser('alice', 'Alice')
  const r = await stack.admin<Site>('POST', '/admin/sites', { name: "Alice's blog", owner: 'alice', callback: 'https://blog.example/cb' })
  expect(r.status).toBe(201)
  site = r.body
})

afterAll(async () => {
  await stack?.close()
})

describe('the separator-less api_sig', () => {
  it('an exchange re-split (zz=ab signed, zza=b sent) or carrying any parameter it does not define is refused, and the cert stays usable', async () => {
    const cert = await certFor(site)
    // Signed over api_key, cert, zz=ab; sent with zza=b: the same signature.
    const sig = sign(site.secret, { api_key: site.api_key, cert, zz: 'ab' })
    expect(sig).toBe(sign(site.secret, { api_key: site.api_key, cert, zza: 'b' }))
    for (const [path, format] of [
      [`/api/auth.json?api_key=${site.api_key}&cert=${cert}&zza=b&api_sig=${sig}`, 'json'],
      [`/api/auth.xml?api_key=${site.api_key}&cert=${cert}&zz=ab&api_sig=${sig}`, 'xml'],
      [`/api/auth.json?api_key=${site.api_key}&cert=${cert}&amp;zza=b&api_sig=${sig}`, 'json'],
    ] as const) {
      const r = await get(path)
      expect(r.status, path).toBe(400)
      if (format === 'json') expect(JSON.parse(r.text), path).toEqual({ has_error: true, error: { message: expect.stringMatching(/takes api_key, cert, api_sig only; zza? is not one of them/) } })
      else expect(r.text).toMatch(/<has_error>1<\/has_error><error><message>[^<]*takes api_key, cert, api_sig only/)
    }
    // The exchange as the site sends it still answers, once.
    const ok = await get(exchangePath(site, cert))
    expect(ok.status).toBe(200)
    expect(JSON.parse(ok.text).user.name).toBe('alice')
  })

  it('a parameter with an empty name, which the signature skipped, is refused on the exchange and on the sign-in', async () => {
    const cert = await certFor(site)
    const sig = sign(site.secret, { api_key: site.api_key, cert })
    for (const path of [`/api/auth.json?api_key=${site.api_key}&cert=${cert}&=x&api_sig=${sig}`, `/api/auth.json?api_key=${site.api_key}&cert=${cert}&amp;=x&api_sig=${sig}`]) {
      const r = await get(path)
      expect(r.status, path).toBe(400)
      expect(JSON.parse(r.text).error.message, path).toMatch(/has no name/)
    }
    const signIn = await get(`/auth?api_key=${site.api_key}&=evil&api_sig=${sign(site.secret, { api_key: site.api_key })}`)
    expect(signIn.status).toBe(400)
    expect(signIn.headers.get('location')).toBeNull()
    expect(signIn.text).toMatch(/has no name/)
    expect((await get(exchangePath(site, cert))).status).toBe(200)
  })

  it('the sign-in still carries a site’s own parameters back to it', async () => {
    const { answer } = await signInThrough(new WebClient(stack.url), signInPath(site, { back: '/entries/1', lang: 'en' }), alice)
    expect(answer.status).toBe(302)
    const back = callbackOf(answer.headers.get('location'), site.callback)
    expect(back.get('back')).toBe('/entries/1')
    expect(back.get('lang')).toBe('en')
  })
})
