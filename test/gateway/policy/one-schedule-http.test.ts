// One schedule per method (docs/gateway.md#one-schedule), through a whole kigo on an
// injected clock: a change replaces every scheduled entry that would undo it and says so
// (PUT /admin/policy's answer, `kigo policy set`, the dashboard's preview, the audit);
// every write is a compare-and-set on the version GET /admin/policy gives.
import { PassThrough } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main } from '../../../src/cli/kigo.js'
import { cliOf } from '../../helpers/cli.js'
import { dashboardSignIn, formHeaders } from '../../helpers/dashboard.js'
import { startStack, type Stack } from '../../helpers/stack.js'
import { form, wsseHeader } from './signers.js'

let clock = Date.parse('2030-03-01T08:00:00Z')
let stack: Stack
let env: Record<string, string>
let alice: { api_password: string }

beforeAll(async () => {
  stack = await startStack({ now: () => clock })
  env = { KIGO_ADMIN_URL: stack.adminUrl, KIGO_ADMIN_TOKEN: stack.config.adminToken }
  alice = await stack.addUser('alice', 'Alice')
})

afterAll(async () => {
  await stack?.close()
})

const { kigo } = cliOf(() => env)

async function kigoOk(...args: string[]) {
  const r = await kigo(...args)
  expect(r.stderr, args.join(' ')).toBe('')
  expect(r.code).toBe(0)
  return r.stdout
}

type View = Record<string, { state: string; schedule: Array<{ state: string; from: string }>; effective: { next_change: unknown } }> & { version: string }

async function getPolicy() {
  const res = await fetch(`${stack.adminUrl}/admin/policy`, { headers: { authorization: `Bearer ${stack.config.adminToken}` } })
  return { etag: res.headers.get('etag'), body: (await res.json()) as View }
}

function putPolicy(body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${stack.adminUrl}/admin/policy`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${stack.config.adminToken}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  })
}

const viaWsse = async () => {
  const res = await fetch(`${stack.url}/api/statuses/update.json`, { method: 'POST', headers: { ...form, ...wsseHeader('alice', alice.api_password, clock) }, body: 'status=hi' })
  return { status: res.status, body: (await res.json()) as { error?: { code: string } } }
}

describe('one schedule', () => {
  it('a deny made now drops the brownout scheduled before it, says so everywhere, and holds past the brownout\'s date', async () => {
    await kigoOk('policy', 'set', 'wsse', 'brownout', '--windows', '09:00-12:00', '--from', '2030-03-02T00:00:00Z', '--yes')
    const denied = await kigoOk('policy', 'set', 'wsse', 'deny', '--yes')
    expect(denied).toContain('replaced: the brownout scheduled from 2030-03-02T00:00:00Z (it would have undone this change)\n')
    expect(denied).not.toContain('scheduled: brownout')

    const events = (await stack.admin<{ events: Array<{ target: string; after: { state: string; replaced?: unknown } }> }>('GET', '/admin/audit?kind=policy&target=wsse')).body.events
    expect(events[0]!.after).toMatchObject({ state: 'deny', schedule: [], replaced: [{ state: 'brownout', from: '2030-03-02T00:00:00Z' }] })

    // Two days on, outside the brownout's window: still refused; nothing scheduled.
    clock = Date.parse('2030-03-03T08:00:00Z')
    const res = await viaWsse()
    expect(res.status).toBe(403)
    expect(res.body.error?.code).toBe('method_retired')
    const shown = await kigoOk('policy', 'show')
    const wsse = shown.slice(shown.indexOf('wsse: '), shown.indexOf('login_api: '))
    expect(wsse).toContain('wsse: deny now')
    expect(wsse).toContain('no change scheduled')
    expect(wsse).not.toContain('brownout')
  })

  it('deny --from twice leaves one scheduled deny, the later word; the answer names the one replaced', async () => {
    await kigoOk('policy', 'set', 'basic', 'deprecate', '--yes')
    await kigoOk('policy', 'set', 'basic', 'deny', '--from', '2030-06-01T00:00:00Z', '--yes')
    const { etag } = await getPolicy()
    const second = await kigo('policy', 'set', 'basic', 'deny', '--from', '2030-05-01T00:00:00Z', '--yes', '--json')
    expect(second.code).toBe(0)
    const answer = JSON.parse(second.stdout) as View & { replaced: unknown }
    expect(answer.basic!.schedule).toEqual([{ state: 'deny', from: '2030-05-01T00:00:00Z' }])
    expect(answer.replaced).toEqual([{ method: 'basic', state: 'deny', from: '2030-06-01T00:00:00Z' }])
    expect(answer.version).not.toBe(JSON.parse(etag!))
    expect((await getPolicy()).body.basic!.schedule).toEqual([{ state: 'deny', from: '2030-05-01T00:00:00Z' }])
  })

  it('after a deny made now, nothing announces "becomes deny" next', async () => {
    // basic: deprecate now, deny scheduled on 1 May (the test before).
    await kigoOk('policy', 'set', 'basic', 'deny', '--yes')
    const { body } = await getPolicy()
    expect(body.basic!.schedule).toEqual([])
    expect(body.basic!.effective.next_change).toBeNull()
    const cookie = await dashboardSignIn(stack)
    const page = await (await fetch(`${stack.adminUrl}/admin/`, { headers: { cookie } })).text()
    expect(page).toContain('<p class="next muted" id="next-change">No scheduled change.</p>')
  })

  it('GET gives the version; a PUT naming a stale one is 412 and changes nothing; without If-Match it is accepted', async () => {
    const read = await getPolicy()
    expect(read.etag).toBe(`"${read.body.version}"`)
    const changed = await putPolicy({ login_api: { state: 'deprecate' } }, { 'if-match': read.etag! })
    expect(changed.status).toBe(200)
    const newTag = changed.headers.get('etag')
    expect(newTag).not.toBe(read.etag)

    const before = await getPolicy()
    expect(before.etag).toBe(newTag)
    for (const stale of [read.etag!, `W/${newTag}`, '"nonsense"']) {
      const res = await putPolicy({ login_api: { state: 'deny' } }, { 'if-match': stale })
      expect(res.status, stale).toBe(412)
      const body = (await res.json()) as { error: { status: number; code: string; message: string } }
      expect(body.error).toMatchObject({ status: 412, code: 'precondition_failed' })
      expect(body.error.message).toContain('changed since it was read')
    }
    expect(await getPolicy()).toEqual(before)
    // kigo policy set writes against the version it read: a change made while it asks is kept, and it says so.
    const stdin = Object.assign(new PassThrough(), { isTTY: true })
    let stderr = ''
    const asked = main(['policy', 'set', 'login_api', 'deny'], env, {
      stdout: { write: () => undefined },
      stdin,
      stderr: {
        isTTY: true,
        write: (t: string) => {
          stderr += t
          if (t.includes('Apply this change?')) {
            void putPolicy({ login_api: { state: 'brownout', windows: [{ start: '09:00', end: '10:00' }] } }).then((r) => {
              expect(r.status).toBe(200)
              stdin.write('y\n')
            })
          }
        },
      },
    })
    expect(await asked).toBe(1)
    expect(stderr).toContain('kigo: policy set: the login_api policy changed after this command read it (another operator, the dashboard or a script); nothing was changed')
    expect((await getPolicy()).body.login_api!.state).toBe('brownout')
    // A script that names no version still writes (as before versions existed).
    expect((await putPolicy({ login_api: { state: 'deprecate', sunset: '2030-12-31T00:00:00Z' } })).status).toBe(200)
  })
})

describe('the dashboard', () => {
  let cookie: string
  const post = async (path: string, fields: Record<string, string>) => {
    const res = await fetch(`${stack.adminUrl}${path}`, { method: 'POST', headers: { ...formHeaders, cookie }, body: new URLSearchParams(fields), redirect: 'manual' })
    return { status: res.status, page: await res.text() }
  }

  beforeAll(async () => {
    cookie = await dashboardSignIn(stack)
  })

  it('a preview says which scheduled entries the change replaces, in one date format, and keeps Sign out', async () => {
    expect((await putPolicy({ basic: { state: 'deprecate', windows: [{ start: '09:00', end: '12:00' }], schedule: [{ state: 'brownout', from: '2030-04-01T00:00:00Z' }] } })).status).toBe(200)
    const { status, page } = await post('/admin/policy/preview', { method: 'basic', state: 'deny', sunset: '', deny_from: '', windows: '09:00-12:00' })
    expect(status).toBe(200)
    const replaced = /<div class="notice" id="policy-replaced">([^]*?)<\/div>/.exec(page)?.[1]?.replace(/<[^>]+>/g, '').replace(/\s+/g, ' ').trim()
    expect(replaced).toBe('This change replaces what was scheduled before it (it would have undone the change): brownout from 2030-04-01 00:00 UTC')
    expect(page).toContain('<button type="submit">Sign out</button>')
    // Every instant the page shows is written 2030-04-01 00:00 UTC: no ISO spelling, no "1 Apr 2030".
    const text = page.replace(/<(input|form|time)[^>]*>/g, '').replace(/<[^>]+>/g, ' ')
    expect(text).not.toMatch(/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}/)
    expect(text).not.toMatch(/[0-9]{1,2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [0-9]{4}/)
  })

  it('a method never changed is shown as allowed, without "since 1 Jan 1970"', async () => {
    await stack.close()
    stack = await startStack({ now: () => clock })
    env = { KIGO_ADMIN_URL: stack.adminUrl, KIGO_ADMIN_TOKEN: stack.config.adminToken }
    cookie = await dashboardSignIn(stack)
    const page = await (await fetch(`${stack.adminUrl}/admin/`, { headers: { cookie } })).text()
    const row = /<tr data-method="basic">([^]*?)<\/tr>/.exec(page)![1]!
    expect(row).toContain('<td data-label="Set to"><span class="state state-allow">allow</span></td>')
    expect(page).not.toContain('1970')
  })

  it('the usage table\'s CSV link answers the operator signed in to the dashboard', async () => {
    const res = await fetch(`${stack.url}/api/statuses/update.json`, { method: 'POST', headers: { ...form, ...wsseHeader('alice', (await stack.addUser('alice')).api_password, clock), 'user-agent': 'Csv/1.0' }, body: 'status=hi' })
    expect(res.status).toBe(200)
    await res.arrayBuffer()
    const page = await (await fetch(`${stack.adminUrl}/admin/?method=wsse`, { headers: { cookie } })).text()
    const href = /<a href="([^"]+)" download>Download as CSV<\/a>/.exec(page)![1]!.replace(/&amp;/g, '&')
    const csv = await fetch(new URL(href, stack.adminUrl), { headers: { cookie } })
    expect(csv.status).toBe(200)
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/)
    const lines = (await csv.text()).trim().split('\r\n')
    expect(lines).toHaveLength(2)
    expect(lines[1]).toContain('alice')
    expect(lines[1]).toContain('Csv/1.0')
    // Without the session: the sign-in form, no data.
    const anonymous = await fetch(new URL(href, stack.adminUrl))
    expect(anonymous.status).toBe(401)
    expect(await anonymous.text()).not.toContain('Csv/1.0')
  })
})
