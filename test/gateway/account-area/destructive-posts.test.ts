// What cannot be undone asks first, everywhere on the account pages
// (docs/gateway.md#the-oauth-provider-and-the-account-pages): every destructive post
// without `confirm=yes` (a valid form with the session's CSRF token, as its button sends
// it) answers the confirmation page and changes nothing. Shown by the things it would
// have changed still working, and by an audit trail with no new change.
import { afterAll, beforeAll, expect, it } from 'vitest'
import { startStack, type Stack } from '../../helpers/stack.js'
import { WebClient, csrfOf } from '../provider/helpers.js'
import { basicHeader } from '../policy/signers.js'
import { browse, discover, registerClient, startSignIn, type RegisteredClient } from '../oidc/helpers.js'

let stack: Stack
let alice: { id: string; password: string; api_password: string }
let web: WebClient
let app: { consumerKey: string }
let site: { api_key: string }
let rp: RegisteredClient
let signedInTo: RegisteredClient

beforeAll(async () => {
  stack = await startStack()
  alice = await stack.addUser('alice', 'Alice')
  // An application of hers, which also holds an access token for her (so it can be revoked).
  app = await stack.addOAuthClient('alice', ['read_public'])
  site = (await stack.admin<{ api_key: string }>('POST', '/admin/sites', { name: 'Diary', owner: 'alice', callback: 'https://diary.example/cb' })).body
  rp = await registerClient(stack, { name: 'Her RP', owner: 'alice', redirect_uris: ['https://rp.example/cb'] })
  // A site she signed in to with OpenID Connect.
  const redirectUri = 'https://tea.example/cb'
  signedInTo = await registerClient(stack, { name: 'Tea Party', owner: 'alice', redirect_uris: [redirectUri], public: true })
  const config = await discover(stack.url, signedInTo)
  const { browser } = await browse((await startSignIn(config, redirectUri)).url, redirectUri, alice)
  web = browser
}, 120_000)

afterAll(async () => {
  await stack?.close()
})

const events = async () => (await stack.admin<{ events: unknown[] }>('GET', '/admin/audit?limit=1000')).body.events.length

it('every destructive post without confirm=yes asks, and changes nothing', async () => {
  const account = await web.get('/account')
  expect(account.text).toContain('Tea Party')
  const csrf_token = csrfOf(account.text)
  const before = await events()
  const posts: Array<[string, Record<string, string>]> = [
    ['/account/api-password', {}],
    ['/account/revoke', { consumer_key: app.consumerKey }],
    [`/account/apps/${app.consumerKey}/rotate-secret`, {}],
    [`/account/apps/${app.consumerKey}/delete`, {}],
    [`/account/sites/${site.api_key}/rotate-secret`, {}],
    [`/account/sites/${site.api_key}/delete`, {}],
    [`/account/oidc-clients/${rp.client_id}/rotate-secret`, {}],
    [`/account/oidc-clients/${rp.client_id}/delete`, {}],
    ['/account/oidc-sites/revoke', { client_id: signedInTo.client_id }],
  ]
  for (const [path, fields] of posts) {
    const answer = await web.post(path, { csrf_token, ...fields })
    expect(answer.status, path).toBe(200)
    // The confirmation page: its form posts the same path again, confirmed.
    expect(answer.text, path).toContain('id="confirm"')
    expect(answer.text, path).toMatch(new RegExp(`<form method="post" action="${path.replace(/[/.]/g, '\\$&')}">`))
    expect(answer.text, path).toContain('name="confirm" value="yes"')
  }
  // Nothing changed: no audited change, and everything still works.
  expect(await events()).toBe(before)
  const viaBasic = await fetch(`${stack.url}/api/statuses/user_timeline.json`, { headers: basicHeader('alice', alice.api_password) })
  expect(viaBasic.status).toBe(200)
  const after = await web.get('/account')
  expect(after.text).toContain('Tea Party')
  expect(after.text).toContain(app.consumerKey)
  expect((await stack.admin('GET', `/admin/sites/${site.api_key}`)).status).toBe(200)
  expect((await stack.admin('GET', `/admin/oidc-clients/${rp.client_id}`)).status).toBe(200)
  expect((await stack.admin('GET', `/admin/apps/${app.consumerKey}`)).status).toBe(200)
})
