// The authenticator's throttling of Basic and WSSE (docs/operations.md#throttling), with the throttle recorded:
// the user a credential claims is checked before it is verified, and a failed attempt
// counts against that user and the client address, even when it failed before the lookup.
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../../src/common/config.js'
import { createAuthenticator } from '../../../src/gateway/auth/authenticate.js'
import type { RoutePolicy } from '../../../src/gateway/domain/routes.js'
import type { Attempt, AttemptThrottle } from '../../../src/gateway/throttle/attempts.js'
import { authRequest, MemoryReplayCache, memoryLookup } from './fixtures.js'

const route: RoutePolicy = { name: 'statuses_update', anonymous: false, methods: ['oauth', 'basic', 'wsse'], scopes: ['write_public'] }
const ip = '198.51.100.4'
const basic = (credential: string) => ({ authorization: `Basic ${Buffer.from(credential).toString('base64')}` })

function setup(blocked: string[] = []) {
  const checked: Attempt[] = []
  const failed: Attempt[] = []
  const succeeded: Attempt[] = []
  const throttle: AttemptThrottle = {
    check: async (a) => (checked.push(a), a.user !== undefined && blocked.includes(a.user) ? 30 : 0),
    failed: async (a) => void failed.push(a),
    succeeded: async (a) => void succeeded.push(a),
    close: async () => undefined,
  }
  const lookup = memoryLookup({ users: [{ id: 'alice', name: 'Alice', apiPassword: 'right-password' }] })
  const config = loadConfig({ env: {}, secrets: () => ({ secretKey: Buffer.alloc(32, 1).toString('base64'), adminToken: 'an-admin-token-long-enough' }) })
  const authenticator = createAuthenticator({ auth: config.auth, lookup, replay: { oauth: new MemoryReplayCache(), wsse: new MemoryReplayCache() }, throttle })
  return { authenticator, checked, failed, succeeded, lookup }
}

describe('throttling of legacy credentials', () => {
  it('checks the claimed user and the address, and lets the right password through', async () => {
    const { authenticator, checked, failed, succeeded } = setup()
    const decision = await authenticator.authenticate(authRequest({ headers: basic('alice:right-password') }), route, ip)
    expect(decision).toMatchObject({ ok: true, method: 'basic', identity: { user: 'alice' } })
    expect(checked).toEqual([{ realm: 'api', user: 'alice', ip }])
    expect(failed).toEqual([])
    expect(succeeded).toEqual([{ realm: 'api', user: 'alice', ip }])
  })

  it('answers a blocked user 429 without verifying the password', async () => {
    const { authenticator, lookup } = setup(['alice'])
    const decision = await authenticator.authenticate(authRequest({ headers: basic('alice:right-password') }), route, ip)
    expect(decision).toMatchObject({ ok: false, outcome: 'throttled', user: 'alice', error: { status: 429 } })
    expect(lookup.calls).toEqual([])
  })

  it('counts a stale WSSE credential against the user it names, though it failed before the lookup', async () => {
    const { authenticator, failed, lookup } = setup()
    const now = Date.parse('2026-11-22T12:00:00Z')
    const stale = 'UsernameToken Username="alice", PasswordDigest="AAAAAAAAAAAAAAAAAAAAAAAAAAA=", Nonce="bm9uY2U=", Created="2026-11-22T11:00:00Z"'
    const decision = await authenticator.authenticate(authRequest({ now, headers: { 'x-wsse': stale } }), route, ip)
    expect(decision).toMatchObject({ ok: false, outcome: 'stale', user: 'alice', error: { status: 401 } })
    expect(lookup.calls).toEqual([])
    expect(failed).toEqual([{ realm: 'api', user: 'alice', ip }])
  })

  it('counts a malformed Basic credential against the address alone', async () => {
    const { authenticator, failed } = setup()
    const decision = await authenticator.authenticate(authRequest({ headers: basic('no colon here') }), route, ip)
    expect(decision).toMatchObject({ ok: false, outcome: 'malformed', error: { status: 401 } })
    expect(failed).toEqual([{ realm: 'api', user: undefined, ip }])
  })
})

/**
 * A throttle and a lookup that can tell without waiting (as the in-memory throttle, the
 * Redis throttle's fresh local view and the credential cache can): `known` says whether
 * they do.
 */
function setupInMemory(known: { throttle: boolean; password: boolean }, blocked: string[] = []) {
  const base = setup(blocked)
  const peeked: Attempt[] = []
  const throttle: AttemptThrottle = {
    check: async () => 0,
    peek: (a) => (known.throttle ? (peeked.push(a), a.user !== undefined && blocked.includes(a.user) ? 30 : 0) : undefined),
    failed: async (a) => void base.failed.push(a),
    succeeded: async (a) => void base.succeeded.push(a),
    close: async () => undefined,
  }
  const users = new Map([['alice', { userId: 'alice', userName: 'Alice', apiPassword: 'right-password' }]])
  const lookup = { ...base.lookup, peekApiPassword: (id: string) => (known.password ? (users.get(id) ?? null) : undefined) }
  const config = loadConfig({ env: {}, secrets: () => ({ secretKey: Buffer.alloc(32, 1).toString('base64'), adminToken: 'an-admin-token-long-enough' }) })
  const authenticator = createAuthenticator({ auth: config.auth, lookup, replay: { oauth: new MemoryReplayCache(), wsse: new MemoryReplayCache() }, throttle })
  return { ...base, authenticator, peeked }
}

describe('deciding at once (decideNow)', () => {
  const both = { throttle: true, password: true }

  it('lets the right Basic password through when the throttle and the password are known in memory', () => {
    const { authenticator, peeked, succeeded, lookup } = setupInMemory(both)
    const decision = authenticator.decideNow(authRequest({ headers: basic('alice:right-password') }), route, ip)
    expect(decision).toMatchObject({ ok: true, method: 'basic', identity: { user: 'alice', userName: 'Alice', authMethod: 'basic' } })
    expect(peeked).toEqual([{ realm: 'api', user: 'alice', ip }])
    expect(succeeded).toEqual([{ realm: 'api', user: 'alice', ip }])
    expect(lookup.calls).toEqual([])
  })

  it('answers a user known to be blocked 429 at once', () => {
    const { authenticator } = setupInMemory(both, ['alice'])
    const decision = authenticator.decideNow(authRequest({ headers: basic('alice:right-password') }), route, ip)
    expect(decision).toMatchObject({ ok: false, outcome: 'throttled', user: 'alice', error: { status: 429 } })
  })

  it('leaves every failure to authenticate, which counts it', async () => {
    const { authenticator, failed } = setupInMemory(both)
    for (const credential of ['alice:wrong-password', 'nobody:right-password', 'no colon here']) {
      const req = authRequest({ headers: basic(credential) })
      expect(authenticator.decideNow(req, route, ip)).toBeNull()
      expect(await authenticator.authenticate(req, route, ip)).toMatchObject({ ok: false, error: { status: 401 } })
    }
    expect(failed.map((a) => a.user)).toEqual(['alice', 'nobody', undefined])
  })

  it('waits when the throttle or the password is not known in memory, and for WSSE and OAuth always', () => {
    const right = authRequest({ headers: basic('alice:right-password') })
    expect(setupInMemory({ throttle: false, password: true }).authenticator.decideNow(right, route, ip)).toBeNull()
    expect(setupInMemory({ throttle: true, password: false }).authenticator.decideNow(right, route, ip)).toBeNull()
    const { authenticator } = setupInMemory(both)
    const wsse = 'UsernameToken Username="alice", PasswordDigest="AAAAAAAAAAAAAAAAAAAAAAAAAAA=", Nonce="bm9uY2U=", Created="2026-11-22T11:00:00Z"'
    expect(authenticator.decideNow(authRequest({ headers: { 'x-wsse': wsse } }), route, ip)).toBeNull()
    expect(authenticator.decideNow(authRequest({ headers: { authorization: 'OAuth oauth_consumer_key="k", oauth_token="t"' } }), route, ip)).toBeNull()
  })

  it('takes the local verdict of the throttle on the waiting path too (WSSE)', async () => {
    // This throttle's check would let alice through; its local verdict blocks her.
    const { authenticator, peeked } = setupInMemory(both, ['alice'])
    const now = Date.parse('2026-11-22T12:00:00Z')
    const token = 'UsernameToken Username="alice", PasswordDigest="AAAAAAAAAAAAAAAAAAAAAAAAAAA=", Nonce="bm9uY2U=", Created="2026-11-22T12:00:00Z"'
    const decision = await authenticator.authenticate(authRequest({ now, headers: { 'x-wsse': token } }), route, ip)
    expect(decision).toMatchObject({ ok: false, outcome: 'throttled', user: 'alice', error: { status: 429 } })
    expect(peeked).toEqual([{ realm: 'api', user: 'alice', ip }])
  })

  it('decides as authenticate does, request by request', async () => {
    const anonymousRoute: RoutePolicy = { ...route, anonymous: true, scopes: [] }
    const cases: Array<[Record<string, string>, RoutePolicy]> = [
      [basic('alice:right-password'), route],
      [basic('alice:right-password'), { ...route, methods: ['oauth'] }],
      [{}, route],
      [{}, anonymousRoute],
      [{ authorization: 'Bearer abc' }, anonymousRoute],
      [{ ...basic('alice:right-password'), 'x-wsse': 'UsernameToken Username="alice"' }, route],
    ]
    for (const [headers, r] of cases) {
      const now = setupInMemory(both).authenticator.decideNow(authRequest({ headers }), r, ip)
      const waited = await setupInMemory(both).authenticator.authenticate(authRequest({ headers }), r, ip)
      expect(now, JSON.stringify(headers)).toEqual(waited)
    }
  })
})
