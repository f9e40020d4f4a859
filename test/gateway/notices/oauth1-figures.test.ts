// OAuth 1.0a's figures (docs/gateway.md#oauth-10a-as-a-legacy-method) from raw rows in the
// gateway's store, on each storage backend: the plan, the pass and the preview, and the
// funnel per application. Each figure is counted here from the rows written, with the
// people it must leave out: an application that moved (seen with OAuth 2.0 after its last
// OAuth 1.0a request; or every user's token moved), a user's token exchanged, a user who
// authorized the application again, an application excepted, use outside the lookback, a
// user refused (not moved), an owner told yesterday (too early to tell). The users of an
// application are never told; its owner is, in one message with their own Basic use.
import { expect, it } from 'vitest'
import type { Db } from '../../../src/common/sql.js'
import { noticeFunnel } from '../../../src/gateway/notices/funnel.js'
import { policyPlan } from '../../../src/gateway/notices/plan.js'
import { NoticeSender } from '../../../src/gateway/notices/sender.js'
import { NoticeStore } from '../../../src/gateway/notices/store.js'
import { normalizePolicy } from '../../../src/gateway/policy/normalize.js'
import { defaultPolicies, type Policies } from '../../../src/gateway/policy/types.js'
import { Oauth1ExchangeStore } from '../../../src/gateway/usage/exchanges.js'
import { describeBackends, gatewayDbBackends } from '../../helpers/backends.js'

const backends = await gatewayDbBackends('oauth1-figures')
const day = 86_400_000
const T = Date.parse('2031-03-10T12:00:00Z')
const iso = (ms: number) => new Date(ms).toISOString()

/** owner → [application, name]; the users whose tokens they hold are u1…u6. */
const owners: Record<string, { email: string | null; apps: Array<[string, string]> }> = {
  own1: { email: 'own1@example.test', apps: [['keyA', 'Alpha'], ['keyB', 'Beta']] },
  own2: { email: null, apps: [['keyC', 'Gamma']] },
  own3: { email: 'own3@example.test', apps: [['keyD', 'Delta']] },
  own4: { email: 'own4@example.test', apps: [['keyE', 'Epsilon']] },
}

/** OAuth 1.0a use: [application, user, accepted, refused, last seen (days before T)]. */
const oauthUse: Array<[string, string, number, number, number]> = [
  ['keyA', 'u1', 5, 0, 2],
  ['keyA', 'u2', 3, 0, 1],
  ['keyA', 'u3', 2, 0, 3], // exchanged: moved
  ['keyA', 'u4', 1, 0, 5], // authorized Alpha again with OAuth 2.0: moved
  ['keyB', 'u1', 4, 0, 10], // Beta was seen with OAuth 2.0 since: the application moved
  ['keyC', 'u5', 0, 2, 1], // refused by the policy: not moved, and no accepted request
  ['keyC', 'u6', 7, 0, 40], // outside the lookback
  ['keyD', 'u6', 1, 0, 2], // Delta is excepted (deny plan)
  ['keyE', 'u1', 2, 0, 6], // every token of Epsilon exchanged: the application moved
]

async function seed(db: Db): Promise<void> {
  for (const table of ['notices', 'notice_sweeps', 'auth_usage', 'oauth1_exchanges']) await db.query(`DELETE FROM kigo_gateway.${table}`)
  for (const id of [...Object.keys(owners), 'u1', 'u2', 'u3', 'u4', 'u5', 'u6']) {
    await db.query("INSERT INTO kigo_gateway.users (id, name, password_hash, api_password, email) VALUES ($1, $1, 'x', 'x', $2) ON CONFLICT DO NOTHING", [id, owners[id]?.email ?? null])
  }
  for (const [owner, o] of Object.entries(owners)) {
    for (const [key, name] of o.apps) {
      await db.query("INSERT INTO kigo_gateway.consumers (key, secret, name, owner_id, scopes) VALUES ($1, 'x', $2, $3, ARRAY['read_public']) ON CONFLICT DO NOTHING", [key, name, owner])
    }
  }
  const row = (method: string, user: string, client: string, clientId: string, accepted: number, refused: number, last: number, firstRefused: number | null = null) =>
    db.query(
      `INSERT INTO kigo_gateway.auth_usage (method, user_id, client, client_id, count, accepted, refused_by_policy, first_seen, last_seen, first_refused) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [method, user, client, clientId, accepted + refused, accepted, refused, iso(last - day), iso(last), firstRefused === null ? null : iso(firstRefused)],
    )
  for (const [app, user, accepted, refused, ago] of oauthUse) await row('oauth', user, 'SomeClient/1.0', app, accepted, refused, T - ago * day, refused > 0 ? T - 2 * day : null)
  // OAuth 2.0 use, naming the application by its consumer key.
  await row('oauth2', 'u4', 'Alpha/2.0', 'keyA', 1, 0, T - 4 * day) // after u4's last 1.0a request (T-5d), before Alpha's (T-1d)
  await row('oauth2', 'u2', 'Beta/2.0', 'keyB', 1, 0, T - day)
  // own1 also uses Basic themselves: one message covers both.
  await row('basic', 'own1', 'OwnTool/1.0', '', 6, 0, T - day)
  const exchanges = new Oauth1ExchangeStore(db)
  await exchanges.record({ consumerKey: 'keyA', token: 'tok-a-u3', userId: 'u3', exchangedAt: T - 2 * day })
  await exchanges.record({ consumerKey: 'keyE', token: 'tok-e-u1', userId: 'u1', exchangedAt: T - 5 * day })
  // Exchanging again moves the time forward, never back.
  await exchanges.record({ consumerKey: 'keyE', token: 'tok-e-u1', userId: 'u1', exchangedAt: T - 7 * day })
}

const oauth1Deny = (exceptDelta: boolean) =>
  normalizePolicy('oauth1', { state: 'deprecate', schedule: [{ state: 'deny', from: iso(T + 20 * day) }], exceptions: exceptDelta ? [{ application: 'keyD', until: iso(T + 90 * day) }] : [] }, T - 3 * day)

describeBackends('OAuth 1.0a figures from raw rows', backends, (backend) => {
  it('the plan counts the owners of the applications not moved, their users still on OAuth 1.0a and their requests', async () => {
    const db = backend().db
    await seed(db)
    const store = new NoticeStore(db)
    const input = (state: 'deprecate' | 'deny') => ({ method: 'oauth1' as const, state, from: T, now: T, lookbackDays: 30 })
    // deny: Delta excepted. Alpha is the one application left: u1 and u2 (u3 exchanged, u4
    // authorized again), 5 + 3 requests; Beta and Epsilon moved; Gamma has no accepted request
    // in the lookback (refused, or 40 days ago). own4's only application moved.
    expect(await policyPlan(store, oauth1Deny(true), input('deny'))).toEqual({
      method: 'oauth1', state: 'deny', from: '2031-03-10T12:00:00Z', lookback_days: 30,
      users: 1, users_with_email: 1, users_without_email: 0, clients: 1, requests: 8, sites: 0, moved_users: 1,
      applications: 1, application_users: 2,
    })
    // deprecate refuses no one: exceptions leave nobody out, Delta (own3, u6, 1 request) counts.
    expect(await policyPlan(store, oauth1Deny(true), input('deprecate'))).toMatchObject({ users: 2, users_with_email: 2, clients: 2, requests: 9, moved_users: 1, applications: 2, application_users: 3 })
    // A user's exception in force leaves that user's tokens out of every application.
    const userExcepted = normalizePolicy('oauth1', { state: 'deprecate', exceptions: [{ user: 'u2', until: iso(T + 90 * day) }] }, T)
    expect(await policyPlan(store, userExcepted, input('deny'))).toMatchObject({ users: 2, requests: 6, application_users: 2 })
  })

  it('the pass tells each owner once, about their applications not moved, with their own Basic use in the same message; users of the applications get nothing', async () => {
    const db = backend().db
    await seed(db)
    const store = new NoticeStore(db)
    const policies: Policies = { ...defaultPolicies(), oauth1: oauth1Deny(true), basic: normalizePolicy('basic', { state: 'deprecate' }, T - 3 * day) }
    const queued: Array<{ to: string; subject: string; text: string }> = []
    const sender = new NoticeSender({
      db, store, policies: () => policies, lookbackDays: 30, now: () => T,
      hosts: { domesticHost: 'kigo.test', globalHost: 'global.kigo.test', publicScheme: 'http' },
      outbox: {
        enqueueAll: async (messages) => {
          queued.push(...messages)
          return new Set(messages.map((m) => m.key))
        },
      },
    })
    const preview = await sender.preview('own1')
    const result = await sender.decide()
    // own1 (Alpha, and Basic), own3 (Delta: excepted, but told it is being retired) by mail;
    // own2 (Gamma: refused, no e-mail) unreachable; own4 (Epsilon moved) nothing; u1…u6 nothing.
    expect(result).toMatchObject({ queued: 2, unreachable: 1 })
    expect(queued.map((m) => m.to).sort()).toEqual(['own1@example.test', 'own3@example.test'])
    const own1 = queued.find((m) => m.to === 'own1@example.test')!
    expect(own1).toMatchObject({ subject: preview.message!.subject, text: preview.message!.text })
    expect(own1.subject).toBe('HTTP Basic authentication and OAuth 1.0a: your clients need to move')
    expect(own1.text).toContain('Alpha (consumer key keyA): 8 requests with the OAuth 1.0a tokens of 2 users, last seen 2031-03-09 12:00 UTC.')
    expect(own1.text).toContain('It stops working on 2031-03-30 12:00 UTC.')
    expect(own1.text).toContain('exchange each stored OAuth 1.0a token for OAuth 2.0 tokens')
    expect(own1.text).toContain('have your users authorize it again')
    expect(own1.text).toContain('OwnTool/1.0: 6 requests')
    expect(own1.text).not.toContain('Beta')
    const notices = await store.list()
    expect(new Set(notices.map((n) => n.user))).toEqual(new Set(['own1', 'own2', 'own3']))
    expect(notices.filter((n) => n.method === 'oauth1').map((n) => `${n.user} ${n.step}`).sort()).toEqual(['own1 announced', 'own2 announced', 'own3 announced'])
    // The users of the applications: no part, no message.
    for (const u of ['u1', 'u2', 'u5', 'u6']) expect((await sender.preview(u)).message, u).toBeNull()
    // A second pass sends nothing more.
    expect(await sender.decide()).toMatchObject({ queued: 0, unreachable: 0 })
  })

  it('the funnel per application: tokens exchanged, users who authorized again, users still on OAuth 1.0a; owners moved, refused, too early to tell', async () => {
    const db = backend().db
    await seed(db)
    const told = (user: string, at: number) => db.query("INSERT INTO kigo_gateway.notices (user_id, method, step, email, message_key, created_at) VALUES ($1, 'oauth1', 'announced', NULL, NULL, $2)", [user, iso(at)])
    await told('own1', T - 8 * day)
    await told('own2', T - 8 * day)
    await told('own3', T - day)
    await told('own4', T - 8 * day)
    const [line] = await noticeFunnel(new NoticeStore(db), T)
    expect(line).toMatchObject({
      method: 'oauth1', told: 4,
      // own4: Epsilon's last OAuth 1.0a request (T-6d) came within 7 days of the notice (T-8d).
      moved: 1, moved7: 1, moved30: 1,
      // own1 (Alpha) and own2 (Gamma, refused since T-2d); own3 told yesterday.
      notMoved: 2, refused: 1, tooEarly: 1, tooEarly30: 3,
    })
    expect(line!.notMovedList).toEqual([
      { user: 'own1', toldAt: T - 8 * day, refusedSince: null },
      { user: 'own2', toldAt: T - 8 * day, refusedSince: T - 2 * day },
    ])
    const apps = Object.fromEntries(line!.applications!.map((a) => [a.name, [a.exchanged, a.authorizedAgain, a.onOauth1, a.moved]]))
    expect(apps).toEqual({
      Alpha: [1, 1, 2, false],
      Beta: [0, 0, 1, true],
      Gamma: [0, 0, 2, false],
      Delta: [0, 0, 1, false],
      Epsilon: [1, 0, 0, true],
    })
  })
})
