// Who counts as moved, through a whole kigo on each storage backend (embedded, and
// PostgreSQL as production runs it), with the test's clock (docs/gateway.md#migration-notices):
// - the notices' funnel, eight days after the notices: one user moved to OAuth, one
//   refused by the deny ("not moved", refused since), one still using Basic under an
//   exception, one told yesterday ("too early to tell"); its columns cumulative;
// - the plan counts only who has not moved, the same users, clients and requests as
//   `kigo usage --method basic --moved no`, says how many moved, and the pass then tells
//   exactly those it counted.
// The expected numbers are counted here from the usage report's rows and the notices list.
import { afterAll, beforeAll, expect, it } from 'vitest'
import { describeBackends, storageBackends } from '../../helpers/backends.js'
import { cliOf } from '../../helpers/cli.js'
import { startStack, type Stack } from '../../helpers/stack.js'
import { startTestSmtp, type TestSmtp } from '../../helpers/smtp.js'
import { basicHeader, form, oauthHeader, type OAuthClient } from '../policy/signers.js'

const day = 86_400_000
const backends = await storageBackends('moved-counting')

interface UsageRecord { method: string; user: string; client: string; accepted: number; refused_by_policy: number; moved: boolean | null }
interface FunnelJson {
  methods: Array<{ method: string; told: number; moved_within_7_days: number; moved_within_30_days: number; moved: number; not_moved: number; refused: number; too_early_to_tell: number; too_early_to_tell_30_days: number; not_moved_users: Array<{ user: string; told_at: string; refused_since: string | null }> }>
}

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z')

/** One kigo on a backend, its clock the test's, its mail to a test SMTP server. */
function kigoOn(current: () => { databaseUrl?: string; dataDir: string }) {
  const state = { clock: Date.parse('2030-05-04T09:00:00Z'), stack: undefined as Stack | undefined, smtp: undefined as TestSmtp | undefined }
  const users: Record<string, { api_password: string }> = {}
  const cli = cliOf(() => ({ KIGO_ADMIN_URL: state.stack!.adminUrl, KIGO_ADMIN_TOKEN: state.stack!.config.adminToken }))

  beforeAll(async () => {
    state.smtp = await startTestSmtp()
    const { databaseUrl, dataDir } = current()
    state.stack = await startStack({
      dataDir,
      ...(databaseUrl !== undefined ? { databaseUrl } : {}),
      now: () => state.clock,
      overrides: { mail: { smtpUrl: state.smtp.url, sendIntervalSeconds: 0 }, notices: { intervalSeconds: 0 }, migration: { usageFlushMs: 200 } },
    })
  })
  afterAll(async () => {
    await state.stack?.close()
    await state.smtp?.close()
  })

  const stack = () => state.stack!
  return {
    state,
    stack,
    cli,
    async addUsers(ids: string[], withEmail: (id: string) => boolean = () => true) {
      for (const id of ids) {
        users[id] = await stack().addUser(id)
        if (withEmail(id)) expect((await stack().admin('PUT', `/admin/users/${id}/email`, { email: `${id}@example.test` })).status).toBe(200)
      }
    },
    async basic(user: string, userAgent: string): Promise<number> {
      const res = await fetch(`${stack().url}/api/statuses/update.json`, { method: 'POST', headers: { ...form, ...basicHeader(user, users[user]!.api_password), 'user-agent': userAgent }, body: 'status=hi' })
      await res.text()
      return res.status
    },
    async oauth(app: OAuthClient, userAgent: string): Promise<number> {
      const url = `${stack().url}/api/statuses/update.json`
      const res = await fetch(url, { method: 'POST', headers: { ...form, ...oauthHeader(app, { url, method: 'POST', data: { status: 'hi' } }, state.clock), 'user-agent': userAgent }, body: 'status=hi' })
      await res.text()
      return res.status
    },
    /** The usage report's rows (GET /admin/usage writes this gateway's pending counts first). */
    async usage(query = ''): Promise<UsageRecord[]> {
      const r = await stack().admin<{ records: UsageRecord[] }>('GET', `/admin/usage${query}`)
      expect(r.status).toBe(200)
      return r.body.records
    },
  }
}

describeBackends('the funnel eight days after the notices', backends, (current) => {
  const k = kigoOn(current)
  const t0 = k.state.clock

  it('counts a refused user as not moved (refused since), a user told yesterday as too early to tell; 7 days ≤ 30 days', async () => {
    await k.addUsers(['mover', 'refused', 'still', 'late'])
    const moverApp = await k.stack().addOAuthClient('mover', ['write_public'])
    for (const id of ['mover', 'refused', 'still']) expect(await k.basic(id, 'Tool/1.0')).toBe(200)
    await k.usage()
    const until = '2031-01-01T00:00:00Z'
    for (const id of ['still', 'late']) expect((await k.cli.kigo('policy', 'set', 'basic', 'deprecate', '--except-user', id, '--until', until)).code).toBe(0)
    expect((await k.cli.kigo('policy', 'set', 'basic', 'deny', '--from', iso(t0 + 3 * day), '--yes')).code).toBe(0)
    expect(await k.cli.json('notices', 'run')).toMatchObject({ sent: 3 })

    k.state.clock = t0 + day
    expect(await k.oauth(moverApp, 'Tool/2.0')).toBe(200)
    k.state.clock = t0 + 4 * day
    expect(await k.basic('refused', 'Tool/1.0')).toBe(403)
    expect(await k.basic('still', 'Tool/1.0')).toBe(200)
    await k.usage()
    await k.cli.json('notices', 'run')
    k.state.clock = t0 + 7 * day
    expect(await k.basic('late', 'Tool/1.0')).toBe(200)
    await k.usage()
    await k.cli.json('notices', 'run')
    k.state.clock = t0 + 8 * day

    // Counted from the raw rows: who was told when, and the usage report's "moved".
    const notices = (await k.cli.json<{ notices: Array<{ user: string; method: string; created_at: string }> }>('notices', 'list', '--method', 'basic')).notices
    const toldAt = new Map<string, number>()
    for (const n of notices) toldAt.set(n.user, Math.min(toldAt.get(n.user) ?? Infinity, Date.parse(n.created_at)))
    const rows = (await k.usage('?method=basic')).filter((r) => r.accepted > 0 || r.refused_by_policy > 0)
    const movedUsers = [...toldAt.keys()].filter((u) => rows.some((r) => r.user === u) && rows.filter((r) => r.user === u).every((r) => r.moved === true))
    const early = [...toldAt].filter(([u, at]) => !movedUsers.includes(u) && k.state.clock - at < 7 * day).map(([u]) => u)
    const notMoved = [...toldAt.keys()].filter((u) => !movedUsers.includes(u) && !early.includes(u)).sort()
    const refused = notMoved.filter((u) => rows.some((r) => r.user === u && r.refused_by_policy > 0))
    expect([movedUsers, notMoved, refused, early]).toEqual([['mover'], ['refused', 'still'], ['refused'], ['late']])

    const funnel = await k.stack().admin<FunnelJson>('GET', '/admin/notices/funnel')
    expect(funnel.status).toBe(200)
    const basic = funnel.body.methods.find((m) => m.method === 'basic')!
    expect(basic).toMatchObject({ told: toldAt.size, moved: movedUsers.length, moved_within_7_days: 1, not_moved: notMoved.length, refused: refused.length, too_early_to_tell: early.length })
    expect(basic.moved_within_7_days).toBeLessThanOrEqual(basic.moved_within_30_days)
    // Nobody was told 30 days ago: for that column, everyone not moved is too early to tell.
    expect(basic.too_early_to_tell_30_days).toBe(notMoved.length + early.length)
    expect(basic.not_moved_users).toEqual([
      { user: 'refused', told_at: iso(toldAt.get('refused')!), refused_since: iso(t0 + 4 * day) },
      { user: 'still', told_at: iso(toldAt.get('still')!), refused_since: null },
    ])

    // The dashboard shows the same numbers, and the refusal beside the user.
    const res = await fetch(`${k.stack().adminUrl}/admin/`, { headers: { authorization: `Bearer ${k.stack().config.adminToken}` } })
    const page = await res.text()
    const row = page.match(/<tr data-method="basic"><td data-label="Method">[^<]*<\/td>(.*?)<\/tr>/)![1]!
    const cell = (label: string) => row.match(new RegExp(`data-label="${label}">(\\d+)`))![1]
    expect([cell('Told'), cell('Moved within 7 days'), cell('Moved within 30 days'), cell('Moved'), cell('Not moved'), cell('Too early to tell')]).toEqual(['4', '1', '1', '1', '2', '1'])
    expect(row).toContain('(1 refused)')
    expect(page).toMatch(/<li data-method="basic" data-user="refused">refused \(HTTP Basic authentication\): told <time[^>]*>[^<]+<\/time>, <strong>refused since <time datetime="2030-05-08T09:00:00Z"/)
    expect(page).toMatch(/<li data-method="basic" data-user="still">still \(HTTP Basic authentication\): told <time[^>]*>[^<]+<\/time><\/li>/)
  })
})

describeBackends('the plan after two users moved', backends, (current) => {
  const k = kigoOn(current)

  it('counts who has not moved, as `kigo usage --moved no` lists them, says how many moved, and the pass tells those', async () => {
    const ids = ['ann', 'ben', 'cat', 'dan', 'eve']
    await k.addUsers(ids, (id) => id !== 'dan')
    for (const [i, id] of ids.entries()) {
      for (let n = 0; n <= i; n++) expect(await k.basic(id, `Tool${i}/1.0`)).toBe(200)
    }
    expect(await k.basic('ann', 'Other/1.0')).toBe(200)
    k.state.clock += 60_000
    for (const id of ['ann', 'cat']) {
      const app = await k.stack().addOAuthClient(id, ['write_public'])
      expect(await k.oauth(app, `Tool${ids.indexOf(id)}/2.0`)).toBe(200)
    }
    // ann moved one of her two clients: she has not moved. ben too: now two moved.
    const benApp = await k.stack().addOAuthClient('ben', ['write_public'])
    expect(await k.oauth(benApp, 'Tool1/2.0')).toBe(200)
    await k.usage()

    const notMovedRows = await k.cli.json<{ records: UsageRecord[] }>('usage', '--method', 'basic', '--moved', 'no')
    const rows = notMovedRows.records
    const allUsers = new Set((await k.usage('?method=basic')).map((r) => r.user))
    const notMovedUsers = new Set(rows.map((r) => r.user))
    expect([...notMovedUsers].sort()).toEqual(['ann', 'dan', 'eve'])

    const plan = await k.cli.json<Record<string, unknown>>('policy', 'plan', 'basic', 'deny')
    expect(plan).toMatchObject({
      users: notMovedUsers.size,
      users_with_email: [...notMovedUsers].filter((u) => u !== 'dan').length,
      users_without_email: 1,
      clients: new Set(rows.map((r) => r.client)).size,
      requests: rows.reduce((sum, r) => sum + r.accepted, 0),
      moved_users: allUsers.size - notMovedUsers.size,
    })
    expect(plan.moved_users).toBe(2)
    expect((await k.stack().admin('POST', '/admin/policy/plan', { method: 'basic', state: 'deny' })).body).toEqual(plan)
    const text = (await k.cli.kigo('policy', 'plan', 'basic', 'deny')).stdout
    expect(text).toContain(': 3 users (2 with a contact e-mail, 1 without) not moved yet, 3 clients, 10 accepted requests in the last 30 days (2 users moved, not counted). Their requests are refused. Notices go to those users: 2 by mail, 1 on the account page only (no contact e-mail).')

    // A change to allow refuses nobody: the plan says so, and touches no one.
    const allow = (await k.cli.kigo('policy', 'plan', 'wsse', 'allow')).stdout
    expect(allow).not.toContain('touches')
    expect(allow).toContain('This refuses no one and announces nothing')

    // The pass then tells exactly those the plan counted: by mail those with an e-mail.
    expect((await k.cli.kigo('policy', 'set', 'basic', 'deny', '--from', iso(k.state.clock + 20 * day), '--yes')).code).toBe(0)
    expect(await k.cli.json('notices', 'run')).toMatchObject({ sent: plan.users_with_email })
    const told = (await k.cli.json<{ notices: Array<{ user: string; status: string }> }>('notices', 'list')).notices
    expect(told.map((n) => n.user).sort()).toEqual([...notMovedUsers].sort())
    expect(told.filter((n) => n.status === 'unreachable')).toHaveLength(plan.users_without_email as number)
  })
})
