// An owner edits what they registered, on the account pages
// (docs/gateway.md#editing-what-one-registered, docs/login-api.md#users,
// docs/oidc.md#on-the-account-pages-users): an OAuth application's name, callback and
// home page, a login site's name, callback and home page, an OpenID Connect client's
// name and redirect URIs; the operator the same with PATCH. Each edit is used at once (on another gateway of the
// deployment too, on PostgreSQL) and audited with the user; a bad value comes back in the
// form with why, and changes nothing; another user, a post without the session's CSRF
// token and a signed-out visitor change nothing. The consent pages name who registered
// what asks, how many people use it, and its home page
// (docs/gateway.md#who-asks-on-the-consent-pages). On both storage engines.
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshPostgres } from '../../helpers/services.js'
import { startStack, type Stack } from '../../helpers/stack.js'
import { WebClient, csrfOf, oauthFetch } from '../provider/helpers.js'
import { signInPath, signInThrough, type Site } from '../login-api/helpers.js'
import { browse, discover, registerClient, startSignIn, type RegisteredClient } from '../oidc/helpers.js'

type User = { id: string; password: string }
type App = { consumer_key: string; consumer_secret: string }
type AuditEvent = { action: string; kind: string; target: string; by: string; before: Record<string, unknown> | null; after: Record<string, unknown> | null }

const postgres = await freshPostgres()
const backends: Array<{ name: string; databaseUrl?: string; skip: boolean }> = [
  { name: 'embedded', skip: false },
  { name: 'PostgreSQL, two gateways', ...(postgres ? { databaseUrl: postgres.url } : {}), skip: postgres === null },
]

afterAll(async () => {
  await postgres?.drop()
})

for (const backend of backends) {
  describe.skipIf(backend.skip)(`editing registrations and the consent pages (${backend.name})`, () => {
    let stack: Stack
    /** Another gateway of the same deployment on PostgreSQL; the same one when embedded. */
    let other: Stack | undefined
    const elsewhere = () => other ?? stack
    let alice: User
    let bob: User
    let carol: User
    let dave: User

    beforeAll(async () => {
      if (backend.databaseUrl) {
        const shared = { databaseUrl: backend.databaseUrl, secretKey: randomBytes(32).toString('base64'), adminToken: randomBytes(24).toString('base64url') }
        stack = await startStack(shared)
        other = await startStack({ ...shared, coreUrl: stack.coreUrl })
      } else {
        stack = await startStack()
      }
      alice = await stack.addUser('alice', 'Alice')
      bob = await stack.addUser('bob', 'Bob')
      carol = await stack.addUser('carol', 'Carol')
      dave = await stack.addUser('dave', 'Dave')
    }, 60_000)

    afterAll(async () => {
      await other?.close()
      await stack?.close()
    })

    async function signedIn(user: User): Promise<WebClient> {
      const web = new WebClient(stack.url)
      expect((await web.signIn('/account/login', user.id, user.password)).status).toBe(303)
      return web
    }

    async function auditOf(kind: string, target: string): Promise<AuditEvent[]> {
      const r = await stack.admin<{ events: AuditEvent[] }>('GET', `/admin/audit?kind=${kind}&target=${target}`)
      expect(r.status).toBe(200)
      return r.body.events
    }

    /** A request token of `app` for `callback`, asked on gateway `on`. */
    const initiate = (app: App, callback: string, on: Stack = stack) =>
      oauthFetch({ url: `${on.url}/oauth/initiate`, consumer: { key: app.consumer_key, secret: app.consumer_secret }, oauth: { oauth_callback: callback } })

    async function addApp(name: string, callback: string): Promise<App> {
      const r = await stack.admin<App>('POST', '/admin/apps', { name, owner: 'alice', scopes: ['read_public'], callback })
      expect(r.status).toBe(201)
      return r.body
    }

    describe('an OAuth application', () => {
      let app: App

      beforeAll(async () => {
        app = await addApp('Haiku Pad', 'https://old.example/cb')
      })

      it('the owner edits its name, callback and home page on its page: every gateway uses them at once, audited with before and after', async () => {
        const web = await signedIn(alice)
        const page = await web.get(`/account/apps/${app.consumer_key}`)
        expect(page.status).toBe(200)
        expect(page.text).toContain(`<form method="post" action="/account/apps/${app.consumer_key}/edit">`)
        expect(page.text).toContain('value="https://old.example/cb"')

        const edited = await web.post(`/account/apps/${app.consumer_key}/edit`, { csrf_token: csrfOf(page.text), name: 'Haiku Pad Pro', callback: 'https://new.example/cb', home_url: 'https://haiku.example/about' })
        expect(edited.status).toBe(303)
        expect(edited.headers.get('location')).toBe(`/account/apps/${app.consumer_key}?notice=app_edited`)
        const after = await web.get(edited.headers.get('location')!)
        expect(after.text).toContain('Your changes to the application were saved')
        expect(after.text).toContain('<h1>Haiku Pad Pro</h1>')
        expect(after.text).toContain('value="https://haiku.example/about"')
        expect((await stack.admin('GET', `/admin/apps/${app.consumer_key}`)).body).toMatchObject({ name: 'Haiku Pad Pro', callback: 'https://new.example/cb' })

        // The new callback's origin is the one a client may now use, on any gateway.
        const old = await initiate(app, 'https://old.example/cb', elsewhere())
        expect(old.status).toBe(400)
        expect(old.text).toContain('https://new.example')
        expect((await initiate(app, 'https://new.example/cb?x=1', elsewhere())).status).toBe(200)

        const events = await auditOf('app', app.consumer_key)
        expect(events[0]).toMatchObject({
          action: 'app.edit',
          by: 'user alice',
          before: { name: 'Haiku Pad', callback_url: 'https://old.example/cb', home_url: null },
          after: { name: 'Haiku Pad Pro', callback_url: 'https://new.example/cb', home_url: 'https://haiku.example/about' },
        })
      })

      it('refuses a bad callback, home page or name with the form as typed and why, and changes nothing', async () => {
        const web = await signedIn(alice)
        const before = (await stack.admin('GET', `/admin/apps/${app.consumer_key}`)).body
        const events = (await auditOf('app', app.consumer_key)).length
        const csrf_token = csrfOf((await web.get(`/account/apps/${app.consumer_key}`)).text)
        const cases: Array<[Record<string, string>, RegExp]> = [
          [{ name: 'Renamed', callback: 'ftp://files.example/cb', home_url: '' }, /The callback URL must use http or https\. Nothing was changed\./],
          [{ name: 'Renamed', callback: 'https://user:pw@new.example/cb', home_url: '' }, /The callback URL must not carry credentials\. Nothing was changed\./],
          [{ name: 'Renamed', callback: 'https://new.example/cb', home_url: 'javascript:alert(1)' }, /The home page URL must use http or https\. Nothing was changed\./],
          [{ name: '   ', callback: 'https://new.example/cb', home_url: '' }, /Give the application a name\. Nothing was changed\./],
          [{ name: 'x'.repeat(101), callback: 'https://new.example/cb', home_url: '' }, /The name must be at most 100 characters\. Nothing was changed\./],
        ]
        for (const [form, why] of cases) {
          const refused = await web.post(`/account/apps/${app.consumer_key}/edit`, { csrf_token, ...form })
          expect(refused.status, JSON.stringify(form)).toBe(400)
          expect(refused.headers.get('content-type')).toMatch(/^text\/html/)
          expect(refused.text).toMatch(why)
          expect(refused.text).toContain('role="alert"')
          // What was typed is kept in the form.
          expect(refused.text).toContain(`value="${form.callback}"`)
          expect(refused.text).toContain(`value="${form.home_url}"`)
        }
        expect((await stack.admin('GET', `/admin/apps/${app.consumer_key}`)).body).toEqual(before)
        expect(await auditOf('app', app.consumer_key)).toHaveLength(events)
      })

      it('another user, a post without the CSRF token and a signed-out visitor change nothing', async () => {
        const before = (await stack.admin('GET', `/admin/apps/${app.consumer_key}`)).body
        const events = (await auditOf('app', app.consumer_key)).length
        const form = { name: 'Taken over', callback: 'https://evil.example/cb', home_url: '' }

        const web = await signedIn(bob)
        const notHis = await web.post(`/account/apps/${app.consumer_key}/edit`, { csrf_token: csrfOf((await web.get('/account')).text), ...form })
        expect(notHis.status).toBe(404)
        expect(notHis.text).toContain('You have no application with this key.')

        const owner = await signedIn(alice)
        expect((await owner.post(`/account/apps/${app.consumer_key}/edit`, form)).status).toBe(403)
        expect((await owner.post(`/account/apps/${app.consumer_key}/edit`, { csrf_token: 'not-the-token', ...form })).status).toBe(403)
        // Another user's token is not this session's.
        expect((await owner.post(`/account/apps/${app.consumer_key}/edit`, { csrf_token: csrfOf((await web.get('/account')).text), ...form })).status).toBe(403)

        const visitor = new WebClient(stack.url)
        const login = await visitor.get('/account/login')
        const signedOut = await visitor.post(`/account/apps/${app.consumer_key}/edit`, { csrf_token: csrfOf(login.text), ...form })
        expect(signedOut.status).toBe(403)
        expect(signedOut.text).toContain('Not signed in')

        expect((await stack.admin('GET', `/admin/apps/${app.consumer_key}`)).body).toEqual(before)
        expect(await auditOf('app', app.consumer_key)).toHaveLength(events)
        expect((await initiate(app, 'https://evil.example/cb')).status).toBe(400)
      })

      it('the consent page names who registered it, how many people use it now, and its home page by host name', async () => {
        const counted = await addApp('Counted', 'https://counted.example/cb')
        const web = await signedIn(alice)
        const page = await web.get(`/account/apps/${counted.consumer_key}`)
        expect((await web.post(`/account/apps/${counted.consumer_key}/edit`, { csrf_token: csrfOf(page.text), name: 'Counted', callback: 'https://counted.example/cb', home_url: 'https://www.counted.example/about?ref=kigo' })).status).toBe(303)

        const consentFor = async (viewer: WebClient) => {
          const rt = await initiate(counted, 'oob')
          expect(rt.status).toBe(200)
          const consent = await viewer.get(`/oauth/authorize?oauth_token=${rt.form.get('oauth_token')}`)
          expect(consent.status).toBe(200)
          return { consent, token: rt.form.get('oauth_token')!, secret: rt.form.get('oauth_token_secret')! }
        }
        const asDave = await signedIn(dave)
        const first = (await consentFor(asDave)).consent.text
        expect(first).toContain('Registered by <strong>alice</strong> · nobody uses it yet')
        expect(first).toContain('<a href="https://www.counted.example/about?ref=kigo" rel="noopener noreferrer nofollow" target="_blank">www.counted.example</a>')

        // Bob authorizes it through the whole flow; carol is given a token by the operator.
        const asBob = await signedIn(bob)
        const asked = await consentFor(asBob)
        const allowed = await asBob.post('/oauth/authorize', { csrf_token: csrfOf(asked.consent.text), oauth_token: asked.token, decision: 'allow' })
        expect(allowed.status).toBe(200)
        const verifier = /id="oauth_verifier"[^>]*>([^<]+)</.exec(allowed.text)![1]!
        const exchanged = await oauthFetch({ url: `${stack.url}/oauth/token`, consumer: { key: counted.consumer_key, secret: counted.consumer_secret }, token: { token: asked.token, secret: asked.secret }, oauth: { oauth_verifier: verifier } })
        expect(exchanged.status).toBe(200)
        expect((await consentFor(asDave)).consent.text).toContain('Registered by <strong>alice</strong> · used by 1 person')
        // Two tokens of one person count once.
        for (let i = 0; i < 2; i++) expect((await stack.admin('POST', '/admin/tokens', { consumer: counted.consumer_key, user: 'carol', scopes: ['read_public'] })).status).toBe(201)
        expect((await consentFor(asDave)).consent.text).toContain('Registered by <strong>alice</strong> · used by 2 people')

        // Carol revokes its access: she no longer counts.
        const asCarol = await signedIn(carol)
        const revoked = await asCarol.post('/account/revoke', { csrf_token: csrfOf((await asCarol.get('/account')).text), consumer_key: counted.consumer_key, confirm: 'yes' })
        expect(revoked.status).toBe(303)
        expect((await consentFor(asDave)).consent.text).toContain('used by 1 person')
      })
    })

    describe('a login site', () => {
      let site: Site

      beforeAll(async () => {
        const r = await stack.admin<Site>('POST', '/admin/sites', { name: 'Old Blog', owner: 'alice', callback: 'https://blog.example/cb' })
        expect(r.status).toBe(201)
        site = r.body
      })

      it('the owner edits its name, callback and home page on /account/sites: the next sign-in on any gateway uses them, and its consent page names the owner and links the home page', async () => {
        const web = await signedIn(alice)
        const page = await web.get('/account/sites')
        expect(page.text).toContain(`<form method="post" action="/account/sites/${site.api_key}/edit">`)
        const edited = await web.post(`/account/sites/${site.api_key}/edit`, { csrf_token: csrfOf(page.text), name: 'New Blog', callback: 'https://blog.example/login/back', home_url: 'https://blog.example/' })
        expect(edited.status).toBe(303)
        expect(edited.headers.get('location')).toBe('/account/sites?notice=edited')
        const after = await web.get(edited.headers.get('location')!)
        expect(after.text).toContain('Your changes to the site were saved')
        expect(after.text).toContain('New Blog')
        expect((await stack.admin('GET', `/admin/sites/${site.api_key}`)).body).toMatchObject({ name: 'New Blog', callback: 'https://blog.example/login/back', home_page: 'https://blog.example/' })

        const { consent, answer } = await signInThrough(new WebClient(elsewhere().url), signInPath(site), bob)
        expect(consent.text).toContain('Sign in to <strong>New Blog</strong> with kigo?')
        expect(consent.text).toContain('Registered by <strong>alice</strong> · home page <a href="https://blog.example/" rel="noopener noreferrer nofollow" target="_blank">blog.example</a>')
        expect(answer.status).toBe(302)
        expect(answer.headers.get('location')).toMatch(/^https:\/\/blog\.example\/login\/back\?cert=/)

        const events = await auditOf('site', site.api_key)
        expect(events[0]).toMatchObject({
          action: 'site.edit',
          by: 'user alice',
          before: { name: 'Old Blog', callback: 'https://blog.example/cb', home_page: null },
          after: { name: 'New Blog', callback: 'https://blog.example/login/back', home_page: 'https://blog.example/' },
        })
      })

      it('refuses a bad value with the form as typed and why, and changes nothing', async () => {
        const web = await signedIn(alice)
        const before = (await stack.admin('GET', `/admin/sites/${site.api_key}`)).body
        const events = (await auditOf('site', site.api_key)).length
        const csrf_token = csrfOf((await web.get('/account/sites')).text)
        const cases: Array<[Record<string, string>, RegExp]> = [
          [{ name: 'Renamed', callback: 'ftp://blog.example/cb', home_url: '' }, /The callback URL must use http or https\. Nothing was changed\./],
          [{ name: 'Renamed', callback: '', home_url: '' }, /Give the callback URL the sign-in returns to\. Nothing was changed\./],
          [{ name: 'Renamed', callback: 'https://blog.example/cb', home_url: 'https://blog.example/#top' }, /The home page URL must not have a fragment\. Nothing was changed\./],
          [{ name: '', callback: 'https://blog.example/cb', home_url: '' }, /Give the site a name\. Nothing was changed\./],
        ]
        for (const [form, why] of cases) {
          const refused = await web.post(`/account/sites/${site.api_key}/edit`, { csrf_token, ...form })
          expect(refused.status, JSON.stringify(form)).toBe(400)
          expect(refused.text).toMatch(why)
          // The site's form is open, with what was typed.
          expect(refused.text).toContain(`<details id="edit-${site.api_key}" open>`)
          expect(refused.text).toContain(`value="${form.callback}"`)
        }
        expect((await stack.admin('GET', `/admin/sites/${site.api_key}`)).body).toEqual(before)
        expect(await auditOf('site', site.api_key)).toHaveLength(events)
      })

      it('another user and a post without the CSRF token change nothing', async () => {
        const before = (await stack.admin('GET', `/admin/sites/${site.api_key}`)).body
        const form = { name: 'Taken over', callback: 'https://evil.example/cb', home_url: '' }
        const web = await signedIn(bob)
        const notHis = await web.post(`/account/sites/${site.api_key}/edit`, { csrf_token: csrfOf((await web.get('/account/sites')).text), ...form })
        expect(notHis.status).toBe(404)
        expect(notHis.text).toContain('You have no login site with this api_key.')
        const owner = await signedIn(alice)
        expect((await owner.post(`/account/sites/${site.api_key}/edit`, form)).status).toBe(403)
        expect((await owner.post(`/account/sites/${site.api_key}/edit`, { csrf_token: 'forged', ...form })).status).toBe(403)
        expect((await stack.admin('GET', `/admin/sites/${site.api_key}`)).body).toEqual(before)
      })
    })

    describe('an OpenID Connect client', () => {
      let client: RegisteredClient

      beforeAll(async () => {
        client = await registerClient(stack, { name: 'Tea Party', owner: 'alice', redirect_uris: ['https://tea.example/cb'], public: true })
      })

      it('the owner edits its name and redirect URIs on /account/oidc-clients: the next sign-in on any gateway uses them, audited', async () => {
        const web = await signedIn(alice)
        const page = await web.get('/account/oidc-clients')
        expect(page.text).toContain(`<form method="post" action="/account/oidc-clients/${client.client_id}/edit">`)
        const edited = await web.post(`/account/oidc-clients/${client.client_id}/edit`, {
          csrf_token: csrfOf(page.text),
          name: 'Tea Garden',
          redirect_uris: 'https://tea.example/new-cb\r\nhttps://tea.example/app-cb\r\n',
          post_logout_redirect_uris: 'https://tea.example/',
        })
        expect(edited.status).toBe(303)
        expect(edited.headers.get('location')).toBe('/account/oidc-clients?notice=edited')
        expect((await web.get(edited.headers.get('location')!)).text).toContain('Your changes to the client were saved')
        expect((await stack.admin('GET', `/admin/oidc-clients/${client.client_id}`)).body).toMatchObject({
          name: 'Tea Garden',
          redirect_uris: ['https://tea.example/new-cb', 'https://tea.example/app-cb'],
          post_logout_redirect_uris: ['https://tea.example/'],
          type: 'public',
        })

        const config = await discover(elsewhere().url, client)
        // The old redirect URI is refused on a page; the new one signs in.
        const old = await startSignIn(config, 'https://tea.example/cb')
        expect((await new WebClient(elsewhere().url).get(old.url.pathname + old.url.search)).status).toBe(400)
        let consent = ''
        const { callback } = await browse((await startSignIn(config, 'https://tea.example/new-cb')).url, 'https://tea.example/new-cb', carol, { onPage: (path, text) => { if (path.includes('/interaction/')) consent = text } })
        expect(callback.searchParams.get('code')).toBeTruthy()
        expect(consent).toContain('Sign in to <strong>Tea Garden</strong>')

        const events = await auditOf('oidc', client.client_id)
        expect(events[0]).toMatchObject({
          action: 'oidc_client.edit',
          by: 'user alice',
          before: { name: 'Tea Party', redirect_uris: ['https://tea.example/cb'], post_logout_redirect_uris: [] },
          after: { name: 'Tea Garden', redirect_uris: ['https://tea.example/new-cb', 'https://tea.example/app-cb'], post_logout_redirect_uris: ['https://tea.example/'] },
        })
      })

      it('refuses a bad value with the form as typed and why, and changes nothing', async () => {
        const web = await signedIn(alice)
        const before = (await stack.admin('GET', `/admin/oidc-clients/${client.client_id}`)).body
        const events = (await auditOf('oidc', client.client_id)).length
        const csrf_token = csrfOf((await web.get('/account/oidc-clients')).text)
        const cases: Array<[Record<string, string>, RegExp]> = [
          [{ name: 'Renamed', redirect_uris: 'https://tea.example/ok\nftp://tea.example/cb' }, /The redirect URI must use http or https: &quot;ftp:\/\/tea\.example\/cb&quot;\. Nothing was changed\./],
          [{ name: 'Renamed', redirect_uris: 'https://tea.example/cb#frag' }, /The redirect URI must not have a fragment/],
          [{ name: 'Renamed', redirect_uris: '\n \n' }, /Give at least one redirect URI the sign-in returns to\. Nothing was changed\./],
          [{ name: '', redirect_uris: 'https://tea.example/cb' }, /Give the client a name\. Nothing was changed\./],
          [{ name: 'Renamed', redirect_uris: Array.from({ length: 11 }, (_, i) => `https://tea.example/${i}`).join('\n') }, /Give 1 to 10 redirect URIs\. Nothing was changed\./],
        ]
        for (const [form, why] of cases) {
          const refused = await web.post(`/account/oidc-clients/${client.client_id}/edit`, { csrf_token, post_logout_redirect_uris: '', ...form })
          expect(refused.status, JSON.stringify(form)).toBe(400)
          expect(refused.text).toMatch(why)
          expect(refused.text).toContain(`<details id="edit-${client.client_id}" open>`)
          expect(refused.text).toContain(`value="${form.name}"`)
        }
        expect((await stack.admin('GET', `/admin/oidc-clients/${client.client_id}`)).body).toEqual(before)
        expect(await auditOf('oidc', client.client_id)).toHaveLength(events)
      })

      it('another user and a post without the CSRF token change nothing', async () => {
        const before = (await stack.admin('GET', `/admin/oidc-clients/${client.client_id}`)).body
        const form = { name: 'Taken over', redirect_uris: 'https://evil.example/cb', post_logout_redirect_uris: '' }
        const web = await signedIn(bob)
        const notHis = await web.post(`/account/oidc-clients/${client.client_id}/edit`, { csrf_token: csrfOf((await web.get('/account/oidc-clients')).text), ...form })
        expect(notHis.status).toBe(404)
        expect(notHis.text).toContain('You have no OpenID Connect client with this client_id.')
        const owner = await signedIn(alice)
        expect((await owner.post(`/account/oidc-clients/${client.client_id}/edit`, form)).status).toBe(403)
        expect((await owner.post(`/account/oidc-clients/${client.client_id}/edit`, { csrf_token: 'forged', ...form })).status).toBe(403)
        expect((await stack.admin('GET', `/admin/oidc-clients/${client.client_id}`)).body).toEqual(before)
      })

      it('the consent page names who registered the site and how many people signed in to it', async () => {
        const redirectUri = 'https://count.example/cb'
        const counted = await registerClient(stack, { name: 'Counted site', owner: 'alice', redirect_uris: [redirectUri], public: true })
        const config = await discover(stack.url, counted)
        const consentOf = async (user: User) => {
          let consent = ''
          await browse((await startSignIn(config, redirectUri)).url, redirectUri, user, { onPage: (path, text) => { if (path.includes('/interaction/')) consent = text } })
          return consent
        }
        expect(await consentOf(bob)).toContain('Registered by <strong>alice</strong> · nobody uses it yet')
        expect(await consentOf(carol)).toContain('Registered by <strong>alice</strong> · used by 1 person')
        const third = await consentOf(dave)
        expect(third).toContain('Registered by <strong>alice</strong> · used by 2 people')
        // No home page is registered for an OpenID Connect client: no link.
        expect(third).not.toContain('rel="noopener noreferrer nofollow"')
      })
    })

    describe('the operator API', () => {
      it('edits the fields given (PATCH) of an application, a login site and an OpenID Connect client, checked and audited alike', async () => {
        const app = await addApp('Operator app', 'https://op.example/cb')
        const edited = await stack.admin<Record<string, unknown>>('PATCH', `/admin/apps/${app.consumer_key}`, { home_page: 'https://op.example/' })
        expect(edited.status).toBe(200)
        expect(edited.body).toMatchObject({ name: 'Operator app', callback: 'https://op.example/cb', home_page: 'https://op.example/', scopes: ['read_public'] })
        const badCallback = await stack.admin<{ error: { code: string } }>('PATCH', `/admin/apps/${app.consumer_key}`, { callback: 'ftp://op.example/' })
        expect(badCallback.status).toBe(400)
        expect(badCallback.body.error.code).toBe('invalid_callback')
        expect((await stack.admin('PATCH', `/admin/apps/${app.consumer_key}`, { home_page: 'https://op.example/#x' })).status).toBe(400)
        expect((await stack.admin('PATCH', `/admin/apps/${app.consumer_key}`, { scopes: ['write_public'] })).status).toBe(400)
        expect((await stack.admin('PATCH', `/admin/apps/${app.consumer_key}`, {})).status).toBe(400)
        expect((await stack.admin('PATCH', `/admin/apps/${randomBytes(18).toString('base64url')}`, { name: 'Nobody' })).status).toBe(404)
        expect((await stack.admin('GET', `/admin/apps/${app.consumer_key}`)).body).toMatchObject({ callback: 'https://op.example/cb', home_page: 'https://op.example/', scopes: ['read_public'] })
        expect((await auditOf('app', app.consumer_key))[0]).toMatchObject({ action: 'app.edit', by: 'operator', before: { home_page: null }, after: { home_page: 'https://op.example/' } })

        const site = (await stack.admin<Site>('POST', '/admin/sites', { name: 'Operator site', owner: 'alice', callback: 'https://op.example/cb' })).body
        const renamed = await stack.admin<Record<string, unknown>>('PATCH', `/admin/sites/${site.api_key}`, { name: 'Renamed site', home_page: null })
        expect(renamed.status).toBe(200)
        expect(renamed.body).toMatchObject({ name: 'Renamed site', callback: 'https://op.example/cb', home_page: null })
        expect((await stack.admin('PATCH', `/admin/sites/${site.api_key}`, { callback: 'ftp://op.example/' })).status).toBe(400)
        expect((await stack.admin('PATCH', `/admin/sites/${site.api_key}`, { secret: 'mine' })).status).toBe(400)
        expect((await stack.admin('PATCH', `/admin/sites/${site.api_key}`, {})).status).toBe(400)
        expect((await stack.admin('PATCH', `/admin/sites/${randomBytes(18).toString('base64url')}`, { name: 'Nobody' })).status).toBe(404)
        expect((await stack.admin('GET', `/admin/sites/${site.api_key}`)).body).toMatchObject({ name: 'Renamed site', callback: 'https://op.example/cb' })
        expect((await auditOf('site', site.api_key))[0]).toMatchObject({ action: 'site.edit', by: 'operator', before: { name: 'Operator site' }, after: { name: 'Renamed site' } })

        const client = await registerClient(stack, { name: 'Operator client', owner: 'alice', redirect_uris: ['https://op.example/cb'] })
        const moved = await stack.admin<Record<string, unknown>>('PATCH', `/admin/oidc-clients/${client.client_id}`, { redirect_uris: ['https://op.example/new'] })
        expect(moved.status).toBe(200)
        expect(moved.body).toMatchObject({ name: 'Operator client', redirect_uris: ['https://op.example/new'], type: 'confidential' })
        expect((await stack.admin('PATCH', `/admin/oidc-clients/${client.client_id}`, { redirect_uris: ['ftp://op.example/'] })).status).toBe(400)
        expect((await stack.admin('PATCH', `/admin/oidc-clients/${client.client_id}`, { redirect_uris: [] })).status).toBe(400)
        expect((await stack.admin('PATCH', `/admin/oidc-clients/${client.client_id}`, { public: true })).status).toBe(400)
        expect((await stack.admin('PATCH', `/admin/oidc-clients/${client.client_id}`, {})).status).toBe(400)
        expect((await stack.admin('PATCH', '/admin/oidc-clients/no-such-client', { name: 'Nobody' })).status).toBe(404)
        expect((await stack.admin('GET', `/admin/oidc-clients/${client.client_id}`)).body).toMatchObject({ redirect_uris: ['https://op.example/new'], type: 'confidential' })
        expect((await auditOf('oidc', client.client_id))[0]).toMatchObject({ action: 'oidc_client.edit', by: 'operator', after: { redirect_uris: ['https://op.example/new'] } })

        // Malformed bodies are a 4xx in the operator API's JSON, never a 5xx, and change nothing.
        const views = async () => Promise.all([`/admin/apps/${app.consumer_key}`, `/admin/sites/${site.api_key}`, `/admin/oidc-clients/${client.client_id}`].map(async (path) => (await stack.admin('GET', path)).body))
        const before = await views()
        for (const path of [`/admin/apps/${app.consumer_key}`, `/admin/sites/${site.api_key}`, `/admin/oidc-clients/${client.client_id}`]) {
          for (const payload of ['null', 'true', '"x"', '[]', '{"a":', '{"name":{"x":1}}', '{"name":null}', '{"name":""}', '{"callback":1}', '{"home_page":[]}', '{"redirect_uris":[null]}', '{"redirect_uris":"x"}', '\u0000']) {
            const res = await fetch(stack.adminUrl + path, { method: 'PATCH', headers: { authorization: `Bearer ${stack.config.adminToken}`, 'content-type': 'application/json' }, body: payload })
            expect(res.status, `${path} ${payload}`).toBeGreaterThanOrEqual(400)
            expect(res.status, `${path} ${payload}`).toBeLessThan(500)
            expect(((await res.json()) as { error: { status: number } }).error.status).toBe(res.status)
          }
        }
        expect(await views()).toEqual(before)
      })
    })
  })
}
