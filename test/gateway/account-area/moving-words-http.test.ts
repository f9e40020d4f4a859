// What an account holder reads about the migration, through a whole kigo (embedded, a
// real SMTP server, the test's clock): the account page's notice card and its tools
// table in words that match what they show, the login API told as the policy has it,
// the sign-in form's password, the guide pages' header for a signed-in reader, the page
// for people whose tools must move (/account/moving) on every host name, and
// `kigo users show` with the contact e-mail.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main } from '../../../src/cli/kigo.js'
import { startStack, type Stack } from '../../helpers/stack.js'
import { startTestSmtp, type TestSmtp } from '../../helpers/smtp.js'
import { bodyOf, rawGet, statusOf } from '../../helpers/raw-http.js'
import { basicHeader, form, oauthHeader, type OAuthClient } from '../policy/signers.js'
import { csrfOf, WebClient } from '../provider/helpers.js'

let clock = Date.parse('2030-03-01T08:00:00Z')
let stack: Stack
let smtp: TestSmtp
let env: Record<string, string>
const users: Record<string, { password: string; api_password: string }> = {}
let aliceApp: OAuthClient

async function kigo(...args: string[]) {
  let stdout = ''
  let stderr = ''
  const code = await main(args, env, { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) } })
  return { code, stdout, stderr }
}

const viaBasic = async (user: string, userAgent: string) => {
  const res = await fetch(`${stack.url}/api/statuses/update.json`, { method: 'POST', headers: { ...form, ...basicHeader(user, users[user]!.api_password), 'user-agent': userAgent }, body: 'status=hi' })
  await res.text()
  return res.status
}

const viaOAuth = async (app: OAuthClient, userAgent: string) => {
  const url = `${stack.url}/api/statuses/update.json`
  const res = await fetch(url, { method: 'POST', headers: { ...form, ...oauthHeader(app, { url, method: 'POST', data: { status: 'hi' } }, clock), 'user-agent': userAgent }, body: 'status=hi' })
  await res.text()
  return res.status
}

/** The element of `id` in `page` up to its closing `tag`. */
const part = (page: string, id: string, tag = 'section') => {
  const at = page.indexOf(`id="${id}"`)
  expect(at, `no #${id}`).toBeGreaterThan(-1)
  return page.slice(at, page.indexOf(`</${tag}>`, at))
}

/** What a reader sees of some markup: its text, tags dropped. */
const textOf = (markup: string) => markup.replace(/<[^>]+>/g, '').replace(/&#39;/g, "'").replace(/&quot;/g, '"').replace(/&amp;/g, '&')

const signedIn = async (user: string) => {
  const web = new WebClient(stack.url)
  expect((await web.signIn('/account/login', user, users[user]!.password)).status).toBe(303)
  return web
}

const setPolicy = async (body: Record<string, unknown>) => expect((await stack.admin('PUT', '/admin/policy', body)).status).toBe(200)

beforeAll(async () => {
  smtp = await startTestSmtp()
  stack = await startStack({
    now: () => clock,
    overrides: {
      domesticHostAliases: ['wiki.example'],
      mail: { smtpUrl: smtp.url, sendIntervalSeconds: 0 },
      notices: { intervalSeconds: 0 },
    },
  })
  env = { KIGO_ADMIN_URL: stack.adminUrl, KIGO_ADMIN_TOKEN: stack.config.adminToken }
  for (const id of ['alice', 'bobby']) users[id] = await stack.addUser(id, id[0]!.toUpperCase() + id.slice(1))
  expect((await stack.admin('PUT', '/admin/users/alice/email', { email: 'alice@example.test' })).status).toBe(200)
  aliceApp = await stack.addOAuthClient('alice', ['write_public'])
  // HaikuDroid still on Basic; Feeder moved to OAuth in the same version; Poster moved in a newer one.
  for (const ua of ['HaikuDroid/3.2', 'Feeder/1.0', 'Poster/1.0']) expect(await viaBasic('alice', ua)).toBe(200)
  clock += 60_000
  expect(await viaOAuth(aliceApp, 'Feeder/1.0')).toBe(200)
  expect(await viaOAuth(aliceApp, 'Poster/2.0')).toBe(200)
  expect((await stack.admin('GET', '/admin/usage')).status).toBe(200)
  await setPolicy({ basic: { state: 'deprecate', sunset: '2030-04-01T00:00:00Z', schedule: [{ state: 'deny', from: '2030-04-01T00:00:00Z' }] } })
}, 60_000)

afterAll(async () => {
  await stack?.close()
  await smtp?.close()
})

describe('the account page', () => {
  it('the notice card speaks of the list above it, and links to the page for moving tools', async () => {
    const card = part((await (await signedIn('alice')).get('/account')).text, 'migration-notice')
    expect(card).toContain('HaikuDroid/3.2')
    expect(textOf(card)).not.toMatch(/\bbelow\b/)
    expect(textOf(card)).toContain('Update each tool listed above')
    expect(card).toContain('href="/account/moving"')
  })

  it('a moved row speaks of an older version only when the one that moved is newer', async () => {
    const table = part((await (await signedIn('alice')).get('/account')).text, 'legacy')
    const row = (client: string) => textOf(table.split('<tr').find((r) => r.includes(`<strong>${client}</strong>`))!)
    expect(row('Feeder/1.0')).toContain('Moved: this client now signs in with OAuth (last 2030-03-01 08:01 UTC). Nothing to do.')
    expect(row('Feeder/1.0')).not.toContain('older version')
    expect(row('Poster/1.0')).toContain('Moved: Poster/2.0 signs in with OAuth (last 2030-03-01 08:01 UTC). Nothing to do, unless this older version still runs somewhere.')
    expect(row('HaikuDroid/3.2')).toContain('It stops working on 2030-04-01 00:00 UTC.')
    expect(table).toContain('<a href="/account/moving">How to move your tools</a>')
  })

  it('the login sites card and page say where the login API stands, as the policy has it', async () => {
    const web = await signedIn('alice')
    const allowed = textOf(part((await web.get('/account')).text, 'login-sites'))
    expect(allowed).toContain('Sites that sign people in with the login API')
    expect(allowed).toContain('The login API works, and no date is set for it to stop.')
    expect(allowed).not.toMatch(/retire/)
    expect(textOf(part((await web.get('/account/sites')).text, 'sites'))).not.toMatch(/retire/)

    await setPolicy({ login_api: { state: 'deprecate', sunset: '2030-05-01T00:00:00Z' } })
    const retiring = textOf(part((await web.get('/account')).text, 'login-sites'))
    expect(retiring).toContain('Sites that still sign people in with the login API')
    expect(retiring).toContain('The login API is being retired. Works, but is deprecated. It stops working on 2030-05-01 00:00 UTC.')
    expect(textOf(part((await web.get('/account/sites')).text, 'sites'))).toContain('The login API is being retired.')

    await setPolicy({ login_api: { state: 'deny' } })
    expect(textOf(part((await web.get('/account')).text, 'login-sites'))).toContain('The login API has been switched off. Refused: switched off since')
    await setPolicy({ login_api: { state: 'allow' } })
  })

  it('the sign-in form asks for the sign-in password, not the API password', async () => {
    const login = (await new WebClient(stack.url).get('/account/login')).text
    expect(login).toContain('<label for="password">Sign-in password</label>')
    expect(textOf(login)).toContain('not the API password that older tools (WSSE or Basic) use')
  })
})

describe('the guide pages and /account/moving know a signed-in reader', () => {
  it('a signed-in reader is offered the account and "Sign out", a visitor "Sign in"', async () => {
    const web = await signedIn('bobby')
    for (const path of ['/developers', '/migration', '/account/moving']) {
      const page = (await web.get(path)).text
      const header = page.slice(page.indexOf('<header'), page.indexOf('</header>'))
      expect(header, path).toContain('Bobby (bobby)')
      expect(header, path).toContain('<a href="/account">Account</a>')
      expect(header, path).toContain('Sign out')
      expect(header, path).not.toContain('Sign in')
      const visitor = (await new WebClient(stack.url).get(path)).text
      expect(visitor, path).toContain('<a class="signin" href="/account">Sign in</a>')
    }
  })
})

describe('/account/moving', () => {
  it('for a visitor: what stops working and when, how to see their own tools, what to ask the maker, how to let the new version in', async () => {
    const visitor = new WebClient(stack.url)
    const r = await visitor.get('/account/moving')
    expect(r.status).toBe(200)
    const page = r.text
    expect(textOf(part(page, 'what-breaks'))).toContain('HTTP Basic authentication: Works, but is deprecated. It stops working on 2030-04-01 00:00 UTC.')
    const tools = part(page, 'your-tools')
    expect(tools).toContain('href="/account/login?next=%2Faccount%2Fmoving"')
    expect(textOf(tools)).toContain('Sign in to see which of your tools still sign in the old way')
    const ask = textOf(part(page, 'ask-text', 'textarea'))
    expect(ask).toContain(`I use your tool with kigo (${stack.url}/).`)
    expect(ask).toContain('HTTP Basic authentication: Works, but is deprecated. It stops working on 2030-04-01 00:00 UTC.')
    expect(ask).toContain(`${stack.url}/developers`)
    expect(textOf(part(page, 'authorize'))).toContain(`Check that its address starts with ${stack.url}/oauth/authorize`)
    const afterwards = part(page, 'afterwards')
    expect(afterwards).toContain('href="/account#authorized"')
    expect(textOf(afterwards)).toContain('Revoke…')
    expect(page).toContain('<a href="/migration">migration guide</a> is for developers')
    // /migration speaks to developers, and sends a tool's user here.
    expect((await visitor.get('/migration')).text).toContain('<a href="/account/moving">Moving your tools</a>')
    // Signing in from the link comes back here.
    const login = await visitor.get('/account/login?next=%2Faccount%2Fmoving')
    const back = await visitor.post('/account/login', { csrf_token: csrfOf(login.text), next: '/account/moving', username: 'alice', password: users.alice!.password })
    expect(back.status).toBe(303)
    expect(back.headers.get('location')).toBe('/account/moving')
  })

  it('signed in: their own tools, moved ones apart, and the text to the maker names theirs', async () => {
    const page = (await (await signedIn('alice')).get('/account/moving')).text
    const tools = part(page, 'your-tools')
    const toMove = tools.slice(tools.indexOf('class="tools-to-move"'), tools.indexOf('</ul>'))
    expect(toMove).toContain('HaikuDroid/3.2')
    expect(toMove).not.toContain('Feeder')
    const moved = tools.slice(tools.indexOf('class="tools-moved"'))
    expect(moved).toContain('Feeder/1.0')
    expect(moved).toContain('Poster/1.0')
    expect(textOf(part(page, 'ask-text', 'textarea'))).toContain(`I use HaikuDroid/3.2 with kigo (${stack.url}/).`)
    // Another user sees their own (none), never alice's.
    const bobby = part((await (await signedIn('bobby')).get('/account/moving')).text, 'your-tools')
    expect(textOf(bobby)).toContain('None of your tools has signed in the old way lately')
    expect(bobby).not.toContain('HaikuDroid')
  })

  it('names the deployment it is read at: an alias names its main host, the global deployment its own', async () => {
    const port = Number(new URL(stack.url).port)
    const viaAlias = await rawGet(port, '/account/moving', 'wiki.example')
    expect(statusOf(viaAlias)).toBe(200)
    expect(bodyOf(viaAlias)).toContain(`${stack.url}/oauth/authorize`)
    expect(bodyOf(viaAlias)).not.toContain('wiki.example')
    const global = await fetch(`${stack.globalUrl}/account/moving`)
    expect(global.status).toBe(200)
    const text = await global.text()
    expect(text).toContain(`${stack.globalUrl}/oauth/authorize`)
    expect(text).toContain(`${stack.globalUrl}/developers`)
  })
})

describe('kigo users show', () => {
  it('shows the contact e-mail in use, and a new one waiting for its owner to confirm it', async () => {
    const shown = await kigo('users', 'show', 'alice')
    expect(shown.code).toBe(0)
    expect(shown.stdout).toMatch(/^email\s+alice@example\.test \(in use: confirmed by its owner, or set by an operator\)$/m)
    expect(shown.stdout).not.toMatch(/^email_pending/m)

    // bobby asks for an address: it waits for the link mailed to it.
    const web = await signedIn('bobby')
    const account = await web.get('/account')
    expect((await web.post('/account/email', { csrf_token: csrfOf(account.text), email: 'bobby@example.test', current_password: users.bobby!.password })).status).toBe(303)
    const pending = await kigo('users', 'show', 'bobby', '--json')
    expect(JSON.parse(pending.stdout)).toEqual({ id: 'bobby', name: 'Bobby', email: null, email_pending: 'bobby@example.test', email_pending_until: expect.stringMatching(/^2030-03-\d\dT\d\d:\d\d:\d\dZ$/), created_at: expect.stringMatching(/Z$/) })
    const text = (await kigo('users', 'show', 'bobby')).stdout
    expect(text).toMatch(/^email\s+none$/m)
    expect(text).toMatch(/^email_pending\s+bobby@example\.test \(not confirmed yet: its link works until 2030-03-\d\dT\d\d:\d\d:\d\dZ\)$/m)
  })
})
