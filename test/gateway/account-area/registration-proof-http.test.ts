// A stolen session cannot move where a registration sends people back
// (docs/security.md#a-stolen-session): changing an OAuth application's or a login site's
// callback, or an OpenID Connect client's redirect URIs, asks for the owner's current
// password unless they signed in within the last 5 minutes; the form shows the field
// only then. A refusal changes nothing; a rename needs no password. The clock is the
// stack's, moved forward instead of waiting.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { gatewayApp, type GatewayApp } from '../../helpers/gateway-app.js'
import { WebClient, csrfOf } from '../provider/helpers.js'
import { registerClient } from '../oidc/helpers.js'

let stack: GatewayApp
let offset = 0
let owner: { id: string; password: string }
const minutes = (n: number) => n * 60_000

beforeAll(async () => {
  stack = await gatewayApp({ now: () => Date.now() + offset })
  owner = await stack.addUser('olive', 'Olive')
}, 60_000)

afterAll(async () => {
  await stack?.close()
})

/** The owner signed in `ago` minutes before the requests that follow. */
async function signedIn(ago: number): Promise<WebClient> {
  offset = 0
  const web = new WebClient(stack.url, stack.fetch)
  expect((await web.signIn('/account/login', owner.id, owner.password)).status).toBe(303)
  offset = minutes(ago)
  return web
}

/** A kind of registration: how to make one of the owner's, where its form is, and what is stored. */
interface Kind {
  title: string
  /** What the form asks the password for, as its message says. */
  what: string
  create(): Promise<{ page: string; edit: string; read: () => Promise<{ name: string; target: unknown }> }>
  /** The edit form's fields: the name, and where people are sent back. */
  fields(name: string, target: string): Record<string, string>
  /** `target` as the operator API reads it back. */
  stored(target: string): unknown
}

let made = 0
const kinds: Kind[] = [
  {
    title: 'an OAuth application',
    what: 'callback URL',
    async create() {
      const r = await stack.admin<{ consumer_key: string }>('POST', '/admin/apps', { name: `App ${++made}`, owner: owner.id, scopes: ['read_public'], callback: 'https://good.example/cb' })
      expect(r.status).toBe(201)
      const key = r.body.consumer_key
      const read = async () => {
        const body = (await stack.admin<{ name: string; callback: string | null }>('GET', `/admin/apps/${key}`)).body
        return { name: body.name, target: body.callback }
      }
      return { page: `/account/apps/${key}`, edit: `/account/apps/${key}/edit`, read }
    },
    fields: (name, target) => ({ name, callback: target, home_url: '' }),
    stored: (target) => target,
  },
  {
    title: 'a login site',
    what: 'callback URL',
    async create() {
      const r = await stack.admin<{ api_key: string }>('POST', '/admin/sites', { name: `Site ${++made}`, owner: owner.id, callback: 'https://good.example/cb' })
      expect(r.status).toBe(201)
      const key = r.body.api_key
      const read = async () => {
        const body = (await stack.admin<{ name: string; callback: string }>('GET', `/admin/sites/${key}`)).body
        return { name: body.name, target: body.callback }
      }
      return { page: '/account/sites', edit: `/account/sites/${key}/edit`, read }
    },
    fields: (name, target) => ({ name, callback: target, home_url: '' }),
    stored: (target) => target,
  },
  {
    title: 'an OpenID Connect client',
    what: 'redirect URIs',
    async create() {
      const client = await registerClient(stack, { name: `Client ${++made}`, owner: owner.id, redirect_uris: ['https://good.example/cb'] })
      const read = async () => {
        const body = (await stack.admin<{ name: string; redirect_uris: string[] }>('GET', `/admin/oidc-clients/${client.client_id}`)).body
        return { name: body.name, target: body.redirect_uris }
      }
      return { page: '/account/oidc-clients', edit: `/account/oidc-clients/${client.client_id}/edit`, read }
    },
    fields: (name, target) => ({ name, redirect_uris: target, post_logout_redirect_uris: '' }),
    stored: (target) => [target],
  },
]

for (const kind of kinds) {
  describe(`changing where ${kind.title} sends people back`, () => {
    it('with a session signed in over 5 minutes ago: refused without the password or with a wrong one, changing nothing; done with the right one', async () => {
      const r = await kind.create()
      const before = await r.read()
      const web = await signedIn(6)
      const page = await web.get(r.page)
      expect(page.status).toBe(200)
      expect(page.text).toContain('name="current_password"')
      const csrf_token = csrfOf(page.text)
      const moved = kind.fields(before.name, 'https://thief.example/cb')

      const bare = await web.post(r.edit, { csrf_token, ...moved })
      expect(bare.status).toBe(400)
      expect(bare.text).toContain(`Enter your current password to change the ${kind.what}. Nothing was changed.`)
      expect(bare.text).toContain('thief.example')
      expect(await r.read()).toEqual(before)

      const guessed = await web.post(r.edit, { csrf_token, ...moved, current_password: 'not-her-password' })
      expect(guessed.status).toBe(403)
      expect(guessed.text).toContain('Your current password is not right. Nothing was changed.')
      expect(await r.read()).toEqual(before)

      const proven = await web.post(r.edit, { csrf_token, ...moved, current_password: owner.password })
      expect(proven.status).toBe(303)
      expect(await r.read()).toEqual({ name: before.name, target: kind.stored('https://thief.example/cb') })
    })

    it('within 5 minutes of signing in: the form asks for no password and the change is made', async () => {
      const r = await kind.create()
      const before = await r.read()
      const web = await signedIn(4)
      const page = await web.get(r.page)
      expect(page.text).not.toContain('name="current_password"')
      const edited = await web.post(r.edit, { csrf_token: csrfOf(page.text), ...kind.fields(before.name, 'https://new.example/cb') })
      expect(edited.status).toBe(303)
      expect(await r.read()).toEqual({ name: before.name, target: kind.stored('https://new.example/cb') })

      // The same session, past 5 minutes: the next change needs the password again.
      offset = minutes(6)
      const later = await web.get(r.page)
      expect(later.text).toContain('name="current_password"')
      const again = await web.post(r.edit, { csrf_token: csrfOf(later.text), ...kind.fields(before.name, 'https://thief.example/cb') })
      expect(again.status).toBe(400)
      expect(await r.read()).toEqual({ name: before.name, target: kind.stored('https://new.example/cb') })
    })

    it('a new name alone needs no password, however old the session', async () => {
      const r = await kind.create()
      const before = await r.read()
      const web = await signedIn(60)
      const page = await web.get(r.page)
      expect(page.text).toContain('name="current_password"')
      const edited = await web.post(r.edit, { csrf_token: csrfOf(page.text), ...kind.fields('Renamed', 'https://good.example/cb') })
      expect(edited.status).toBe(303)
      expect(await r.read()).toEqual({ name: 'Renamed', target: before.target })
    })
  })
}
