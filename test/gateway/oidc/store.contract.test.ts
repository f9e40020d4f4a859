// The OpenID Connect store on the embedded database and on PostgreSQL: the library's state
// expires (reads ignore it, the sweep deletes it), a code is consumed, a grant's revocation
// removes its codes and tokens, ids are kept only as hashes, and the first signing key is
// generated once however many gateways ask at the same time.
import { randomBytes } from 'node:crypto'
import { expect, it } from 'vitest'
import { describeBackends, gatewayDbBackends } from '../../helpers/backends.js'
import { OidcStore } from '../../../src/gateway/oidc/store.js'

describeBackends('OidcStore', await gatewayDbBackends('oidc-store'), (current) => {
  let clock = Date.parse('2027-01-01T00:00:00Z')
  const store = () => new OidcStore(current().db, randomBytes(32).toString('base64'), () => clock)

  it('hides expired state from reads and sweeps it', async () => {
    const s = store()
    await s.upsertState('AccessToken', 'tok-1', { grantId: 'g1', accountId: 'alice', clientId: 'c1' }, 60)
    expect(await s.findState('AccessToken', 'tok-1')).toMatchObject({ accountId: 'alice' })
    clock += 61_000
    expect(await s.findState('AccessToken', 'tok-1')).toBeUndefined()
    expect(await s.sweep()).toBeGreaterThanOrEqual(1)
    const left = await current().db.query("SELECT 1 FROM kigo_gateway.oidc_state WHERE model = 'AccessToken'")
    expect(left).toHaveLength(0)
  })

  it('marks a consumed code and keeps only hashes of ids', async () => {
    const s = store()
    await s.upsertState('AuthorizationCode', 'code-secret-value', { grantId: 'g2', uid: 'uid-1' }, 60)
    await s.consumeState('AuthorizationCode', 'code-secret-value')
    expect(await s.findState('AuthorizationCode', 'code-secret-value')).toMatchObject({ consumed: expect.any(Number) })
    expect(await s.findStateByUid('AuthorizationCode', 'uid-1')).toMatchObject({ grantId: 'g2' })
    const raw = JSON.stringify(await current().db.query('SELECT id_hash, uid_hash FROM kigo_gateway.oidc_state'))
    expect(raw).not.toContain('code-secret-value')
    expect(raw).not.toContain('uid-1')
  })

  it('revokes a grant with its codes and tokens', async () => {
    const s = store()
    await s.upsertState('Grant', 'g3', { accountId: 'bob', clientId: 'c3' }, 3600)
    await s.upsertState('AccessToken', 'tok-3', { grantId: 'g3' }, 3600)
    await s.upsertState('RefreshToken', 'ref-3', { grantId: 'g3' }, 3600)
    await s.revokeGrant('g3')
    for (const [model, id] of [['Grant', 'g3'], ['AccessToken', 'tok-3'], ['RefreshToken', 'ref-3']] as const) expect(await s.findState(model, id)).toBeUndefined()
  })

  it('generates one first key for gateways asking at once, sealed at rest', async () => {
    const key = randomBytes(32).toString('base64')
    const same = () => new OidcStore(current().db, key, () => clock)
    await current().db.query('DELETE FROM kigo_gateway.oidc_keys')
    const all = await Promise.all([same().keys(3600), same().keys(3600), same().keys(3600)])
    expect(new Set(all.map((k) => k[0]!.kid)).size).toBe(1)
    const rows = await current().db.query<{ jwk: string }>('SELECT jwk FROM kigo_gateway.oidc_keys')
    expect(rows).toHaveLength(1)
    expect(rows[0]!.jwk).toMatch(/^v1\./)
    expect(rows[0]!.jwk).not.toContain('"d"')
  })
})
