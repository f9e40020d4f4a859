// The legacy login API over HTTP against a running kigo (docs/login-api.md): sites on the
// operator API, the sign-in at /auth (login form, consent, 302 with cert), the exchange at
// /api/auth.{json,xml}, every kind of bad input, the two icons, and login_api as a legacy
// method (metrics, usage, policy, audit).
import escapeHtml from 'escape-html'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../../helpers/stack.js'
import { callbackOf, codeOf, exchangePath, sign, signInPath, signInThrough, type Site, WebClient } from './helpers.js'

let stack: Stack
let clock = Date.now()
let alice: { id: string; password: string }
let bob: { id: string; password: string }
let site: Site
let other: Site

async function addSite(name: string, owner: string, callback: string): Promise<Site> {
  const r = await stack.admin<Site & { owner: string }>('POST', '/admin/sites', { name, owner, callback })
  expect(r.status).toBe(201)
  return r.body
}

async function get(path: string) {
  const res = await fetch(stack.url + path, { redirect: 'manual' })
  return { status: res.status, headers: res.headers, text: await res.text() }
}

/** A whole sign-in as `user` at `s`; the cert the site's callback receives. */
async function certFor(s: Site, user = alice, extra: Record<string, string> = {}): Promise<string> {
  const { answer } = await signInThrough(new WebClient(stack.url), signInPath(s, extra), user)
  expect(answer.status).toBe(302)
  return callbackOf(answer.headers.get('location'), s.callback).get('cert')!
}

beforeAll(async () => {
  stack = await startStack({ now: () => clock, overrides: { migration: { usageFlushMs: 100, policyRefreshMs: 100 } } })
  alice = await stack.addUser('alice', 'Alice')
  bob = await stack.addUser('bob', 'Bob')
  site = await addSite("Alice's blog", 'alice', 'https://blog.example/login/callback?from=kigo')
  other = await addSite('Other site', 'bob', 'https://other.example/cb')
})

afterAll(async () => {
  await stack?.close()
})

describe('sites on the operator API', () => {
  it('gives a URL-safe api_key and secret, shows the secret once, lists without it', async () => {
    expect(site.api_key).toMatch(/^[A-Za-z0-9_-]{16,}$/)
    expect(site.secret).toMatch(/^[A-Za-z0-9_-]{24,}$/)
    const list = await stack.admin<{ sites: Array<Record<string, unknown>> }>('GET', '/admin/sites')
    expect(list.status).toBe(200)
    expect(list.body.sites.map((s) => s.api_key)).toEqual(expect.arrayContaining([site.api_key, other.api_key]))
    expect(JSON.stringify(list.body)).not.toContain(site.secret)
    const one = await stack.admin<Record<string, unknown>>('GET', `/admin/sites/${site.api_key}`)
    expect(one.body).toMatchObject({ api_key: site.api_key, name: "Alice's blog", owner: 'alice', callback: site.callback })
    expect(JSON.stringify(one.body)).not.toContain(site.secret)
  })

  it('refuses bad input with a clear 4xx and registers nothing', async () => {
    const before = (await stack.admin<{ sites: unknown[] }>('GET', '/admin/sites')).body.sites.length
    const bad = [
      [{ name: 'x', owner: 'nobody', callback: 'https://x.example/' }, 404, /nobody/],
      [{ name: 'x', owner: 'alice', callback: 'javascript:alert(1)' }, 400, /callback/],
      [{ name: 'x', owner: 'alice' }, 400, /callback/],
      [{ name: '', owner: 'alice', callback: 'https://x.example/' }, 400, /name/],
      [{ name: 'x', owner: 'alice', callback: 'https://x.example/', secret: 'mine' }, 400, /unknown field "secret"/],
      [{ name: 7, owner: 'alice', callback: 'https://x.example/' }, 400, /"name" must be a string/],
      [{ name: 'x', owner: 'no one', callback: 'https://x.example/' }, 400, /"owner" must be a user ID/],
      [[{ name: 'x', owner: 'alice', callback: 'https://x.example/' }], 400, /must be a JSON object/],
    ] as const
    for (const [body, status, message] of bad) {
      const r = await stack.admin<{ error: { message: string } }>('POST', '/admin/sites', body)
      expect(r.status, JSON.stringify(body)).toBe(status)
      expect(r.body.error.message).toMatch(message)
    }
    expect((await stack.admin<{ sites: unknown[] }>('GET', '/admin/sites')).body.sites.length).toBe(before)
    expect((await stack.admin('GET', '/admin/sites/no-such-key-at-all')).status).toBe(404)
    for (const [method, path, body, message] of [
      ['PATCH', '/admin/sites/no-such-key-at-all', {}, /must give name, callback or home_page/],
      ['PATCH', '/admin/sites/no-such-key-at-all', { scopes: ['read'] }, /unknown field "scopes"/],
      ['PATCH', '/admin/sites/no-such-key-at-all', { home_page: 5 }, /"home_page"/],
      ['GET', '/admin/sites?owner=no%20one', undefined, /"owner" must be a user ID/],
      ['GET', '/admin/sites?owner=alice&owner=bob', undefined, /"owner" must be a string/],
    ] as const) {
      const r = await stack.admin<{ error: { code: string; message: string } }>(method, path, body)
      expect(r.status, `${method} ${path}`).toBe(400)
      expect(r.body.error.code).toBe('invalid_parameter')
      expect(r.body.error.message, `${method} ${path}`).toMatch(message)
    }
  })

  it('reserves the user ID "auth"', async () => {
    const r = await stack.admin<{ error: { message: string } }>('POST', '/admin/users', { id: 'Auth' })
    expect(r.status).toBe(400)
    expect(r.body.error.message).toMatch(/reserved/)
  })
})

describe('sign-in at /auth', () => {
  it('shows the account login form, then a consent page naming the site, then 302s to the callback with cert and the extra parameters', async () => {
    const web = new WebClient(stack.url)
    const path = signInPath(site, { back: '/entries/1?x=1&y=2', lang: 'ja' })
    const first = await web.get(path)
    expect(first.status).toBe(200)
    expect(first.text).toContain('name="password"')
    expect(first.text).toContain("Alice&#39;s blog")
    const { consent, answer } = await signInThrough(web, path, alice)
    expect(consent.text).toContain('Sign in to <strong>Alice&#39;s blog</strong>')
    expect(consent.text).toMatch(/<button[^>]*value="allow"[^>]*>Allow<\/button>/)
    expect(consent.text).toMatch(/<button[^>]*value="deny"[^>]*>Deny<\/button>/)
    expect(answer.status).toBe(302)
    const q = callbackOf(answer.headers.get('location'), 'https://blog.example/login/callback?')
    expect(q.get('from')).toBe('kigo')
    expect(q.get('cert')).toMatch(/^[A-Za-z0-9_-]{22,}$/)
    expect(q.get('back')).toBe('/entries/1?x=1&y=2')
    expect(q.get('lang')).toBe('ja')
    expect(q.has('api_key')).toBe(false)
    expect(q.has('api_sig')).toBe(false)
  })

  it('needs the session CSRF token on the consent form', async () => {
    const web = new WebClient(stack.url)
    const { consent } = await signInThrough(web, signInPath(site), alice, 'deny')
    const forged = await web.post('/auth', { csrf_token: 'x', request: new URL('http://h' + signInPath(site)).search.slice(1), decision: 'allow' })
    expect(forged.status).toBe(403)
    expect(forged.headers.get('location')).toBeNull()
    expect(consent.status).toBe(200)
  })

  it('Deny says so and links back to the site, with no cert', async () => {
    const { answer } = await signInThrough(new WebClient(stack.url), signInPath(site), alice, 'deny')
    expect(answer.status).toBe(200)
    expect(answer.headers.get('location')).toBeNull()
    expect(answer.text).toContain('You did not sign in to Alice&#39;s blog')
    expect(answer.text).toContain('href="https://blog.example/"')
  })

  it('answers a missing, unknown or tampered api_key or api_sig with an HTML 400 page and never a redirect', async () => {
    const good = new URL('http://h' + signInPath(site, { back: 'a' }))
    const cases: Array<[string, RegExp]> = [
      ['/auth', /Missing api_key/],
      [`/auth?api_key=${site.api_key}`, /Missing api_sig/],
      [`/auth?api_key=nope-nope-nope-nope&api_sig=${sign('x', { api_key: 'nope-nope-nope-nope' })}`, /Unknown site/],
      [`/auth?api_key=${site.api_key}&api_sig=${'0'.repeat(32)}`, /Bad signature/],
      [good.pathname + good.search.replace('back=a', 'back=b'), /Bad signature/],
      [good.pathname + good.search + '&more=1', /Bad signature/],
      [good.pathname + good.search.replace(/api_sig=([0-9a-f]+)/, (_, s: string) => `api_sig=${s.toUpperCase()}`), /Bad signature/],
      [good.pathname + good.search + '&back=a', /more than once/],
      [`/auth?api_key=${site.api_key}&api_sig=${sign(other.secret, { api_key: site.api_key })}`, /Bad signature/],
    ]
    for (const [path, message] of cases) {
      const r = await get(path)
      expect(r.status, path).toBe(400)
      expect(r.headers.get('content-type')).toMatch(/^text\/html/)
      expect(r.headers.get('location')).toBeNull()
      expect(r.text, path).toMatch(message)
    }
  })

  it('checks the signature again on the consent post (a tampered request is refused, no cert)', async () => {
    const web = new WebClient(stack.url)
    const { consent } = await signInThrough(web, signInPath(site, { back: 'a' }), alice, 'deny')
    const { csrfOf, hiddenField } = await import('./helpers.js')
    const request = hiddenField(consent.text, 'request')!.replace('back=a', 'back=evil')
    const r = await web.post('/auth', { csrf_token: csrfOf(consent.text), request, decision: 'allow' })
    expect(r.status).toBe(400)
    expect(r.headers.get('location')).toBeNull()
  })
})

describe('the exchange at /api/auth.{json,xml}', () => {
  it('answers who signed in, in JSON, once', async () => {
    const cert = await certFor(site)
    const r = await get(exchangePath(site, cert))
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toMatch(/^application\/json/)
    expect(JSON.parse(r.text)).toEqual({
      has_error: false,
      user: { name: 'alice', image_url: `${stack.url}/users/alice/profile.png`, thumbnail_url: `${stack.url}/users/alice/profile_s.png` },
    })
    const again = await get(exchangePath(site, cert))
    expect(again.status).toBe(400)
    expect(JSON.parse(again.text)).toEqual({ has_error: true, error: { message: expect.stringMatching(/already exchanged/) } })
  })

  it('answers in XML at .xml', async () => {
    const cert = await certFor(site, bob)
    const r = await get(exchangePath(site, cert, 'xml'))
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toMatch(/^application\/xml/)
    expect(r.text).toBe(`<?xml version="1.0" encoding="UTF-8"?><response><has_error>0</has_error><user><name>bob</name><image_url>${stack.url}/users/bob/profile.png</image_url><thumbnail_url>${stack.url}/users/bob/profile_s.png</thumbnail_url></user></response>`)
    const again = await get(exchangePath(site, cert, 'xml'))
    expect(again.status).toBe(400)
    expect(again.text).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?><response><has_error>1<\/has_error><error><message>[^<]+<\/message><\/error><\/response>$/)
  })

  it('reads amp;cert and amp;api_sig as cert and api_sig (a client writing &amp; separators)', async () => {
    const cert = await certFor(site)
    const sig = sign(site.secret, { api_key: site.api_key, cert })
    const r = await get(`/api/auth.json?api_key=${site.api_key}&amp;cert=${cert}&amp;api_sig=${sig}`)
    expect(r.status).toBe(200)
    expect(JSON.parse(r.text).user.name).toBe('alice')
    // The sign-in reads them alike.
    const params = { api_key: site.api_key, back: 'x' }
    const signIn = await get(`/auth?api_key=${site.api_key}&amp;back=x&amp;api_sig=${sign(site.secret, params)}`)
    expect(signIn.status).toBe(200)
    // One spelling per name: cert beside amp;cert is refused.
    const both = await get(`/api/auth.json?api_key=${site.api_key}&cert=${cert}&amp;cert=${cert}&api_sig=${sig}`)
    expect(both.status).toBe(400)
  })

  it('refuses a cert issued to another site, and that does not use it up', async () => {
    const cert = await certFor(site)
    const foreign = await get(exchangePath(other, cert))
    expect(foreign.status).toBe(400)
    expect(JSON.parse(foreign.text)).toEqual({ has_error: true, error: { message: expect.stringMatching(/another site/) } })
    expect((await get(exchangePath(site, cert))).status).toBe(200)
  })

  it('refuses an expired cert (10 minutes)', async () => {
    const cert = await certFor(site)
    clock += 10 * 60 * 1000 + 1000
    try {
      const r = await get(exchangePath(site, cert, 'xml'))
      expect(r.status).toBe(400)
      expect(r.text).toMatch(/<has_error>1<\/has_error><error><message>[^<]*expired/)
    } finally {
      clock -= 10 * 60 * 1000 + 1000
    }
  })

  it('answers a missing, unknown or tampered key, signature or cert in the path format', async () => {
    const cert = await certFor(site)
    const cases: Array<[string, number, RegExp]> = [
      ['/api/auth.json', 400, /api_key/],
      [`/api/auth.json?api_key=${site.api_key}&api_sig=x`, 400, /cert/],
      [`/api/auth.json?api_key=${site.api_key}&cert=${cert}`, 400, /api_sig/],
      [`/api/auth.json?api_key=nope-nope-nope-nope&cert=${cert}&api_sig=${sign('x', { api_key: 'nope-nope-nope-nope', cert })}`, 401, /Unknown site/],
      [`/api/auth.json?api_key=${site.api_key}&cert=${cert}&api_sig=${sign('wrong', { api_key: site.api_key, cert })}`, 401, /Bad signature/],
      [exchangePath(site, 'never-issued-cert-value-xyz'), 400, /Unknown cert/],
    ]
    for (const [path, status, message] of cases) {
      const r = await get(path)
      expect(r.status, path).toBe(status)
      const body = JSON.parse(r.text)
      expect(body.has_error).toBe(true)
      expect(body.error.message).toMatch(message)
    }
    const xml = await get(`/api/auth.xml?api_key=${site.api_key}&cert=${cert}&api_sig=bad`)
    expect(xml.status).toBe(401)
    expect(xml.text).toContain('<has_error>1</has_error><error><message>Bad signature')
    // None of them used the cert up.
    expect((await get(exchangePath(site, cert))).status).toBe(200)
  })

  it('is served by the gateway: /api/auth without a format, and other methods, are not the exchange', async () => {
    expect((await get('/api/auth')).status).toBe(404)
    const post = await fetch(`${stack.url}${exchangePath(site, 'x')}`, { method: 'POST' })
    expect(post.status).toBeGreaterThanOrEqual(400)
    expect(post.status).toBeLessThan(500)
  })
})

describe('a site rotated or deleted', () => {
  it('rotating the secret makes the old one fail; deleting the site makes its key and its certs fail; both audited', async () => {
    const s = await addSite('Short-lived', 'alice', 'https://short.example/cb')
    const rotated = await stack.admin<{ api_key: string; secret: string }>('POST', `/admin/sites/${s.api_key}/rotate-secret`, { overlap_seconds: 0 })
    expect(rotated.status).toBe(200)
    expect(rotated.body.secret).not.toBe(s.secret)
    expect((await get(signInPath(s))).status).toBe(400)
    const fresh = { ...s, secret: rotated.body.secret }
    expect((await get(signInPath(fresh))).status).toBe(200)
    const cert = await certFor(fresh)
    const deleted = await stack.admin('DELETE', `/admin/sites/${s.api_key}`)
    expect(deleted.status).toBe(200)
    const signIn = await get(signInPath(fresh))
    expect(signIn.status).toBe(400)
    expect(signIn.text).toMatch(/Unknown site/)
    const exchange = await get(exchangePath(fresh, cert))
    expect(exchange.status).toBe(401)
    expect(JSON.parse(exchange.text).error.message).toMatch(/Unknown site/)
    const audit = await stack.admin<{ events: Array<{ action: string; target: string; before: unknown; after: unknown }> }>('GET', `/admin/audit?kind=site&target=${s.api_key}`)
    expect(audit.body.events.map((e) => e.action).sort()).toEqual(['site.create', 'site.delete', 'site.rotate_secret'])
    expect(JSON.stringify(audit.body)).not.toContain(s.secret)
    expect(JSON.stringify(audit.body)).not.toContain(rotated.body.secret)
  })
})

describe('the two icons', () => {
  const pngSize = (b: Buffer) => [b.readUInt32BE(16), b.readUInt32BE(20)]
  it('serves profile.png and profile_s.png, a smaller rendition of the same icon, through the gateway', async () => {
    const big = await fetch(`${stack.url}/users/alice/profile.png`)
    const small = await fetch(`${stack.url}/users/alice/profile_s.png`)
    expect(big.status).toBe(200)
    expect(small.status).toBe(200)
    expect(small.headers.get('content-type')).toBe('image/png')
    const [b, s] = [Buffer.from(await big.arrayBuffer()), Buffer.from(await small.arrayBuffer())]
    expect(s.subarray(1, 4).toString()).toBe('PNG')
    const [bw] = pngSize(b)
    const [sw, sh] = pngSize(s)
    expect(sw).toBe(sh)
    expect(sw).toBeLessThan(bw!)
    expect((await fetch(`${stack.url}/users/bob/profile_s.png`).then((r) => r.arrayBuffer())).byteLength).toBeGreaterThan(0)
    expect(Buffer.from(await (await fetch(`${stack.url}/users/bob/profile_s.png`)).arrayBuffer()).equals(s)).toBe(false)
  })
})

describe('login_api as a legacy method', () => {
  const setPolicy = async (policy: Record<string, unknown>) => {
    const r = await stack.admin('PUT', '/admin/policy', { login_api: policy })
    expect(r.status).toBe(200)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  afterAll(async () => {
    await stack.admin('PUT', '/admin/policy', { login_api: { state: 'allow' } })
  })

  it('is counted in kigo_auth_requests_total{method="login_api"} and in the usage report by user and site', async () => {
    const cert = await certFor(site, bob)
    expect((await get(exchangePath(site, cert))).status).toBe(200)
    expect((await get(`/auth?api_key=${site.api_key}&api_sig=${'0'.repeat(32)}`)).status).toBe(400)
    const metrics = await (await fetch(`${stack.adminUrl}/metrics`)).text()
    expect(metrics).toMatch(/kigo_auth_requests_total\{method="login_api",outcome="ok",route="auth"\} [1-9]/)
    expect(metrics).toMatch(/kigo_auth_requests_total\{method="login_api",outcome="ok",route="api\/auth"\} [1-9]/)
    expect(metrics).toMatch(/kigo_auth_requests_total\{method="login_api",outcome="bad_signature",route="auth"\} [1-9]/)
    // The report flushes the counts before it answers.
    const rows = (await stack.admin<{ records: Array<{ method: string; user: string; client: string; accepted: number }> }>('GET', '/admin/usage?method=login_api')).body.records
    expect(rows).toEqual(expect.arrayContaining([expect.objectContaining({ method: 'login_api', user: 'bob', client: "Alice's blog" })]))
    expect(rows.every((r) => r.method === 'login_api')).toBe(true)
  })

  it('deprecate: the exchange carries Deprecation, Sunset and Link; the consent page a notice', async () => {
    await setPolicy({ state: 'deprecate', sunset: '2099-01-01T00:00:00Z' })
    const web = new WebClient(stack.url)
    const { consent, answer } = await signInThrough(web, signInPath(site), alice)
    expect(consent.text).toContain('id="deprecation"')
    expect(consent.text).toMatch(/being retired/)
    const r = await get(exchangePath(site, callbackOf(answer.headers.get('location'), site.callback).get('cert')!))
    expect(r.status).toBe(200)
    expect(r.headers.get('deprecation')).toMatch(/^@\d+$/)
    expect(r.headers.get('sunset')).toBe('Thu, 01 Jan 2099 00:00:00 GMT')
    expect(r.headers.get('link')).toMatch(/rel="deprecation"/)
  })

  it('deny: the sign-in and the exchange are refused with the guide link; an exception lets one user through', async () => {
    const cert = await certFor(site)
    await setPolicy({ state: 'deny' })
    const page = await get(signInPath(site))
    expect(page.status).toBe(403)
    expect(page.headers.get('location')).toBeNull()
    // The visitor reads it: the site by name, the way back to it, and nothing only the site's owner can act on.
    expect(page.text).toContain(`<h1>${escapeHtml(site.name)} can no longer sign you in with kigo</h1>`)
    expect(page.text).toContain(`href="${new URL(site.callback).origin}/"`)
    expect(page.text).toContain(`Back to ${escapeHtml(site.name)}`)
    const main = page.text.slice(page.text.indexOf('<main'))
    expect(main).not.toContain('/migration')
    expect(main).not.toMatch(/OAuth|OpenID|migration guide/i)
    const r = await get(exchangePath(site, cert))
    expect(r.status).toBe(403)
    expect(JSON.parse(r.text)).toEqual({ has_error: true, error: { message: expect.stringMatching(/retired.*\/migration/) } })
    await setPolicy({ state: 'deny', exceptions: [{ user: 'bob', until: '2099-01-01T00:00:00Z' }] })
    const bobCert = await certFor(site, bob)
    expect((await get(exchangePath(site, bobCert))).status).toBe(200)
    // With a user exception the login form is shown; alice, who has none, is refused after it.
    const web = new WebClient(stack.url)
    const form = await web.get(signInPath(site))
    expect(form.status).toBe(200)
    await web.signIn('/account/login', alice.id, alice.password)
    const refused = await web.get(signInPath(site))
    expect(refused.status).toBe(403)
    expect(refused.headers.get('location')).toBeNull()
    expect(refused.text).toContain('can no longer sign you in with kigo')
  })

  it('brownout: the visitor is told the site cannot sign them in for a while, until when, and the way back', async () => {
    await setPolicy({ state: 'brownout', windows: [{ start: '00:00', end: '24:00' }] })
    const page = await get(signInPath(site))
    expect(page.status).toBe(403)
    expect(page.headers.get('retry-after')).toMatch(/^\d+$/)
    expect(page.text).toContain(`<h1>${escapeHtml(site.name)} cannot sign you in with kigo right now</h1>`)
    expect(page.text).toMatch(/switched off for a while until \d\d:\d\d UTC/)
    expect(page.text).toContain(`Back to ${escapeHtml(site.name)}`)
    expect(page.text.slice(page.text.indexOf('<main'))).not.toContain('/migration')
  })
})

describe('the pages: a user registers a site; the account page, /migration and the dashboard show the login API', () => {
    it('registers a site on the account pages, shows the secret once, rotates and deletes it (CSRF-checked)', async () => {
    const web = new WebClient(stack.url)
    const { csrfOf } = await import('./helpers.js')
    const first = await web.get('/account/sites')
    expect(first.text).toContain('name="password"')
    await web.signIn('/account/login', alice.id, alice.password)
    const account = await web.get('/account')
    expect(account.text).toContain('href="/account/sites"')
    const page = await web.get('/account/sites')
    expect(page.status).toBe(200)
    expect((await web.post('/account/sites', { csrf_token: 'wrong', name: 'Forged', callback: 'https://forged.example/' })).status).toBe(403)
    const bad = await web.post('/account/sites', { csrf_token: csrfOf(page.text), name: 'Bad', callback: 'ftp://x.example/' })
    expect(bad.status).toBe(400)
    expect(bad.text).toMatch(/http or https; nothing was registered/)
    const created = await web.postAndFollow('/account/sites', { csrf_token: csrfOf(page.text), name: 'My diary', callback: 'https://diary.example/cb' })
    expect(created.posted).toBe(303)
    expect(created.status).toBe(200)
    const mine: Site = { api_key: codeOf(created.text, 'api_key')!, secret: codeOf(created.text, 'secret')!, name: 'My diary', callback: 'https://diary.example/cb' }
    expect(mine.secret).toMatch(/^[A-Za-z0-9_-]{24,}$/)
    const later = await web.get('/account/sites')
    expect(later.text).toContain(mine.api_key)
    expect(later.text).not.toContain(mine.secret)
    expect(await certFor(mine)).toBeTruthy()
    // Another user cannot touch it.
    const eve = new WebClient(stack.url)
    await eve.signIn('/account/login', bob.id, bob.password)
    const eveSites = await eve.get('/account/sites')
    expect((await eve.post(`/account/sites/${mine.api_key}/delete`, { csrf_token: csrfOf(eveSites.text) })).status).toBe(404)
    // Unconfirmed, a rotation or a delete asks first and changes nothing.
    const ask = await web.post(`/account/sites/${mine.api_key}/rotate-secret`, { csrf_token: csrfOf(later.text) })
    expect(ask.status).toBe(200)
    expect(ask.text).toContain('id="confirm"')
    expect(ask.text).toContain('name="confirm" value="yes"')
    expect(codeOf(ask.text, 'secret')).toBeUndefined()
    const askDelete = await web.post(`/account/sites/${mine.api_key}/delete`, { csrf_token: csrfOf(later.text) })
    expect(askDelete.status).toBe(200)
    expect(askDelete.text).toContain('Delete the site')
    expect(await certFor(mine)).toBeTruthy()
    const rotated = await web.postAndFollow(`/account/sites/${mine.api_key}/rotate-secret`, { csrf_token: csrfOf(later.text), confirm: 'yes', overlap: '0' })
    expect(rotated.posted).toBe(303)
    expect(rotated.status).toBe(200)
    expect(codeOf(rotated.text, 'secret')).not.toBe(mine.secret)
    expect((await get(signInPath(mine))).status).toBe(400)
    const deleted = await web.post(`/account/sites/${mine.api_key}/delete`, { csrf_token: csrfOf(later.text), confirm: 'yes' })
    expect(deleted.status).toBe(303)
    expect((await get(signInPath({ ...mine, secret: codeOf(rotated.text, 'secret')! }))).text).toMatch(/Unknown site/)
    const audit = await stack.admin<{ events: Array<{ action: string; after: { by?: string } | null }> }>('GET', `/admin/audit?kind=site&target=${mine.api_key}`)
    expect(audit.body.events.map((e) => e.action).sort()).toEqual(['site.create', 'site.delete', 'site.rotate_secret'])
  })

  it('lists the site that signed a user in on their account page, and the login API on /migration and the dashboard', async () => {
    await certFor(site)
    const web = new WebClient(stack.url)
    await web.signIn('/account/login', alice.id, alice.password)
    const account = await web.get('/account')
    const legacy = /<section class="card" id="legacy">[\s\S]*?<\/section>/.exec(account.text)![0]
    expect(legacy).toContain('Alice&#39;s blog')
    expect(legacy).toContain('The login API')
    const migration = await (await fetch(`${stack.url}/migration`)).text()
    expect(migration).toContain('id="policy-login_api"')
    expect(migration).toContain('id="login-api"')
    const dashboard = await (await fetch(`${stack.adminUrl}/admin/`, { headers: { authorization: `Bearer ${stack.config.adminToken}` } })).text()
    expect(dashboard).toContain('data-method="login_api"')
    expect(dashboard).toContain('Login API')
  })
})
