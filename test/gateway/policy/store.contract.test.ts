// The migration policy as stored for every gateway of a deployment (docs/gateway.md#the-migration-policy), on each
// storage backend of helpers/backends.ts: what is saved loads back the same, saving some
// methods leaves the others, and a row the gateway cannot read is left out.
import { expect, it } from 'vitest'
import { PolicyStore } from '../../../src/gateway/policy/store.js'
import { defaultMethodPolicy, type MethodPolicy } from '../../../src/gateway/policy/types.js'
import { describeBackends, gatewayDbBackends } from '../../helpers/backends.js'

const backends = await gatewayDbBackends('policy')

const brownout: MethodPolicy = {
  state: 'brownout',
  since: '2027-02-01T00:00:00Z',
  deprecated_since: '2027-01-01T00:00:00Z',
  sunset: '2027-06-30T00:00:00Z',
  windows: [{ start: '09:00', end: '10:30' }],
  schedule: [{ state: 'deny', from: '2027-06-30T00:00:00Z' }],
  exceptions: [{ user: 'alice', until: '2027-12-31T00:00:00Z' }, { client: 'Old Feeder/1.0', until: '2027-07-01T00:00:00Z' }],
}

describeBackends('policy store contract', backends, (backend) => {
  const store = () => new PolicyStore(backend().db)
  const clear = () => backend().db.query('DELETE FROM kigo_gateway.auth_policy')

  it('loads nothing from an empty store', async () => {
    await clear()
    expect(await store().load()).toEqual({})
  })

  it('loads back what was saved, every field', async () => {
    await clear()
    await store().save({ basic: brownout })
    expect(await store().load()).toEqual({ basic: brownout })
  })

  it('replaces the methods it is given and keeps the others', async () => {
    await clear()
    const deny: MethodPolicy = { ...defaultMethodPolicy(), state: 'deny', since: '2027-03-01T00:00:00Z', deprecated_since: '2027-01-01T00:00:00Z' }
    await store().save({ basic: brownout, wsse: defaultMethodPolicy() })
    await store().save({ wsse: deny })
    expect(await store().load()).toEqual({ basic: brownout, wsse: deny })
  })

  it('fills the optional fields of a row that lacks them, and leaves out an unreadable row', async () => {
    await clear()
    const rows: Array<[string, unknown]> = [
      ['basic', { state: 'deprecate', since: '2027-04-01T00:00:00Z' }],
      ['wsse', { state: 'sometimes' }],
    ]
    for (const [method, policy] of rows) {
      await backend().db.query('INSERT INTO kigo_gateway.auth_policy (method, policy) VALUES ($1, $2::jsonb)', [method, JSON.stringify(policy)])
    }
    expect(await store().load()).toEqual({
      basic: { state: 'deprecate', since: '2027-04-01T00:00:00Z', deprecated_since: '2027-04-01T00:00:00Z', sunset: null, windows: [], schedule: [], exceptions: [] },
    })
  })

  it('keeps oauth1 (OAuth 1.0a): an exception by application, and registration closed', async () => {
    await clear()
    const oauth1: MethodPolicy = {
      ...brownout,
      exceptions: [{ application: 'dpf43f3p2l4k3l03', until: '2027-12-31T00:00:00Z' }, { user: 'alice', application: 'dpf43f3p2l4k3l03', until: '2027-09-01T00:00:00Z' }],
      registration_closed: true,
    }
    await store().save({ oauth1 })
    expect(await store().load()).toEqual({ oauth1 })
  })
})
