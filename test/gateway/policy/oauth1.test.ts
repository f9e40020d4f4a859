// OAuth 1.0a as the policy method oauth1 (docs/gateway.md#oauth-10a-as-a-legacy-method), as
// pure functions: exceptions by user, by application (consumer key) or both; the fields
// only oauth1 takes; registration closed carried through a change that does not name it;
// a plainly allowed method answers without evaluating; the moved rule of its tokens and
// applications.
import { describe, expect, it } from 'vitest'
import { changedPolicy } from '../../../src/gateway/policy/change.js'
import { evaluatePolicy } from '../../../src/gateway/policy/evaluate.js'
import { InvalidPolicy, normalizePolicy } from '../../../src/gateway/policy/normalize.js'
import { oauth1Standing } from '../../../src/gateway/policy/oauth1-standing.js'
import { PolicyService } from '../../../src/gateway/policy/service.js'
import type { PolicyStore } from '../../../src/gateway/policy/store.js'
import { defaultPolicies, policyMethodOf, usageMethodOf, type MethodPolicyInput } from '../../../src/gateway/policy/types.js'
import { oauth1Rule } from '../../../src/gateway/usage/moved.js'
import type { AuthRequest } from '../../../src/gateway/domain/auth.js'

const guide = 'https://kigo.test/migration'
const at = (iso: string) => Date.parse(iso)
const now = at('2027-03-01T00:00:00Z')
const oauth1 = (input: MethodPolicyInput) => normalizePolicy('oauth1', input, now)
const until = '2027-06-01T00:00:00Z'
const subject = (user: string, application: string) => ({ user, application, client: () => 'Poster/1.0' })

describe('oauth1 policy', () => {
  it('names: the policy method oauth1 governs the requests counted as oauth', () => {
    expect(policyMethodOf('oauth')).toBe('oauth1')
    expect(policyMethodOf('basic')).toBe('basic')
    expect(policyMethodOf('oauth2')).toBeNull()
    expect(policyMethodOf('oauth1')).toBeNull()
    expect(usageMethodOf('oauth1')).toBe('oauth')
  })

  it('deny refuses with the way to OAuth 2.0; exceptions by application, by user, and by both', () => {
    const p = oauth1({
      state: 'deny',
      exceptions: [
        { application: 'keyA', until },
        { user: 'bob', until },
        { user: 'carol', application: 'keyC', until },
      ],
    })
    const t = at('2027-04-01T00:00:00Z')
    const refused = evaluatePolicy('oauth1', p, subject('dave', 'keyZ'), t, guide)
    expect(refused).toMatchObject({ allowed: false, status: 403, code: 'method_retired', message: `OAuth 1.0a has been retired; use OAuth 2.0. Migration guide: ${guide}` })
    // Every user's token of application keyA.
    expect(evaluatePolicy('oauth1', p, subject('dave', 'keyA'), t, guide)).toMatchObject({ allowed: true, exception: true })
    // Every application's token of bob.
    expect(evaluatePolicy('oauth1', p, subject('bob', 'keyZ'), t, guide)).toMatchObject({ allowed: true, exception: true })
    // carol through keyC only.
    expect(evaluatePolicy('oauth1', p, subject('carol', 'keyC'), t, guide)).toMatchObject({ allowed: true, exception: true })
    expect(evaluatePolicy('oauth1', p, subject('carol', 'keyA'), t, guide)).toMatchObject({ allowed: true })
    expect(evaluatePolicy('oauth1', p, subject('carol', 'keyZ'), t, guide)).toMatchObject({ allowed: false })
    // Expired exceptions let nobody through.
    expect(evaluatePolicy('oauth1', p, subject('dave', 'keyA'), at('2027-07-01T00:00:00Z'), guide)).toMatchObject({ allowed: false })
  })

  it('refuses an application on other methods, an exception naming nothing, and registration closed on other methods', () => {
    expect(() => normalizePolicy('basic', { state: 'deny', exceptions: [{ application: 'keyA', until }] }, now)).toThrow(InvalidPolicy)
    expect(() => normalizePolicy('basic', { state: 'deny', exceptions: [{ application: 'keyA', until }] }, now)).toThrow(/only oauth1 exceptions name an application/)
    expect(() => oauth1({ state: 'deny', exceptions: [{ client: 'Poster/1.0', until }] })).toThrow(/must name a "user".*or an "application"/)
    expect(() => normalizePolicy('wsse', { state: 'allow', registration_closed: true }, now)).toThrow(/only oauth1 closes registrations/)
    expect(oauth1({ state: 'allow', registration_closed: true }).registration_closed).toBe(true)
    // Open is the stored form's absence: other methods' stored policies are unchanged.
    expect('registration_closed' in oauth1({ state: 'allow', registration_closed: false })).toBe(false)
  })

  it('a change that does not name registration keeps it; --open-registration reopens it', () => {
    const closed = oauth1({ state: 'deprecate', registration_closed: true })
    expect(changedPolicy(closed, { state: 'deny' }).registration_closed).toBe(true)
    expect(changedPolicy(closed, { closeRegistration: false }).registration_closed).toBeUndefined()
    expect(changedPolicy(oauth1({ state: 'allow' }), { closeRegistration: true }).registration_closed).toBe(true)
  })

  it('the service: registrationClosed; a plainly allowed method answers one verdict without evaluating', async () => {
    const stored = { ...defaultPolicies(), oauth1: oauth1({ state: 'allow', registration_closed: true }), basic: oauth1({ state: 'deprecate' }) }
    const store = { load: async () => stored } as unknown as PolicyStore
    const service = new PolicyService(store, { guideUrl: guide, now: () => now })
    await service.refresh()
    expect(service.registrationClosed('oauth1')).toBe(true)
    expect(service.registrationClosed('basic')).toBe(false)
    const req = { now, headers: {} } as unknown as AuthRequest
    const a = service.check('oauth1', 'alice', req, 'keyA')
    expect(a).toEqual({ allowed: true, state: 'allow', headers: {}, exception: false })
    expect(service.check('oauth1', 'bob', req, 'keyB')).toBe(a)
    expect(service.check('basic', 'alice', req).headers).toHaveProperty('deprecation')
    service.close()
  })

  it("a user's account page line for an authorized application, while OAuth 1.0a is being retired", () => {
    expect(oauth1Standing(oauth1({ state: 'allow' }), now, 'alice')).toBeNull()
    const say = oauth1Standing(oauth1({ state: 'deprecate', schedule: [{ state: 'deny', from: '2027-05-01T00:00:00Z' }] }), now, 'alice')!
    expect(say('keyA')).toBe('This application signs its requests with OAuth 1.0a, which is being retired: Works, but is deprecated. It stops working on 2027-05-01 00:00 UTC. Its developer has been told; once it moves to OAuth 2.0 you may be asked to authorize it again.')
  })
})

describe('oauth1 moved rule', () => {
  const d = 86_400_000
  const rule = oauth1Rule({
    oauth2: [
      { application: 'keyA', user: 'u2', lastSeen: 10 * d },
      { application: 'keyB', user: 'u9', lastSeen: 30 * d },
    ],
    exchanges: [{ application: 'keyA', user: 'u1', exchangedAt: 5 * d }],
  })
  it("a user's token: exchanged, authorized again (an OAuth 2.0 request after their last OAuth 1.0a one), or still on OAuth 1.0a", () => {
    expect(rule.token({ application: 'keyA', user: 'u1', lastSeen: 20 * d })).toBe('exchanged')
    expect(rule.token({ application: 'keyA', user: 'u2', lastSeen: 9 * d })).toBe('authorized_again')
    expect(rule.token({ application: 'keyA', user: 'u2', lastSeen: 11 * d })).toBe('on_oauth1')
    expect(rule.token({ application: 'keyB', user: 'u2', lastSeen: 1 * d })).toBe('on_oauth1')
  })
  it('an application: seen with OAuth 2.0 after its last OAuth 1.0a request, or every token moved; silence is not moving', () => {
    expect(rule.application('keyB', [{ application: 'keyB', user: 'u2', lastSeen: 29 * d }])).toBe(true)
    expect(rule.application('keyB', [{ application: 'keyB', user: 'u2', lastSeen: 31 * d }])).toBe(false)
    expect(rule.application('keyA', [{ application: 'keyA', user: 'u1', lastSeen: 20 * d }, { application: 'keyA', user: 'u2', lastSeen: 9 * d }])).toBe(true)
    expect(rule.application('keyA', [{ application: 'keyA', user: 'u1', lastSeen: 20 * d }, { application: 'keyA', user: 'u3', lastSeen: 2 * d }])).toBe(false)
    expect(rule.application('keyC', [])).toBe(false)
  })
})
