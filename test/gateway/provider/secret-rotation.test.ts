// An application's consumer secret over HTTP (docs/gateway.md#rotating-a-secret): the
// registration or rotation answers 303 to a page that shows it once, with a copy button
// whose script the page's CSP allows by its hash; never on a reload, to another session or
// on a later visit, and a reload makes nothing new. Rotated with the overlap the owner chooses (on the
// account page or through the operator API): the old secret keeps signing requests until
// the overlap ends on the gateway's clock, or stops at once with none; a bad overlap is
// refused and changes nothing; the audit trail records the overlap.
import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../../helpers/stack.js'
import { WebClient, codeOf, csrfOf, oauthChallenge, oauthFetch } from './helpers.js'

let stack: Stack
let clock = Date.parse('2027-03-01T10:00:00Z')
let owner: { id: string; password: string }

beforeAll(async () => {
  stack = await startStack({ now: () => clock })
  owner = await stack.addUser('rotor', 'Rotor')
})

afterAll(async () => {
  await stack?.close()
})

async function signedIn(): Promise<WebClient> {
  const web = new WebClient(stack.url)
  expect((await web.signIn('/account/login', owner.id, owner.password)).status).toBe(303)
  return web
}

const secretOf = (page: string) => /<code class="secret" id="consumer_secret">([^<]+)<\/code>/.exec(page)?.[1] ?? null

/** An application registered on the account page, with an access token of the owner's. */
async function registered(web: WebClient, name: string) {
  const account = await web.get('/account')
  const res = await web.postAndFollow('/account/apps', { csrf_token: csrfOf(account.text), name, scope: ['read_public', 'write_public'] })
  expect(res.posted).toBe(303)
  expect(res.status).toBe(200)
  const key = codeOf(res.text, 'consumer_key')!
  expect(res.location).toBe(`/account/apps/${key}/new-secret`)
  const secret = secretOf(res.text)!
  const t = await stack.admin<{ token: string; token_secret: string }>('POST', '/admin/tokens', { consumer: key, user: owner.id, scopes: ['write_public'] })
  expect(t.status).toBe(201)
  return { page: res, key, secret, token: { token: t.body.token, secret: t.body.token_secret } }
}

/** An entry posted with the consumer secret `secret`, signed at the gateway's clock. */
const post = (key: string, secret: string, token: { token: string; secret: string }) =>
  oauthFetch({ url: `${stack.url}/api/statuses/update.json`, consumer: { key, secret }, token, timestamp: Math.floor(clock / 1000), form: { status: 'kigo=rotation' } })

/** A request token asked for with the consumer secret `secret` (the provider's own endpoint). */
const initiate = (key: string, secret: string) =>
  oauthFetch({ url: `${stack.url}/oauth/initiate`, consumer: { key, secret }, timestamp: Math.floor(clock / 1000), oauth: { oauth_callback: 'oob' } })

/** Asks for a new secret on the account page and confirms with `overlap` (undefined: the form's field left out). */
async function rotate(web: WebClient, key: string, overlap: string | undefined) {
  const appPage = await web.get(`/account/apps/${key}`)
  const asked = await web.post(`/account/apps/${key}/rotate-secret`, { csrf_token: csrfOf(appPage.text) })
  expect(asked.status).toBe(200)
  return { asked, answer: await web.postAndFollow(`/account/apps/${key}/rotate-secret`, { csrf_token: csrfOf(asked.text), confirm: 'yes', ...(overlap === undefined ? {} : { overlap }) }) }
}

describe('the consumer secret is shown once', () => {
  it('on the page the registration redirects to, with copy buttons allowed by their hash; a reload or a later visit shows no secret', async () => {
    const web = await signedIn()
    const app = await registered(web, 'Shown once')
    expect(app.secret).toMatch(/^[A-Za-z0-9_-]{40,}$/)
    expect(app.page.text).toContain('kigo shows it only this once')
    expect(app.page.text).toContain('<button type="button" class="secondary copy" data-copy="consumer_secret" aria-label="Copy the consumer secret" hidden>Copy</button>')
    expect(app.page.text).toContain('<button type="button" class="secondary copy" data-copy="consumer_key" aria-label="Copy the consumer key" hidden>Copy</button>')
    // The page's one script is allowed by its hash, and nothing else is.
    const script = /<script>([\s\S]*?)<\/script>/.exec(app.page.text)![1]!
    expect(script).toContain('navigator.clipboard.writeText')
    const csp = app.page.headers.get('content-security-policy')!
    expect(csp).toContain(`script-src 'sha256-${createHash('sha256').update(script).digest('base64')}'`)
    expect(csp).toContain("default-src 'none'")
    expect(app.page.headers.get('cache-control')).toBe('no-store')

    const later = await web.get(`/account/apps/${app.key}`)
    expect(later.status).toBe(200)
    expect(later.text).toContain(app.key)
    expect(later.text).not.toContain(app.secret)
    expect(secretOf(later.text)).toBeNull()
    expect(later.text).toContain('Shown once, when it was made')
    expect(later.text).toContain('Make a new secret…')
    expect(later.text).toContain('data-copy="consumer_key"')

    // A reload of the page the registration redirected to: the application without its
    // secret, saying it was shown once, and still one application.
    const reload = await web.get(`/account/apps/${app.key}/new-secret`)
    expect(reload.status).toBe(200)
    expect(reload.text).not.toContain(app.secret)
    expect(secretOf(reload.text)).toBeNull()
    expect(reload.text).toContain('was shown once, on the page after it was made')
    expect(reload.text).toContain('Make a new secret below.')
    const apps = await stack.admin<{ apps: Array<{ name: string }> }>('GET', `/admin/apps?owner=${owner.id}`)
    expect(apps.body.apps.filter((a) => a.name === 'Shown once')).toHaveLength(1)
    // The secret still works: only the page forgot it.
    expect((await post(app.key, app.secret, app.token)).status).toBe(200)
  })
})

describe('post, then redirect', () => {
  it('a reload after a rotation with 1 hour makes no third secret: the running secret and the new one keep working, one rotation is audited', async () => {
    const web = await signedIn()
    const app = await registered(web, 'Reloaded rotation')
    const { answer } = await rotate(web, app.key, '3600')
    const fresh = secretOf(answer.text)!
    const reload = await web.get(answer.location!)
    expect(reload.status).toBe(200)
    expect(secretOf(reload.text)).toBeNull()
    expect(reload.text).not.toContain(fresh)
    expect(reload.text).toContain('was shown once, on the page after it was made')
    expect(reload.text).toContain('id="previous_secret"')
    expect((await post(app.key, app.secret, app.token)).status).toBe(200)
    expect((await post(app.key, fresh, app.token)).status).toBe(200)
    const events = (await stack.admin<{ events: Array<{ action: string }> }>('GET', `/admin/audit?target=${app.key}`)).body.events
    expect(events.map((e) => e.action)).toEqual(['app.rotate_secret', 'app.create'])
  })

  it('the page shows the secret only to the session that made it: not to another user, nor to the owner in another session, nor signed out', async () => {
    const web = await signedIn()
    const account = await web.get('/account')
    const posted = await web.post('/account/apps', { csrf_token: csrfOf(account.text), name: 'Only mine', scope: 'read_public' })
    expect(posted.status).toBe(303)
    const location = posted.headers.get('location')!
    expect(location).toMatch(/^\/account\/apps\/[A-Za-z0-9_-]+\/new-secret$/)
    expect(posted.text).toBe('')

    const stranger = await stack.addUser('stranger-rotor', 'Stranger')
    const other = new WebClient(stack.url)
    expect((await other.signIn('/account/login', stranger.id, stranger.password)).status).toBe(303)
    const theirs = await other.get(location)
    expect(theirs.status).toBe(404)
    expect(theirs.text).not.toContain('class="secret"')
    expect(theirs.text).not.toContain('Only mine')

    // The address the registration was posted to, opened with GET: the list of applications.
    const list = await web.get('/account/apps')
    expect(list.status).toBe(303)
    expect(list.headers.get('location')).toBe('/account#applications')

    const signedOut = await new WebClient(stack.url).get(location)
    expect(signedOut.status).toBe(303)
    expect(signedOut.headers.get('location')).toBe(`/account/login?next=${encodeURIComponent(location)}`)

    const ownerElsewhere = await signedIn()
    const elsewhere = await ownerElsewhere.get(location)
    expect(elsewhere.status).toBe(200)
    expect(secretOf(elsewhere.text)).toBeNull()

    // The session that registered it still sees it, once.
    const shown = await web.get(location)
    expect(secretOf(shown.text)).toMatch(/^[A-Za-z0-9_-]{40,}$/)
    expect(secretOf((await web.get(location)).text)).toBeNull()
  })
})

describe('rotation with an overlap', () => {
  it('asks how long the old secret keeps working; with 1 hour it signs requests until the hour is over, then only the new one does', async () => {
    const web = await signedIn()
    const app = await registered(web, 'Overlapping')
    const { asked, answer } = await rotate(web, app.key, '3600')
    expect(asked.text).toContain('<select id="choice_overlap" name="overlap">')
    for (const value of ['0', '3600', '86400', '604800']) expect(asked.text).toContain(`<option value="${value}"`)
    expect(answer.posted).toBe(303)
    expect(answer.location).toBe(`/account/apps/${app.key}/new-secret`)
    expect(answer.status).toBe(200)
    const fresh = secretOf(answer.text)!
    expect(fresh).not.toBe(app.secret)
    expect(answer.text).toContain('data-copy="consumer_secret"')
    expect(answer.text).toContain('The secret it replaced keeps working until')
    expect(answer.text).toContain('2027-03-01T11:00:00Z')

    // A later visit shows no secret, and until when the old one works.
    const later = await web.get(`/account/apps/${app.key}`)
    expect(later.text).not.toContain(fresh)
    expect(later.text).toContain('id="previous_secret"')

    expect((await post(app.key, app.secret, app.token)).status).toBe(200)
    expect((await post(app.key, fresh, app.token)).status).toBe(200)
    expect((await initiate(app.key, app.secret)).status).toBe(200)

    clock += 3599_000
    expect((await post(app.key, app.secret, app.token)).status).toBe(200)
    clock += 1000
    const late = await post(app.key, app.secret, app.token)
    expect(late.status).toBe(401)
    expect(oauthChallenge(late.headers).oauth_problem).toBe('signature_invalid')
    expect(decodeURIComponent(oauthChallenge(late.headers).oauth_problem_advice!)).toContain('signed with a consumer secret that was replaced; it worked until 2027-03-01T11:00:00Z')
    expect((await initiate(app.key, app.secret)).status).toBe(401)
    expect((await post(app.key, fresh, app.token)).status).toBe(200)
    expect((await web.get(`/account/apps/${app.key}`)).text).not.toContain('id="previous_secret"')

    const events = (await stack.admin<{ events: Array<{ action: string; after: Record<string, unknown> }> }>('GET', `/admin/audit?target=${app.key}`)).body.events
    expect(events[0]).toMatchObject({ action: 'app.rotate_secret', after: { user: owner.id, overlap_seconds: 3600, previous_secret_until: '2027-03-01T11:00:00Z' } })
    expect(JSON.stringify(events)).not.toContain(fresh)
    expect(JSON.stringify(events)).not.toContain(app.secret)
  })

  it('with none the old secret stops at once, and a new rotation replaces the previous secret; no choice posted is a day', async () => {
    const web = await signedIn()
    const app = await registered(web, 'No overlap')
    const first = secretOf((await rotate(web, app.key, '86400')).answer.text)!
    expect((await post(app.key, app.secret, app.token)).status).toBe(200)
    // None: the secret replaced now (first) stops at once, and the one before it with it.
    const none = await rotate(web, app.key, '0')
    expect(none.answer.text).toContain('The secret it replaced stopped working at once.')
    const second = secretOf(none.answer.text)!
    expect((await post(app.key, first, app.token)).status).toBe(401)
    expect((await post(app.key, app.secret, app.token)).status).toBe(401)
    expect((await post(app.key, second, app.token)).status).toBe(200)
    // A form without the choice has the default overlap, a day.
    const third = await rotate(web, app.key, undefined)
    expect(third.answer.text).toContain(new Date(Math.floor(clock / 1000) * 1000 + 86_400_000).toISOString().replace('.000Z', 'Z'))
    expect((await post(app.key, second, app.token)).status).toBe(200)
    expect((await post(app.key, secretOf(third.answer.text)!, app.token)).status).toBe(200)
  })

  it('refuses an overlap the page does not offer (400) and changes nothing', async () => {
    const web = await signedIn()
    const app = await registered(web, 'Refused overlap')
    for (const overlap of ['5', '-3600', 'an hour', '3600.5', '']) {
      const { answer } = await rotate(web, app.key, overlap)
      expect(answer.status, overlap).toBe(400)
      expect(answer.text).toContain('Nothing was changed')
      expect(secretOf(answer.text)).toBeNull()
    }
    expect((await post(app.key, app.secret, app.token)).status).toBe(200)
    expect((await stack.admin<{ events: unknown[] }>('GET', `/admin/audit?target=${app.key}`)).body.events).toHaveLength(1)
  })
})

describe('the rotation address', () => {
  it('is rotate-secret; a post to the older /rotate answers 308 there, and the same post there rotates (audited as app.rotate_secret)', async () => {
    const web = await signedIn()
    const app = await registered(web, 'Old form')
    const appPage = await web.get(`/account/apps/${app.key}`)
    expect(appPage.text).toContain(`action="/account/apps/${app.key}/rotate-secret"`)
    const form = { csrf_token: csrfOf(appPage.text), confirm: 'yes', overlap: '0' }
    const old = await web.post(`/account/apps/${app.key}/rotate`, form)
    expect(old.status).toBe(308)
    expect(old.headers.get('location')).toBe(`/account/apps/${app.key}/rotate-secret`)
    // A browser repeats the post, method and form, at the new address.
    const rotated = await web.postAndFollow(old.headers.get('location')!, form)
    expect(rotated.location).toBe(`/account/apps/${app.key}/new-secret`)
    expect(secretOf(rotated.text)).not.toBe(app.secret)
    const events = (await stack.admin<{ events: Array<{ action: string; actor: string }> }>('GET', `/admin/audit?target=${app.key}`)).body.events
    expect(events.map((e) => e.action)).toEqual(['app.rotate_secret', 'app.create'])
  })
})

describe('the operator API', () => {
  it('rotates with overlap_seconds, answering the new secret once and until when the old one works; audited', async () => {
    const app = await stack.addOAuthClient(owner.id, ['write_public'])
    const token = { token: app.token, secret: app.tokenSecret }
    const rotated = await stack.admin<{ consumer_key: string; consumer_secret: string; overlap_seconds: number; previous_secret_until: string | null }>('POST', `/admin/apps/${app.consumerKey}/rotate-secret`, { overlap_seconds: 86400 })
    expect(rotated.status).toBe(200)
    expect(rotated.body).toEqual({ consumer_key: app.consumerKey, consumer_secret: expect.stringMatching(/^[A-Za-z0-9_-]{40,}$/), overlap_seconds: 86400, previous_secret_until: new Date(Math.floor(clock / 1000) * 1000 + 86_400_000).toISOString().replace('.000Z', 'Z') })
    expect((await post(app.consumerKey, app.consumerSecret, token)).status).toBe(200)
    expect((await post(app.consumerKey, rotated.body.consumer_secret, token)).status).toBe(200)
    // The secret is never shown again.
    const shown = await stack.admin('GET', `/admin/apps/${app.consumerKey}`)
    expect(JSON.stringify(shown.body)).not.toContain(rotated.body.consumer_secret)
    clock += 86_400_000
    expect((await post(app.consumerKey, app.consumerSecret, token)).status).toBe(401)

    const none = await stack.admin<{ consumer_secret: string; overlap_seconds: number; previous_secret_until: string | null }>('POST', `/admin/apps/${app.consumerKey}/rotate-secret`, { overlap_seconds: 0 })
    expect(none.body).toMatchObject({ overlap_seconds: 0, previous_secret_until: null })
    expect((await post(app.consumerKey, rotated.body.consumer_secret, token)).status).toBe(401)
    expect((await post(app.consumerKey, none.body.consumer_secret, token)).status).toBe(200)

    const events = (await stack.admin<{ events: Array<{ action: string; after: unknown }> }>('GET', `/admin/audit?target=${app.consumerKey}`)).body.events
    expect(events.slice(0, 2)).toMatchObject([
      { action: 'app.rotate_secret', after: { overlap_seconds: 0, previous_secret_until: null } },
      { action: 'app.rotate_secret', after: { overlap_seconds: 86400 } },
    ])
  })

  it('refuses an overlap other than 0, 3600, 86400 or 604800 with 400 in its error format, changing nothing', async () => {
    const app = await stack.addOAuthClient(owner.id, ['write_public'])
    const token = { token: app.token, secret: app.tokenSecret }
    for (const body of [{ overlap_seconds: 60 }, { overlap_seconds: '3600' }, { overlap_seconds: 3600.5 }, { overlap_seconds: null }, { overlap: 3600 }, [3600], 'soon']) {
      const res = await stack.admin<{ error: { status: number; code: string; message: string } }>('POST', `/admin/apps/${app.consumerKey}/rotate-secret`, body)
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(res.body.error).toMatchObject({ status: 400, code: 'invalid_parameter' })
    }
    expect((await post(app.consumerKey, app.consumerSecret, token)).status).toBe(200)
    const events = (await stack.admin<{ events: Array<{ action: string }> }>('GET', `/admin/audit?target=${app.consumerKey}`)).body.events
    expect(events.map((e) => e.action)).toEqual(['app.create'])
  })
})
