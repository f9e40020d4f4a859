// What a registration may hold (docs/security.md#registrations), over HTTP from the
// account pages an ordinary user registers on: one rule for every URL of every kind of
// registration (an application's callback and home page, a login site's, an OpenID
// Connect client's redirect URIs), and names without invisible formatting characters, so
// that no consent page shows a name that reads as another.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { gatewayApp, type GatewayApp } from '../helpers/gateway-app.js'
import { WebClient, csrfOf } from './provider/helpers.js'

let stack: GatewayApp
let web: WebClient
let csrf: string

beforeAll(async () => {
  stack = await gatewayApp()
  const user = await stack.addUser('sora')
  web = new WebClient(stack.url, stack.fetch)
  expect((await web.signIn('/account/login', user.id, user.password)).status).toBe(303)
  csrf = csrfOf((await web.get('/account')).text)
}, 60_000)

afterAll(async () => {
  await stack?.close()
})

/** Each kind's registration form, with `name` and `url` in the field that kind registers. */
const kinds: Array<{ kind: string; path: string; form: (name: string, url: string, where: 'callback' | 'home') => Record<string, string | string[]> }> = [
  { kind: 'application', path: '/account/apps', form: (name, url, where) => ({ name, scope: 'read_public', callback: where === 'callback' ? url : '', home_url: where === 'home' ? url : '' }) },
  { kind: 'login site', path: '/account/sites', form: (name, url, where) => ({ name, callback: where === 'callback' ? url : 'https://site.example/cb', home_url: where === 'home' ? url : '' }) },
  { kind: 'OpenID Connect client', path: '/account/oidc-clients', form: (name, url) => ({ name, type: 'confidential', redirect_uris: url }) },
]

const registered = async () => {
  const [apps, sites, clients] = await Promise.all([
    stack.admin<{ apps: Array<{ name: string }> }>('GET', '/admin/apps'),
    stack.admin<{ sites: Array<{ name: string }> }>('GET', '/admin/sites'),
    stack.admin<{ clients: Array<{ name: string }> }>('GET', '/admin/oidc-clients'),
  ])
  return JSON.stringify([apps.body, sites.body, clients.body])
}

describe('every kind of registration', () => {
  it('refuses a URL with a fragment, even an empty one, and the spellings parsers read apart, for every URL it holds', async () => {
    const before = await registered()
    for (const { kind, path, form } of kinds) {
      for (const where of ['callback', 'home'] as const) {
        for (const url of ['https://good.example/#', 'https://good.example/cb#x', 'https://good.example\\@evil.example/', 'https://user@good.example/', 'https://good.example%09/']) {
          const res = await web.post(path, { csrf_token: csrf, ...form('Fine name', url, where) })
          expect(res.status, `${kind} ${where} ${url}`).toBe(400)
        }
      }
    }
    expect(await registered()).toBe(before)
  })

  it('refuses a name holding a bidi override or isolate, a zero-width or other invisible format character', async () => {
    const before = await registered()
    for (const { kind, path, form } of kinds) {
      for (const name of ['Photos\u202Eelgoog', 'Good\u2066 App\u2069', 'Go\u200Bod', 'Go\uFEFFod', 'Good\u00ADApp', 'Good\u2028App']) {
        const res = await web.post(path, { csrf_token: csrf, ...form(name, 'https://good.example/cb', 'callback') })
        expect(res.status, `${kind} ${JSON.stringify(name)}`).toBe(400)
        expect(res.text, kind).toContain('invisible formatting characters')
      }
    }
    expect(await registered()).toBe(before)
  })

  it('still takes a plain URL and a name with an emoji sequence', async () => {
    for (const { kind, path, form } of kinds) {
      const res = await web.post(path, { csrf_token: csrf, ...form(`Family \u{1F468}\u200D\u{1F469}\u200D\u{1F467} ${kind}`, 'https://good.example/cb', 'callback') })
      expect(res.status, kind).toBeLessThan(400)
    }
  })
})
