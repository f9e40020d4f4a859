// Changing the migration policy from the dashboard (docs/operations.md#changing-the-policy-on-the-dashboard),
// over HTTP as a browser posts its forms: the preview shows what changes, the plan of
// `kigo policy plan` and where clients' Sunset moves, and changes nothing; Apply changes
// the policy, recorded in the audit trail as the operator's; a post from another origin or
// without the session, a bad date, or a preview overtaken by another change changes
// nothing. Embedded and PostgreSQL. The gateway runs on the test's clock.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main } from '../../../src/cli/kigo.js'
import { dashboardSignIn, formHeaders } from '../../helpers/dashboard.js'
import { freshPostgres } from '../../helpers/services.js'
import { startStack, type Stack } from '../../helpers/stack.js'
import { basicHeader, form } from '../policy/signers.js'

const clock = Date.parse('2030-03-01T08:00:00Z')
const pg = await freshPostgres()

const unescaped = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&')

/** The hidden fields of the preview's Apply form: what a click on Apply posts. */
function applyFields(page: string): Record<string, string> {
  const apply = /<form class="apply"[^]*?<\/form>/.exec(page)
  expect(apply, 'the preview has an Apply form').not.toBeNull()
  return Object.fromEntries([...apply![0].matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, unescaped(m[2]!)]))
}

/** The text of the element with `id`'s list items, or of the element itself. */
const itemsOf = (page: string, id: string) => {
  const at = page.indexOf(`id="${id}"`)
  expect(at, id).toBeGreaterThan(-1)
  const part = page.slice(at, page.indexOf('</ul>', at))
  return [...part.matchAll(/<li[^>]*>([^]*?)<\/li>/g)].map((m) => unescaped(m[1]!.replace(/<[^>]+>/g, '')))
}

describe.each([
  { backend: 'embedded', databaseUrl: undefined as string | undefined },
  ...(pg ? [{ backend: 'PostgreSQL', databaseUrl: pg.url }] : []),
])('the dashboard\'s policy forms ($backend)', ({ databaseUrl }) => {
  let stack: Stack
  let cookie: string
  let env: Record<string, string>

  beforeAll(async () => {
    stack = await startStack({ now: () => clock, ...(databaseUrl ? { databaseUrl } : {}) })
    env = { KIGO_ADMIN_URL: stack.adminUrl, KIGO_ADMIN_TOKEN: stack.config.adminToken }
    const alice = await stack.addUser('alice', 'Alice')
    const bobby = await stack.addUser('bobby', 'Bob')
    expect((await stack.admin('PUT', '/admin/users/alice/email', { email: 'alice@example.test' })).status).toBe(200)
    for (const [id, user] of [['alice', alice], ['bobby', bobby], ['alice', alice]] as const) {
      const res = await fetch(`${stack.url}/api/statuses/update.json`, { method: 'POST', headers: { ...form, ...basicHeader(id, user.api_password), 'user-agent': `${id}-client/1.0` }, body: 'status=hi' })
      await res.arrayBuffer()
      expect(res.status).toBe(200)
    }
    // GET /admin/usage writes the gateway's pending usage first.
    expect((await stack.admin('GET', '/admin/usage')).status).toBe(200)
    cookie = await dashboardSignIn(stack)
  })

  afterAll(async () => {
    await stack?.close()
  })

  const post = async (path: string, fields: Record<string, string>, headers: Record<string, string> = { cookie }) => {
    const res = await fetch(`${stack.adminUrl}${path}`, { method: 'POST', headers: { ...formHeaders, ...headers }, body: new URLSearchParams(fields), redirect: 'manual' })
    return { status: res.status, location: res.headers.get('location'), page: await res.text() }
  }
  const policy = async () => (await stack.admin<Record<string, Record<string, unknown>>>('GET', '/admin/policy')).body
  const policyEvents = async () => (await stack.admin<{ events: Array<{ by: string; action: string; target: string; after: Record<string, unknown> }> }>('GET', '/admin/audit?kind=policy')).body.events
  const kigo = async (...args: string[]) => {
    let stdout = ''
    const code = await main(args, env, { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: () => undefined } })
    expect(code, args.join(' ')).toBe(0)
    return stdout
  }

  const announce = { method: 'basic', state: 'deprecate', sunset: '2030-06-30T00:00:00Z', deny_from: '2030-07-01', windows: '' }

  it('the dashboard has a change form per legacy method, filled with its stored policy', async () => {
    const page = await (await fetch(`${stack.adminUrl}/admin/`, { headers: { cookie } })).text()
    const forms = [...page.matchAll(/<form class="policy-form" method="post" action="\/admin\/policy\/preview" data-method="([a-z_0-9]+)">/g)].map((m) => m[1])
    expect(forms).toEqual(['basic', 'wsse', 'login_api', 'oauth1'])
    // Only OAuth 1.0a has registrations to close.
    expect([...page.matchAll(/name="close_registration"/g)]).toHaveLength(1)
    expect(page).toContain('<option value="allow" selected>allow</option>')
  })

  it('the preview shows each changed field, the plan of kigo policy plan and the notices due, and changes nothing', async () => {
    const before = await policy()
    const { status, page } = await post('/admin/policy/preview', announce)
    expect(status).toBe(200)
    const row = (field: string) => unescaped(/<tr data-field="([a-z_]+)">([^]*?)<\/tr>/g.exec(page.slice(page.indexOf(`<tr data-field="${field}">`)))?.[2]?.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim() ?? '')
    expect(row('state')).toBe('state "allow" "deprecate"')
    // Every instant on the page written one way, as clients are told them.
    expect(row('sunset')).toBe('sunset null "2030-06-30 00:00 UTC"')
    expect(row('schedule')).toBe('schedule [] [{"state":"deny","from":"2030-07-01 00:00 UTC"}]')
    expect(row('since')).toBe('since (default) when you apply')

    // Two states begin: deprecate now, deny on 1 July; each line is `kigo policy plan`'s.
    const deny = await kigo('policy', 'plan', 'basic', 'deny', '--from', '2030-07-01T00:00:00Z')
    const now = await kigo('policy', 'plan', 'basic', 'deprecate')
    const asOnPage = (line: string) => line.trimEnd().replace('2030-03-01T08:00:00Z', '2030-03-01 08:00 UTC').replace('2030-07-01T00:00:00Z', '2030-07-01 00:00 UTC')
    expect(itemsOf(page, 'policy-plan')).toEqual([asOnPage(now), asOnPage(deny)])
    expect(deny).toBe('basic deny from 2030-07-01T00:00:00Z: 2 users (1 with a contact e-mail, 1 without) not moved yet, 2 clients, 3 accepted requests in the last 30 days (0 users moved, not counted). Their requests are refused. Notices go to those users: 1 by mail, 1 on the account page only (no contact e-mail).\n')
    expect(page).toMatch(/Notices due: <strong>announced<\/strong> <span class="muted">\(now: none\)<\/span>/)

    // Nothing changed, nothing recorded.
    expect(await policy()).toEqual(before)
    expect(await policyEvents()).toEqual([])
  })

  it('Apply changes the policy, recorded as the operator\'s; the dashboard says so', async () => {
    const preview = await post('/admin/policy/preview', announce)
    const applied = await post('/admin/policy/apply', applyFields(preview.page))
    expect(applied.status).toBe(303)
    expect(applied.location).toBe('/admin/?applied=basic#policy')
    expect(await policy()).toMatchObject({ basic: { state: 'deprecate', sunset: '2030-06-30T00:00:00Z', schedule: [{ state: 'deny', from: '2030-07-01T00:00:00Z' }], windows: [] } })
    const events = await policyEvents()
    expect(events.map((e) => [e.by, e.action, e.target, e.after.state])).toEqual([['operator', 'policy.update', 'basic', 'deprecate']])
    const page = await (await fetch(`${stack.adminUrl}${applied.location}`, { headers: { cookie } })).text()
    expect(page).toContain('The Basic policy was changed')
    expect(page).toContain('<input name="deny_from" value="2030-07-01T00:00:00Z"')
  })

  it('a deny moved past the announced sunset: the preview says where clients\' Sunset moves, as kigo policy set does', async () => {
    const { status, page } = await post('/admin/policy/preview', { ...announce, deny_from: '2030-08-01T00:00:00Z' })
    expect(status).toBe(200)
    expect(unescaped(/<p class="notice" id="sunset-moved">([^<]*)<\/p>/.exec(page)![1]!)).toBe(
      "Note: clients' Sunset moves from 2030-07-01 00:00 UTC to 2030-08-01 00:00 UTC: the scheduled deny is the end clients are told of; the announced sunset 2030-06-30 00:00 UTC is kept but no longer sent (set the sunset to 2030-08-01 00:00 UTC to make them agree).")
    // The same form, unchanged, changes nothing: no Apply.
    const same = await post('/admin/policy/preview', announce)
    expect(same.page).toContain('id="policy-unchanged"')
    expect(same.page).not.toContain('class="apply"')
  })

  it('a post from another origin or without the session changes nothing', async () => {
    const before = await policy()
    const events = (await policyEvents()).length
    const fields = applyFields((await post('/admin/policy/preview', { method: 'wsse', state: 'deny', sunset: '', deny_from: '', windows: '' })).page)
    for (const path of ['/admin/policy/preview', '/admin/policy/apply']) {
      const foreign = await post(path, fields, { cookie, origin: 'http://evil.example' })
      expect(foreign.status, path).toBe(403)
      expect(foreign.page).toContain('came from another site; nothing was changed')
      const anonymous = await post(path, fields, {})
      expect(anonymous.status, path).toBe(401)
      expect(anonymous.page).toContain('name="token"')
      expect((await post(path, fields, { cookie: `${cookie.slice(0, -2)}xx` })).status, path).toBe(401)
    }
    expect(await policy()).toEqual(before)
    expect(await policyEvents()).toHaveLength(events)
    // The same fields from the dashboard's own origin, with the session, do apply.
    expect((await post('/admin/policy/apply', fields, { cookie, origin: stack.adminUrl })).status).toBe(303)
    expect((await policy()).wsse!.state).toBe('deny')
  })

  it('a bad value brings the form back with the error and the input kept; nothing changed', async () => {
    const before = await policy()
    const events = (await policyEvents()).length
    const blank = { method: 'login_api', state: 'deprecate', sunset: '', deny_from: '', windows: '' }
    const cases: Array<[Record<string, string>, string, string]> = [
      [{ sunset: 'next tuesday' }, 'Sunset: &quot;next tuesday&quot; is not a date', 'value="next tuesday"'],
      [{ deny_from: '2030-02-30' }, '&quot;Deny from&quot; is not a valid date-time', 'value="2030-02-30"'],
      [{ sunset: '2029-01-01' }, 'is in the past', 'value="2029-01-01"'],
      [{ state: 'brownout', windows: '25:00-26:00' }, 'Brownout windows: 25:00-26:00 is not a window', 'value="25:00-26:00"'],
      [{ state: 'brownout' }, 'must list at least one brownout window', '<option value="brownout" selected>'],
      [{ state: 'gone' }, 'State: choose one of allow, deprecate, brownout, deny', 'name="sunset"'],
    ]
    for (const [change, error, kept] of cases) {
      for (const path of ['/admin/policy/preview', '/admin/policy/apply']) {
        const { status, page } = await post(path, { ...blank, ...change, base: 'x' })
        expect(status, `${path} ${JSON.stringify(change)}`).toBe(400)
        expect(page).toContain('<p class="error" role="alert">')
        expect(page).toContain(error)
        expect(page).toContain(kept)
      }
    }
    expect((await post('/admin/policy/preview', { method: 'oauth', state: 'deny' })).status).toBe(400)
    expect(await policy()).toEqual(before)
    expect(await policyEvents()).toHaveLength(events)
  })

  it('the OAuth 1.0a form closes the registration of new applications: previewed, applied, then shown checked', async () => {
    const preview = await post('/admin/policy/preview', { method: 'oauth1', state: 'deprecate', sunset: '', deny_from: '', windows: '', close_registration: 'on' })
    expect(preview.status).toBe(200)
    expect(preview.page).toContain('<tr data-field="registration_closed">')
    expect(applyFields(preview.page)).toMatchObject({ method: 'oauth1', close_registration: 'on' })
    expect((await policy()).oauth1).not.toHaveProperty('registration_closed')
    const applied = await post('/admin/policy/apply', applyFields(preview.page))
    expect(applied.status).toBe(303)
    expect((await policy()).oauth1).toMatchObject({ state: 'deprecate', registration_closed: true })
    const page = await (await fetch(`${stack.adminUrl}/admin/`, { headers: { cookie } })).text()
    expect(page).toContain('<input type="checkbox" name="close_registration" value="on" checked>')
    // No new OAuth 1.0a application now.
    expect((await stack.admin('POST', '/admin/apps', { name: 'Late', owner: 'alice', scopes: ['read_public'] })).status).toBe(403)
    // Unchecked, it reopens.
    const reopen = await post('/admin/policy/preview', { method: 'oauth1', state: 'deprecate', sunset: '', deny_from: '', windows: '' })
    expect((await post('/admin/policy/apply', applyFields(reopen.page))).status).toBe(303)
    expect((await policy()).oauth1).not.toHaveProperty('registration_closed')
    expect((await stack.admin('POST', '/admin/apps', { name: 'Late', owner: 'alice', scopes: ['read_public'] })).status).toBe(201)
  })

  it('an Apply whose policy changed since its preview is shown again, not applied', async () => {
    const preview = await post('/admin/policy/preview', { method: 'login_api', state: 'deprecate', sunset: '2030-09-30', deny_from: '', windows: '' })
    expect((await stack.admin('PUT', '/admin/policy', { login_api: { state: 'deprecate', sunset: '2030-12-31T00:00:00Z' } })).status).toBe(200)
    const stale = await post('/admin/policy/apply', applyFields(preview.page))
    expect(stale.status).toBe(409)
    expect(stale.page).toContain('changed after your preview')
    expect((await policy()).login_api).toMatchObject({ sunset: '2030-12-31T00:00:00Z' })
    // Its Apply, against the policy as it is now, goes through.
    expect((await post('/admin/policy/apply', applyFields(stale.page))).status).toBe(303)
    expect((await policy()).login_api).toMatchObject({ sunset: '2030-09-30T00:00:00Z' })
  })
})

afterAll(async () => {
  await pg?.drop()
})
