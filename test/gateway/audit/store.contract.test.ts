// The operators' audit trail as stored for every gateway, on each storage backend of
// helpers/backends.ts: events come back newest first with what was recorded, and the
// filters (kind, target, since, limit) select as documented.
import { setTimeout as sleep } from 'node:timers/promises'
import { expect, it } from 'vitest'
import { AuditStore, type AuditInput } from '../../../src/gateway/audit/store.js'
import { describeBackends, gatewayDbBackends } from '../../helpers/backends.js'

const backends = await gatewayDbBackends('audit')

let serial = 0
const target = () => `target_${++serial}_${Date.now().toString(36)}`

describeBackends('audit store contract', backends, (backend) => {
  const store = () => new AuditStore(backend().db)
  const event = (over: Partial<AuditInput> = {}): AuditInput => ({
    kind: 'user',
    action: 'user.create',
    target: target(),
    before: null,
    after: { id: 'x', name: 'X' },
    actor: { kind: 'operator', address: '192.0.2.7' },
    ...over,
  })

  it('gives back what was recorded, newest first, with an id and a time', async () => {
    const t = target()
    const started = Date.now()
    const first = event({ target: t, before: null, after: { name: 'Ann', scopes: ['read_public'], n: 1, ok: true } })
    const second = event({ target: t, action: 'account.set_email', before: { email: null }, after: { email: 'ann@example.com' }, actor: { kind: 'user', user: 'ann', address: '2001:db8::1' } })
    await store().record(first)
    await store().record(second)
    const events = await store().list({ target: t })
    expect(events).toEqual([
      { ...second, address: '2001:db8::1', id: expect.any(Number), at: expect.any(Date) },
      { ...first, address: '192.0.2.7', id: expect.any(Number), at: expect.any(Date) },
    ])
    expect(events[0]!.id).toBeGreaterThan(events[1]!.id)
    expect(events[1]!.at.getTime()).toBeGreaterThan(started - 60_000)
    expect(events[1]!.at.getTime()).toBeLessThan(Date.now() + 60_000)
  })

  it('records an event without before or after (a secret reset) with both null', async () => {
    const t = target()
    await store().record(event({ kind: 'app', action: 'app.rotate_secret', target: t, before: undefined, after: undefined }))
    expect(await store().list({ target: t })).toMatchObject([{ kind: 'app', action: 'app.rotate_secret', before: null, after: null }])
  })

  it('filters by kind, target, since and limit', async () => {
    const t = target()
    await store().record(event({ kind: 'token', action: 'token.revoke', target: t }))
    await store().record(event({ kind: 'policy', action: 'policy.update', target: t }))
    await sleep(20)
    const cut = (await store().list({ target: t, limit: 1 }))[0]!.at.getTime() + 1
    await sleep(20)
    await store().record(event({ kind: 'policy', action: 'policy.update', target: t, after: { state: 'deny' } }))
    expect((await store().list({ target: t, kind: 'policy' })).map((e) => e.kind)).toEqual(['policy', 'policy'])
    expect((await store().list({ target: t, kind: 'token' })).map((e) => e.action)).toEqual(['token.revoke'])
    expect((await store().list({ target: t, since: cut })).map((e) => e.after)).toEqual([{ state: 'deny' }])
    expect(await store().list({ target: t, limit: 2 })).toHaveLength(2)
    expect((await store().list({ kind: 'policy', limit: 1 }))[0]!.after).toEqual({ state: 'deny' })
  })
})
