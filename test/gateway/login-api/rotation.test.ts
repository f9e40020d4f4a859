// A login site's secret rotated with an overlap, over HTTP (docs/login-api.md#rotating-the-secret):
// on the account pages (the confirmation asks how long the old secret keeps working, the
// answer shows the new secret once with a copy button) and through the operator API. The
// old secret keeps signing sign-ins and exchanges until the overlap ends on the gateway's
// clock, or stops at once with none; a bad overlap is refused and changes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { gatewayApp, type GatewayApp } from '../../helpers/gateway-app.js'
import { callbackOf, codeOf, csrfOf, exchangePath, signInPath, signInThrough, type Site, WebClient } from './helpers.js'

let stack: GatewayApp
let clock = Date.parse('2027-05-10T08:00:00Z')
let carol: { id: string; password: string }

beforeAll(async () => {
  stack = await gatewayApp({ now: () => clock })
  carol = await stack.addUser('carol', 'Carol')
})

afterAll(async () => {
  await stack?.close()
})


async function get(path: string) {
  const res = await stack.fetch(stack.url + path, { redirect: 'manual' })
  return { status: res.status, text: await res.text() }
}

/** A whole sign-in at `s` and the exchange of its cert, both signed with `s.secret`: the user the site learns, or the failing status. */
async function signedInWith(s: Pick<Site, 'api_key' | 'secret' | 'callback'>): Promise<string | number> {
  const start = await get(signInPath(s))
  if (start.status !== 200) return start.status
  const { answer } = await signInThrough(new WebClient(stack.url, stack.fetch), signInPath(s), carol)
  expect(answer.status).toBe(302)
  const cert = callbackOf(answer.headers.get('location'), s.callback).get('cert')!
  const exchanged = await get(exchangePath(s, cert))
  return exchanged.status === 200 ? (JSON.parse(exchanged.text) as { user: { name: string } }).user.name : exchanged.status
}

/** The exchange of an unknown cert signed with `secret`: 400 once the signature holds, 401 when it does not. */
const exchangeStatus = async (s: Pick<Site, 'api_key'>, secret: string) => (await get(exchangePath({ api_key: s.api_key, secret }, 'no-such-cert'))).status

describe('on the account pages', () => {
  it('shows the secret once with a copy button, on the page the post redirects to; a reload shows none and makes none; a rotation with 1 hour keeps the old secret working until the hour is over', async () => {
    const web = new WebClient(stack.url, stack.fetch)
    expect((await web.signIn('/account/login', carol.id, carol.password)).status).toBe(303)
    const sites = await web.get('/account/sites')
    const created = await web.postAndFollow('/account/sites', { csrf_token: csrfOf(sites.text), name: 'Carol’s shop', callback: 'https://shop.example/cb' })
    expect(created.posted).toBe(303)
    expect(created.status).toBe(200)
    expect(created.text).toContain('data-copy="secret"')
    expect(created.text).toContain('data-copy="api_key"')
    expect(created.headers.get('content-security-policy')).toMatch(/script-src 'sha256-[A-Za-z0-9+/]+=*'/)
    const site = { api_key: codeOf(created.text, 'api_key')!, secret: codeOf(created.text, 'secret')!, callback: 'https://shop.example/cb' }
    expect(created.location).toBe(`/account/sites/${site.api_key}/new-secret`)
    expect((await web.get('/account/sites')).text).not.toContain(site.secret)
    // The page opened again: the site without its secret, and still one site.
    const reload = await web.get(created.location!)
    expect(reload.status).toBe(200)
    expect(codeOf(reload.text, 'secret')).toBeUndefined()
    expect(codeOf(reload.text, 'api_key')).toBe(site.api_key)
    expect(reload.text).toContain('The secret was shown once, on the page after it was made')
    expect((await stack.admin<{ sites: Array<{ name: string }> }>('GET', '/admin/sites?owner=carol')).body.sites.filter((s) => s.name === 'Carol’s shop')).toHaveLength(1)

    const ask = await web.post(`/account/sites/${site.api_key}/rotate-secret`, { csrf_token: csrfOf(sites.text) })
    expect(ask.text).toContain('<select id="choice_overlap" name="overlap">')
    const rotated = await web.postAndFollow(`/account/sites/${site.api_key}/rotate-secret`, { csrf_token: csrfOf(ask.text), confirm: 'yes', overlap: '3600' })
    expect(rotated.posted).toBe(303)
    expect(rotated.status).toBe(200)
    const fresh = { ...site, secret: codeOf(rotated.text, 'secret')! }
    expect(fresh.secret).not.toBe(site.secret)
    expect(rotated.text).toContain('data-copy="secret"')
    expect(rotated.text).toContain('keeps working until <time datetime="2027-05-10T09:00:00Z"')
    // A reload makes no third secret: the one the site runs with still works.
    expect(codeOf((await web.get(rotated.location!)).text, 'secret')).toBeUndefined()

    expect(await signedInWith(site)).toBe('carol')
    expect(await signedInWith(fresh)).toBe('carol')
    clock += 3599_000
    expect(await exchangeStatus(site, site.secret)).toBe(400)
    clock += 1000
    expect(await exchangeStatus(site, site.secret)).toBe(401)
    expect(await signedInWith(site)).toBe(400)
    expect(await signedInWith(fresh)).toBe('carol')

    const audit = await stack.admin<{ events: Array<{ action: string; after: unknown }> }>('GET', `/admin/audit?kind=site&target=${site.api_key}`)
    expect(audit.body.events[0]).toMatchObject({ action: 'site.rotate_secret', after: { overlap_seconds: 3600, previous_secret_until: '2027-05-10T09:00:00Z' } })
    expect(JSON.stringify(audit.body)).not.toContain(fresh.secret)

    // None: the old secret stops at once; a choice the page does not offer changes nothing.
    const refused = await web.post(`/account/sites/${site.api_key}/rotate-secret`, { csrf_token: csrfOf(ask.text), confirm: 'yes', overlap: '120' })
    expect(refused.status).toBe(400)
    expect(codeOf(refused.text, 'secret')).toBeUndefined()
    expect(await exchangeStatus(site, fresh.secret)).toBe(400)
    const none = await web.postAndFollow(`/account/sites/${site.api_key}/rotate-secret`, { csrf_token: csrfOf(ask.text), confirm: 'yes', overlap: '0' })
    expect(none.text).toContain('The secret it replaced stopped working at once.')
    expect(await exchangeStatus(site, fresh.secret)).toBe(401)
    expect(await exchangeStatus(site, codeOf(none.text, 'secret')!)).toBe(400)
  })
})

describe('on the operator API', () => {
  it('takes overlap_seconds (0, 3600, 86400 or 604800); anything else is a 400 that changes nothing', async () => {
    const r = await stack.admin<Site>('POST', '/admin/sites', { name: 'Operated', owner: 'carol', callback: 'https://operated.example/cb' })
    const site = r.body
    for (const body of [{ overlap_seconds: 7200 }, { overlap_seconds: '86400' }, { overlap_seconds: -1 }, { secret: 'mine' }]) {
      const res = await stack.admin<{ error: { code: string } }>('POST', `/admin/sites/${site.api_key}/rotate-secret`, body)
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(res.body.error.code).toBe('invalid_parameter')
    }
    expect(await exchangeStatus(site, site.secret)).toBe(400)

    const rotated = await stack.admin<{ api_key: string; secret: string; overlap_seconds: number; previous_secret_until: string | null }>('POST', `/admin/sites/${site.api_key}/rotate-secret`, { overlap_seconds: 604800 })
    expect(rotated.status).toBe(200)
    expect(rotated.body).toMatchObject({ api_key: site.api_key, overlap_seconds: 604800 })
    expect(Date.parse(rotated.body.previous_secret_until!)).toBe(Math.floor(clock / 1000) * 1000 + 604_800_000)
    expect(await exchangeStatus(site, site.secret)).toBe(400)
    expect(await exchangeStatus(site, rotated.body.secret)).toBe(400)
    clock += 604_800_000
    expect(await exchangeStatus(site, site.secret)).toBe(401)
    expect(await exchangeStatus(site, rotated.body.secret)).toBe(400)
  })
})
