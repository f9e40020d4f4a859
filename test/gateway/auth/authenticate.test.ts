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

describe('one pipeline for every method', () => {
  it('counts every failed Basic attempt, whatever went wrong with it', async () => {
    const { authenticator, failed } = setup()
    for (const credential of ['alice:wrong-password', 'nobody:right-password', 'no colon here']) {
      expect(await authenticator.authenticate(authRequest({ headers: basic(credential) }), route, ip)).toMatchObject({ ok: false, error: { status: 401 } })
    }
    expect(failed.map((a) => a.user)).toEqual(['alice', 'nobody', undefined])
  })

  it('never throttles or counts OAuth, whose secrets cannot be guessed', async () => {
    const { authenticator, checked, failed } = setup(['alice'])
    const now = Date.now()
    const header = `OAuth oauth_consumer_key="unknown", oauth_token="t", oauth_signature_method="HMAC-SHA1", oauth_signature="c2ln", oauth_timestamp="${Math.floor(now / 1000)}", oauth_nonce="n1"`
    const decision = await authenticator.authenticate(authRequest({ now, headers: { authorization: header } }), route, ip)
    expect(decision).toMatchObject({ ok: false, method: 'oauth', error: { status: 401, code: 'consumer_key_unknown' } })
    expect(checked).toEqual([])
    expect(failed).toEqual([])
  })
})
