// The usage report tells the truth (docs/operations.md#the-usage-reports-bounds): refused and throttled
// attempts are counted beside the accepted ones, not as use; the chart and "who must
// migrate" show accepted requests; one user's clients are bounded.
import { afterAll, beforeAll, expect, it } from 'vitest'
import { startStack, type Stack } from '../helpers/stack.js'
import { eventually } from '../helpers/private-redis.js'

interface Row { method: string; user: string; client: string; count: number; accepted: number; refused_by_policy: number; failed_credentials: number; throttled: number }

let stack: Stack
const pw: Record<string, string> = {}

beforeAll(async () => {
  stack = await startStack({ overrides: { auth: { throttle: { maxFailures: 3, windowSeconds: 60 } }, migration: { usageMaxClientsPerUser: 5, policyRefreshMs: 100 } } })
  for (const id of ['alice', 'bob', 'carol']) pw[id] = (await stack.addUser(id)).api_password
})

afterAll(async () => {
  await stack?.close()
})

const post = (user: string, password: string, userAgent = 'TestClient/1') =>
  fetch(`${stack.url}/api/statuses/update.json`, {
    method: 'POST',
    headers: { authorization: 'Basic ' + Buffer.from(`${user}:${password}`).toString('base64'), 'content-type': 'application/x-www-form-urlencoded', 'user-agent': userAgent },
    body: 'status=usage',
  })

/** Waits until the gateway applies `state` to Basic: its migration page shows the policy it enforces (a read that records no usage). */
const gatewayApplies = (state: string) =>
  eventually(async () => (await (await fetch(`${stack.url}/migration`)).text()).includes(`id="policy-basic" data-state="${state}"`))

it('counts each outcome per row; a guessed user\'s failures are not use, and "who must migrate" lists accepted use only', async () => {
  for (let i = 0; i < 2; i++) expect((await post('alice', pw.alice!)).status).toBe(200)
  for (let i = 0; i < 3; i++) expect((await post('bob', 'wrong')).status).toBe(401)
  for (let i = 0; i < 20; i++) expect((await post('bob', 'wrong')).status).toBe(429)
  const res = await stack.admin<{ records: Row[] }>('GET', '/admin/usage?method=basic&all=true')
  expect(res.status).toBe(200)
  const byUser = Object.fromEntries(res.body.records.map((r) => [r.user, r]))
  expect(byUser.alice).toMatchObject({ client: 'TestClient/1', count: 2, accepted: 2, refused_by_policy: 0, failed_credentials: 0, throttled: 0 })
  expect(byUser.bob).toMatchObject({ client: 'TestClient/1', count: 23, accepted: 0, failed_credentials: 3, throttled: 20 })

  const page = await fetch(`${stack.adminUrl}/admin/`, { headers: { authorization: `Bearer ${stack.config.adminToken}` } })
  const html = await page.text()
  const table = html.slice(html.indexOf('id="usage-table"'), html.indexOf('</table>', html.indexOf('id="usage-table"')))
  expect(table).toContain('<code class="id">alice</code>')
  expect(table).not.toMatch(/<code[^>]*>bob<\/code>/)
  expect(html).toMatch(/self-declared/)
  // The chart counts accepted requests: alice's 2 Basic requests (and the operator's own, none).
  expect(html).toMatch(/data-method="basic" data-count="2"/)
})

it('a refusal by the policy is counted as such, and failures naming no user go to one row', async () => {
  expect((await stack.admin('PUT', '/admin/policy', { basic: { state: 'deny' } })).status).toBe(200)
  await gatewayApplies('deny')
  expect((await post('carol', pw.carol!)).status).toBe(403)
  for (let i = 0; i < 2; i++) expect((await post(`ghost${i}x`, 'wrong', `Spray/${i}`)).status).toBe(401)
  const rows = (await stack.admin<{ records: Row[] }>('GET', '/admin/usage?method=basic&all=true')).body.records
  expect(rows.find((r) => r.user === 'carol')).toMatchObject({ count: 1, accepted: 0, refused_by_policy: 1 })
  expect(rows.filter((r) => r.user.startsWith('ghost'))).toEqual([])
  expect(rows.find((r) => r.user === '(unknown users)')).toMatchObject({ failed_credentials: 2 })
  expect((await stack.admin('PUT', '/admin/policy', { basic: { state: 'allow' } })).status).toBe(200)
  await gatewayApplies('allow')
})

it('one user with 30 User-Agents makes at most 5 rows plus one "(other clients)" row, all counted', async () => {
  for (let i = 0; i < 30; i++) expect((await post('alice', pw.alice!, `Agent/${i}`)).status).toBe(200)
  const rows = (await stack.admin<{ records: Row[] }>('GET', '/admin/usage?method=basic&user=alice')).body.records
  expect(rows.length).toBeLessThanOrEqual(6)
  expect(rows.some((r) => r.client === '(other clients)')).toBe(true)
  expect(rows.reduce((n, r) => n + r.accepted, 0)).toBe(32)
})
