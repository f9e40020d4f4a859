// `kigo usage` and `kigo policy show|set` (docs/operations.md#operator-command-line) run in-process against a whole kigo:
// the policy they set is the one the gateway applies, the usage they print is what the
// gateway recorded; wrong command lines exit 2, refused requests exit 1, one line each.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main } from '../../src/cli/kigo.js'
import { startStack, type Stack } from '../helpers/stack.js'
import { basicHeader, form, oauthHeader, wsseHeader } from '../gateway/policy/signers.js'
import { WebClient } from '../gateway/provider/helpers.js'

let stack: Stack
let env: Record<string, string>
let apiPassword: string

beforeAll(async () => {
  stack = await startStack()
  env = { KIGO_ADMIN_URL: stack.adminUrl, KIGO_ADMIN_TOKEN: stack.config.adminToken }
  apiPassword = (await stack.addUser('alice', 'Alice')).api_password
})

afterAll(async () => {
  await stack?.close()
})

async function kigo(...args: string[]) {
  let stdout = ''
  let stderr = ''
  const code = await main(args, env, { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) } })
  return { code, stdout, stderr }
}

async function kigoJson(...args: string[]) {
  const r = await kigo(...args, '--json')
  expect(r.stderr).toBe('')
  expect(r.code).toBe(0)
  return JSON.parse(r.stdout)
}

function expectFailure(r: { code: number; stdout: string; stderr: string }, code: number, pattern: RegExp) {
  expect(r.code).toBe(code)
  expect(r.stdout).toBe('')
  expect(r.stderr).toMatch(/^kigo: [^\n]+\n$/)
  expect(r.stderr).toMatch(pattern)
}

/** The fields of one RFC 4180 line. */
function csvFields(line: string): string[] {
  return [...line.matchAll(/("(?:[^"]|"")*"|[^,]*)(?:,|$)/g)].slice(0, -1).map((m) => (m[1]!.startsWith('"') ? m[1]!.slice(1, -1).replace(/""/g, '"') : m[1]!))
}

async function accountPageOf(user: string, password: string): Promise<string> {
  const web = new WebClient(stack.url)
  expect((await web.signIn('/account/login', user, password)).status).toBe(303)
  return (await web.get('/account')).text
}

const viaBasic = (userAgent: string) => fetch(`${stack.url}/api/statuses/update.json`, {
  method: 'POST',
  headers: { ...form, ...basicHeader('alice', apiPassword), 'user-agent': userAgent },
  body: 'status=hi',
})

describe('kigo policy', () => {
  it('shows the default policy: everything allowed', async () => {
    const json = await kigoJson('policy', 'show')
    expect(json.basic.state).toBe('allow')
    expect(json.wsse.state).toBe('allow')
    expect(json.login_api.state).toBe('allow')
    const text = await kigo('policy', 'show')
    expect(text.code).toBe(0)
    expect(text.stdout).toMatch(/^basic: allow now\n {2}clients are told: Works\. No end date is set yet\.\n {2}no change scheduled$/m)
    expect(text.stdout).toMatch(/^login_api: allow now\n {2}clients are told: Works\. No end date is set yet\.\n {2}no change scheduled$/m)
    expect(text.stdout).toMatch(/^oauth1 \(OAuth 1\.0a; counted as oauth\): allow now\n {2}clients are told: Works\./m)
    expect(text.stdout).toMatch(/^oauth2, oidc: allow \(always\)$/m)
    expect(text.stdout).toMatch(/^migration guide: https?:\/\//m)
  })

  it('sets deprecate with a sunset, and the gateway applies it', async () => {
    const json = await kigoJson('policy', 'set', 'basic', 'deprecate', '--sunset', '2099-01-01T00:00:00Z')
    expect(json.basic).toMatchObject({ state: 'deprecate', sunset: '2099-01-01T00:00:00Z' })
    const res = await viaBasic('cli-test/1')
    expect(res.status).toBe(200)
    expect(res.headers.get('deprecation')).toMatch(/^@[0-9]+$/)
    expect(res.headers.get('sunset')).toBe('Thu, 01 Jan 2099 00:00:00 GMT')
  })

  it('sets brownout windows and an exception, keeps them on a later change, and schedules with --from', async () => {
    await kigoJson('policy', 'set', 'wsse', 'brownout', '--windows', '09:00-12:00,21:00-24:00', '--except-user', 'alice', '--until', '2099-01-01T00:00:00Z')
    const scheduled = await kigoJson('policy', 'set', 'wsse', 'deny', '--from', '2099-06-01T00:00:00Z', '--except-user', 'bob', '--except-client', 'OldBot', '--until', '2099-02-01T00:00:00Z')
    expect(scheduled.wsse).toMatchObject({
      state: 'brownout',
      windows: [{ start: '09:00', end: '12:00' }, { start: '21:00', end: '24:00' }],
      schedule: [{ state: 'deny', from: '2099-06-01T00:00:00Z' }],
      exceptions: [{ user: 'alice', until: '2099-01-01T00:00:00Z' }, { user: 'bob', client: 'OldBot', until: '2099-02-01T00:00:00Z' }],
    })
    expect(scheduled.wsse.effective.next_change).toEqual({ state: 'deny', at: '2099-06-01T00:00:00Z' })
    const text = await kigo('policy', 'set', 'wsse', 'deprecate', '--exceptions', 'none', '--windows', 'none', '--schedule', 'none')
    expect(text.code).toBe(0)
    expect(text.stdout).toMatch(/^wsse: deprecate now\n {2}clients are told: Works, but is deprecated\. No end date is set yet\.\n {2}in effect since \S+Z\n/)
    // Windows and exceptions no longer apply: not shown.
    expect(text.stdout).not.toMatch(/window|exception/)
    const after = await kigoJson('policy', 'show')
    expect(after.wsse).toMatchObject({ state: 'deprecate', windows: [], schedule: [], exceptions: [] })
    // The exception the WSSE client had is gone, but deprecate still accepts it (with headers).
    const res = await fetch(`${stack.url}/api/statuses/update.json`, { method: 'POST', headers: { ...form, ...wsseHeader('alice', apiPassword, Date.now()) }, body: 'status=w' })
    expect(res.status).toBe(200)
    expect(res.headers.get('link')).toMatch(/rel="deprecation"/)
  })

  it('refuses wrong command lines with exit 2 and refused changes with exit 1', async () => {
    expectFailure(await kigo('policy', 'set', 'oauth', 'deny'), 2, /OAuth 1\.0a is the policy method oauth1/)
    expectFailure(await kigo('policy', 'set', 'digest', 'deny'), 2, /basic, wsse, login_api or oauth1/)
    expectFailure(await kigo('policy', 'set', 'basic', 'off'), 2, /allow, deprecate, brownout, deny/)
    expectFailure(await kigo('policy', 'set', 'basic', 'brownout', '--windows', '9-12'), 2, /--windows/)
    expectFailure(await kigo('policy', 'set', 'basic', 'deny', '--except-user', 'alice'), 2, /--until/)
    // A client name is self-declared: an exception for it alone would let anyone through.
    expectFailure(await kigo('policy', 'set', 'basic', 'deny', '--except-client', 'PartnerSync 2.1', '--until', '2099-01-01T00:00:00Z'), 2, /--except-user.*self-declared/)
    expectFailure(await kigo('policy', 'set', 'basic'), 2, /missing <state>/)
    expectFailure(await kigo('policy', 'set', 'basic', 'brownout'), 1, /window.*HTTP 400/)
    expectFailure(await kigo('policy', 'set', 'basic', 'deny', '--sunset', '2099-02-30T00:00:00Z'), 1, /sunset.*HTTP 400/)
    // Nothing of that changed the policy.
    expect((await kigoJson('policy', 'show')).basic.state).toBe('deprecate')
  })
})

describe('kigo policy show, history and refusals', () => {
  it('leads with the state in effect, then the scheduled change; settings that no longer act are not shown', async () => {
    await kigoJson('policy', 'set', 'basic', 'brownout', '--windows', '00:00-00:01', '--except-user', 'alice', '--until', '2099-01-01T00:00:00Z', '--sunset', '2099-01-01T00:00:00Z')
    await kigoJson('policy', 'set', 'basic', 'deny', '--from', '2099-06-01T00:00:00Z')
    const browning = (await kigo('policy', 'show')).stdout.split(/\n(?=\S)/)[0]!
    const lines = browning.split('\n')
    expect(lines[0]).toMatch(/^basic: brownout now/)
    expect(browning).toContain('brownout windows (UTC) 00:00-00:01')
    // The scheduled deny is the end clients are told of, not the earlier announced date.
    expect(browning).toContain('sunset 2099-06-01T00:00:00Z (the scheduled deny; announced 2099-01-01T00:00:00Z)')
    expect(browning).toContain('exception user alice until 2099-01-01T00:00:00Z')
    // The scheduled change comes after everything about the present.
    expect(lines.at(-1)).toBe('  scheduled: deny from 2099-06-01T00:00:00Z')

    // Leaving brownout: the windows are kept for a later brownout, but not shown as active.
    await kigoJson('policy', 'set', 'basic', 'deprecate', '--schedule', 'none')
    const deprecated = (await kigo('policy', 'show')).stdout.split(/\n(?=\S)/)[0]!
    expect(deprecated).toMatch(/^basic: deprecate now\n/)
    expect(deprecated).not.toMatch(/window|exception/)
    expect(deprecated).toContain('sunset 2099-01-01T00:00:00Z')
    expect(deprecated).toMatch(/no change scheduled$/)
  })

  it('says when the Sunset clients are sent moves: the README\'s steps, a deny scheduled after the announced sunset', async () => {
    await kigo('policy', 'set', 'login_api', 'allow', '--schedule', 'none', '--sunset', 'none')
    const announced = await kigo('policy', 'set', 'login_api', 'deprecate', '--sunset', '2099-06-30T00:00:00Z')
    expect(announced.code).toBe(0)
    expect(announced.stdout).not.toContain('note:')
    const denied = await kigo('policy', 'set', 'login_api', 'deny', '--from', '2099-07-01T00:00:00Z')
    expect(denied.code).toBe(0)
    expect(denied.stdout).toContain("note: clients' Sunset moves from 2099-06-30T00:00:00Z to 2099-07-01T00:00:00Z: the scheduled deny is the end clients are told of")
    expect(denied.stdout).toContain('--sunset 2099-07-01T00:00:00Z')
    // What clients are sent is what the note said.
    expect((await kigoJson('policy', 'show')).login_api.effective.ends_at).toBe('2099-07-01T00:00:00Z')
    // Made to agree, nothing moves and nothing is said.
    const agreed = await kigo('policy', 'set', 'login_api', 'deprecate', '--sunset', '2099-07-01T00:00:00Z')
    expect(agreed.stdout).not.toContain('note:')
    await kigo('policy', 'set', 'login_api', 'allow', '--schedule', 'none', '--sunset', 'none')
  })

  it('refuses a sunset in the past with a clear message', async () => {
    const r = await kigo('policy', 'set', 'basic', 'deprecate', '--sunset', '2020-01-01T00:00:00Z')
    expectFailure(r, 1, /sunset.*2020-01-01T00:00:00Z is in the past.*HTTP 400/)
    expect((await kigoJson('policy', 'show')).basic.sunset).not.toBe('2020-01-01T00:00:00Z')
  })

  it('policy history lists each change with before and after, newest first', async () => {
    await kigoJson('policy', 'set', 'wsse', 'deprecate', '--sunset', '2098-01-01T00:00:00Z')
    const history = await kigoJson('policy', 'history', '--method', 'wsse')
    expect(history.events.length).toBeGreaterThan(0)
    const [latest] = history.events
    expect(latest).toMatchObject({ kind: 'policy', action: 'policy.update', target: 'wsse', address: '127.0.0.1' })
    expect(latest.after.sunset).toBe('2098-01-01T00:00:00Z')
    expect(latest.before.sunset).not.toBe('2098-01-01T00:00:00Z')
    expect(history.events.every((e: { target: string }) => e.target === 'wsse')).toBe(true)
    const text = await kigo('policy', 'history', '--limit', '1')
    expect(text.code).toBe(0)
    expect(text.stdout).toMatch(/^\S+Z {2}wsse: deprecate -> deprecate {2}\(from 127\.0\.0\.1\)\n {2}sunset: \S+ -> "2098-01-01T00:00:00Z"\n$/)
    expectFailure(await kigo('policy', 'history', '--method', 'oauth'), 2, /basic, wsse, login_api or oauth1/)
  })
})

describe('kigo usage', () => {
  it('prints the usage report the gateway recorded, filtered', async () => {
    expect((await viaBasic('cli-test/1')).status).toBe(200)
    expect((await viaBasic('other-client/2')).status).toBe(200)
    const all = await kigoJson('usage')
    const basic = all.records.filter((r: { method: string }) => r.method === 'basic')
    const counts = Object.fromEntries(basic.map((r: { client: string; count: number }) => [r.client, r.count]))
    // cli-test/1 also made the request that checked the deprecation headers above.
    expect(counts).toEqual({ 'cli-test/1': 2, 'other-client/2': 1 })
    expect((await kigoJson('usage', '--method', 'wsse')).records.map((r: { method: string }) => r.method)).toEqual(['wsse'])
    expect((await kigoJson('usage', '--since', '2099-01-01T00:00:00Z')).records).toEqual([])

    const table = await kigo('usage', '--method', 'basic')
    expect(table.code).toBe(0)
    const lines = table.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^METHOD\s+USER\s+EMAIL\s+CLIENT\s+ACCEPTED\s+REFUSED_BY_POLICY\s+FAILED_CREDENTIALS\s+THROTTLED\s+COUNT\s+FIRST_SEEN\s+LAST_SEEN\s+MOVED\s+OAUTH_CLIENT\s+OAUTH_LAST_SEEN$/)
    expect(lines.slice(1).map((l) => l.split(/\s{2,}/).slice(0, 5).join(' ')).sort()).toEqual(['basic alice - cli-test/1 2', 'basic alice - other-client/2 1'])
  })

  it('filters, sorts, marks clients that moved to OAuth, names the contact, and exports CSV', async () => {
    const client = await stack.addOAuthClient('alice', ['write_public'])
    const url = `${stack.url}/api/statuses/update.json`
    // The same client name, now over OAuth: that client moved; other-client/2 did not.
    const viaOAuth = await fetch(url, { method: 'POST', headers: { ...form, ...oauthHeader(client, { url, method: 'POST', data: { status: 'o' } }, Date.now()), 'user-agent': 'cli-test/1' }, body: 'status=o' })
    expect(viaOAuth.status).toBe(200)
    expect((await fetch(url, { method: 'POST', headers: { ...form, ...basicHeader('alice', apiPassword), 'user-agent': '=HYPERLINK("x"),"quoted"' }, body: 'status=x' })).status).toBe(200)
    await kigoJson('users', 'set-email', 'alice', 'alice@example.com')

    const basic = (await kigoJson('usage', '--method', 'basic', '--sort', 'client', '--order', 'asc')).records
    expect(basic.map((r: { client: string }) => r.client)).toEqual(['=HYPERLINK("x"),"quoted"', 'cli-test/1', 'other-client/2'])
    const byClient = Object.fromEntries(basic.map((r: { client: string }) => [r.client, r]))
    expect(byClient['cli-test/1']).toMatchObject({ moved: true, email: 'alice@example.com', oauth_last_seen: expect.stringMatching(/Z$/) })
    expect(byClient['other-client/2']).toMatchObject({ moved: false, oauth_last_seen: null, email: 'alice@example.com' })
    // OAuth 1.0a rows are judged by the oauth1 rule: this token was neither exchanged nor authorized again.
    expect((await kigoJson('usage', '--method', 'oauth')).records[0]).toMatchObject({ client: 'cli-test/1', moved: false })

    expect((await kigoJson('usage', '--moved', 'no', '--method', 'basic')).records.map((r: { client: string }) => r.client).sort()).toEqual(['=HYPERLINK("x"),"quoted"', 'other-client/2'])
    expect((await kigoJson('usage', '--client', 'OTHER')).records.map((r: { client: string }) => r.client)).toEqual(['other-client/2'])
    const byCount = (await kigoJson('usage', '--method', 'basic', '--sort', 'count')).records.map((r: { count: number }) => r.count)
    expect(byCount).toEqual([...byCount].sort((a, b) => b - a))
    expect(byCount[0]).toBe(2)

    const csv = await kigo('usage', '--method', 'basic', '--sort', 'client', '--order', 'asc', '--csv')
    expect(csv.code).toBe(0)
    const lines = csv.stdout.split('\r\n')
    expect(lines[0]).toBe('method,user,email,client,accepted,refused_by_policy,failed_credentials,throttled,count,first_seen,last_seen,moved,oauth_client,oauth_last_seen')
    // A formula-looking client is neutralised and quoted (RFC 4180).
    expect(lines[1]).toMatch(/^basic,alice,alice@example\.com,"'=HYPERLINK\(""x""\),""quoted""",1,0,0,0,1,\S+Z,\S+Z,false,,$/)
    expect(lines[2]).toMatch(/^basic,alice,alice@example\.com,cli-test\/1,2,0,0,0,2,\S+Z,\S+Z,true,cli-test\/1,\S+Z$/)
    expect(lines.at(-1)).toBe('')

    const res = await fetch(`${stack.adminUrl}/admin/usage.csv?method=wsse`, { headers: { authorization: `Bearer ${stack.config.adminToken}` } })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8')
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="kigo-usage.csv"')
    const bad = await fetch(`${stack.adminUrl}/admin/usage.csv?sort=name`, { headers: { authorization: `Bearer ${stack.config.adminToken}` } })
    expect(bad.status).toBe(400)
    expect((await bad.json()).error.message).toMatch(/"sort" must be one of last_seen/)
    expect((await fetch(`${stack.adminUrl}/admin/usage.csv`)).status).toBe(401)
  })

  it('a client that moves to OAuth in a new version has moved (by family), and the account page says so', async () => {
    const bob = await stack.addUser('bobhaiku', 'Bob')
    const client = await stack.addOAuthClient('bobhaiku', ['write_public'])
    const url = `${stack.url}/api/statuses/update.json`
    const basic = await fetch(url, { method: 'POST', headers: { ...form, ...basicHeader('bobhaiku', bob.api_password), 'user-agent': 'HaikuDroid/3.2 (Android 12)' }, body: 'status=old' })
    expect(basic.status).toBe(200)
    await new Promise((r) => setTimeout(r, 1100)) // a later second than the Basic request
    const oauth = await fetch(url, { method: 'POST', headers: { ...form, ...oauthHeader(client, { url, method: 'POST', data: { status: 'new' } }, Date.now()), 'user-agent': 'HaikuDroid/4.0 (Android 14)' }, body: 'status=new' })
    expect(oauth.status).toBe(200)
    const [row] = (await kigoJson('usage', '--user', 'bobhaiku', '--method', 'basic')).records
    expect(row).toMatchObject({ client: 'HaikuDroid/3.2 (Android 12)', moved: true, oauth_client: 'HaikuDroid/4.0 (Android 14)' })
    expect((await kigoJson('usage', '--user', 'bobhaiku', '--moved', 'no', '--method', 'legacy')).records).toEqual([])

    // The account page: 3.2 is told as moved (to 4.0), not as a client to update.
    const html = await accountPageOf('bobhaiku', bob.password)
    const legacy = html.slice(html.indexOf('id="legacy"'), html.indexOf('</section>', html.indexOf('id="legacy"')))
    expect(legacy).toContain('HaikuDroid/3.2 (Android 12)')
    expect(legacy).toMatch(/Moved: HaikuDroid\/4\.0 \(Android 14\) signs in with OAuth/)
    expect(legacy).not.toMatch(/Works\. No end date/)
  })

  it('lists use only by default: no "(unknown users)" row or failed-only rows unless --all, in the CSV as in the table', async () => {
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${stack.url}/api/statuses/update.json`, { method: 'POST', headers: { ...form, ...basicHeader(`ghost${i}zz`, 'wrong'), 'user-agent': 'Spray/1' }, body: 'status=x' })
      expect(res.status).toBe(401)
    }
    const csv = await kigo('usage', '--csv', '--method', 'basic')
    expect(csv.code).toBe(0)
    expect(csv.stdout).not.toContain('(unknown users)')
    const rows = csv.stdout.trimEnd().split('\r\n').slice(1).map(csvFields)
    expect(rows.length).toBeGreaterThan(0)
    // Every row listed had use: accepted or refused by the policy.
    expect(rows.every((r) => Number(r[4]) + Number(r[5]) > 0)).toBe(true)
    const everything = await kigo('usage', '--csv', '--method', 'basic', '--all')
    expect(everything.stdout).toMatch(/^basic,\(unknown users\),,,0,0,2,0,2,/m)
    // The JSON API is the same query: the same rows, in the same order, as the CSV.
    const json = await kigoJson('usage', '--method', 'basic')
    expect(json.records.map((r: { user: string; client: string }) => `${r.user} ${r.client}`)).toEqual(rows.map((r) => `${r[1]} ${r[3]!.replace(/^'=/, '=')}`))
  })

  it('refuses a bad filter', async () => {
    expectFailure(await kigo('usage', '--method', 'digest'), 2, /basic, wsse, login_api, oauth, oauth2, oidc, legacy/)
    expectFailure(await kigo('usage', '--moved', 'maybe'), 2, /--moved must be yes or no/)
    expectFailure(await kigo('usage', '--sort', 'name'), 1, /"sort" must be one of.*HTTP 400/)
    expectFailure(await kigo('usage', '--order', 'up'), 1, /"order" must be asc or desc.*HTTP 400/)
    expectFailure(await kigo('usage', '--since', 'yesterday'), 1, /since.*HTTP 400/)
    const help = await kigo('usage', '--help')
    expect(help.code).toBe(0)
    expect(help.stdout).toMatch(/^Usage: kigo usage \[--method basic\|wsse\|login_api\|oauth\|oauth2\|oidc\|legacy\] \[--user ID\] \[--client TEXT\] \[--since ISO\]/)
    expect(help.stdout).toContain('--csv')
  })
})
