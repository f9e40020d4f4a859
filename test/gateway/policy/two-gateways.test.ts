// One policy for two gateways of one deployment on one PostgreSQL database
// (docs/gateway.md#one-schedule): a write is compared with the stored policy, not with the
// copy a gateway holds in memory (here polled every 15 s), so a stale version is
// refused whichever gateway it reaches; a deny made at one gateway drops the brownout
// scheduled at the other; dashboard Applies begun from one preview at both gateways at once
// make exactly one change.
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main } from '../../../src/cli/kigo.js'
import { dashboardSignIn, formHeaders } from '../../helpers/dashboard.js'
import { freshPostgres } from '../../helpers/services.js'
import { startStack, type Stack } from '../../helpers/stack.js'
import { form, wsseHeader } from './signers.js'

const pg = await freshPostgres()
let clock = Date.parse('2030-03-01T08:00:00Z')

describe.skipIf(!pg)('two gateways, one policy', () => {
  let a: Stack
  let b: Stack

  beforeAll(async () => {
    const shared = { databaseUrl: pg!.url, secretKey: randomBytes(32).toString('base64'), adminToken: randomBytes(24).toString('base64url'), now: () => clock }
    const overrides = { migration: { policyRefreshMs: 15_000 } }
    a = await startStack({ ...shared, overrides })
    b = await startStack({ ...shared, coreUrl: a.coreUrl, overrides })
  })

  afterAll(async () => {
    await b?.close()
    await a?.close()
    await pg?.drop()
  })

  const bearer = (s: Stack) => ({ authorization: `Bearer ${s.config.adminToken}` })
  const getPolicy = async (s: Stack) => {
    const res = await fetch(`${s.adminUrl}/admin/policy`, { headers: bearer(s) })
    return { etag: res.headers.get('etag')!, body: (await res.json()) as Record<string, { state: string; schedule: unknown[]; sunset: string | null }> }
  }
  const put = (s: Stack, body: unknown, ifMatch: string) =>
    fetch(`${s.adminUrl}/admin/policy`, { method: 'PUT', headers: { ...bearer(s), 'content-type': 'application/json', 'if-match': ifMatch }, body: JSON.stringify(body) })
  const kigo = async (s: Stack, ...args: string[]) => {
    let stdout = ''
    const code = await main(args, { KIGO_ADMIN_URL: s.adminUrl, KIGO_ADMIN_TOKEN: s.config.adminToken }, { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: () => undefined } })
    expect(code, args.join(' ')).toBe(0)
    return stdout
  }

  it('a version read at one gateway and overtaken at the other is refused with 412, changing nothing', async () => {
    const read = await getPolicy(a)
    const other = await put(b, { basic: { state: 'deprecate' } }, (await getPolicy(b)).etag)
    expect(other.status).toBe(200)
    // Gateway a still holds the old policy in memory; the store decides.
    const stale = await put(a, { basic: { state: 'deny' } }, read.etag)
    expect(stale.status).toBe(412)
    expect(((await stale.json()) as { error: { code: string } }).error.code).toBe('precondition_failed')
    const now = await getPolicy(b)
    expect(now.body.basic!.state).toBe('deprecate')
    expect(now.etag).toBe(other.headers.get('etag'))
    // Read again (at a), the change goes through.
    expect((await put(a, { basic: { state: 'deny' } }, (await getPolicy(a)).etag)).status).toBe(200)
  })

  it('a deny made at one gateway drops the brownout scheduled at the other; past its date the method is still refused at both', async () => {
    const user = await a.addUser('walter')
    await kigo(a, 'policy', 'set', 'wsse', 'brownout', '--windows', '09:00-12:00', '--from', '2030-03-02T00:00:00Z', '--yes')
    expect(await kigo(b, 'policy', 'set', 'wsse', 'deny', '--yes')).toContain('replaced: the brownout scheduled from 2030-03-02T00:00:00Z')
    clock = Date.parse('2030-03-03T08:00:00Z')
    for (const s of [a, b]) {
      expect((await kigo(s, 'policy', 'show'))).not.toContain('brownout')
      const res = await fetch(`${s.url}/api/statuses/update.json`, { method: 'POST', headers: { ...form, ...wsseHeader('walter', user.api_password, clock), host: new URL(a.url).host }, body: 'status=hi' })
      expect(res.status).toBe(403)
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('method_retired')
    }
  })

  it('Applies of one preview sent to both gateways at once: one change, the others 409', async () => {
    const cookies = [await dashboardSignIn(a), await dashboardSignIn(b)]
    const post = async (s: Stack, cookie: string, path: string, fields: Record<string, string>) => {
      const res = await fetch(`${s.adminUrl}${path}`, { method: 'POST', headers: { ...formHeaders, cookie }, body: new URLSearchParams(fields), redirect: 'manual' })
      return { status: res.status, page: await res.text() }
    }
    const sunsets = ['2030-09-01', '2030-09-02', '2030-09-03', '2030-09-04', '2030-09-05', '2030-09-06']
    const previews = await Promise.all(sunsets.map((sunset, i) => {
      const s = i % 2 === 0 ? a : b
      return post(s, cookies[i % 2]!, '/admin/policy/preview', { method: 'login_api', state: 'deprecate', sunset, deny_from: '', windows: '' })
    }))
    const fields = previews.map((p) => Object.fromEntries([...(/<form class="apply"[^]*?<\/form>/.exec(p.page)![0]).matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!])))
    expect(new Set(fields.map((f) => f.base)).size).toBe(1)
    const applied = await Promise.all(fields.map((f, i) => post(i % 2 === 0 ? a : b, cookies[i % 2]!, '/admin/policy/apply', f)))
    const statuses = applied.map((r) => r.status)
    expect(statuses.filter((s) => s === 303)).toHaveLength(1)
    expect(statuses.filter((s) => s === 409)).toHaveLength(sunsets.length - 1)
    const winner = sunsets[statuses.indexOf(303)]!
    expect((await getPolicy(b)).body.login_api!.sunset).toBe(`${winner}T00:00:00Z`)
    const events = (await b.admin<{ events: Array<{ target: string }> }>('GET', '/admin/audit?kind=policy&target=login_api')).body.events
    expect(events).toHaveLength(1)
  })
})
