// The OpenID Connect store on the embedded database and on PostgreSQL: the library's state
// expires (reads ignore it, the sweep deletes it), a code is consumed, a grant's revocation
// removes its codes and tokens, ids are kept only as hashes, the first signing key is
// generated once however many gateways ask at the same time, a client is edited as it is
// registered, and the people holding a grant of a client are counted. A client secret
// rotated with an overlap is kept sealed as the previous one until its expiry.
import { randomBytes } from 'node:crypto'
import { expect, it } from 'vitest'
import { describeBackends, gatewayDbBackends } from '../../helpers/backends.js'
import { OidcStore } from '../../../src/gateway/oidc/store.js'
import { UnreadableSecret } from '../../../src/gateway/store/crypto.js'

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

  it('counts the people holding an unexpired grant of a client, each once', async () => {
    const s = store()
    expect(await s.countSignedInUsers('c-count')).toBe(0)
    await s.upsertState('Grant', 'gc1', { accountId: 'ann', clientId: 'c-count' }, 3600)
    await s.upsertState('Grant', 'gc2', { accountId: 'ann', clientId: 'c-count' }, 3600)
    await s.upsertState('Grant', 'gc3', { accountId: 'ben', clientId: 'c-count' }, 3600)
    await s.upsertState('Grant', 'gc4', { accountId: 'cid', clientId: 'c-count' }, 60)
    await s.upsertState('Grant', 'gc5', { accountId: 'dot', clientId: 'c-other' }, 3600)
    await s.upsertState('AccessToken', 'tc1', { accountId: 'eve', clientId: 'c-count', grantId: 'gc3' }, 3600)
    expect(await s.countSignedInUsers('c-count')).toBe(3)
    clock += 61_000
    expect(await s.countSignedInUsers('c-count')).toBe(2)
    await s.revokeGrant('gc3')
    expect(await s.countSignedInUsers('c-count')).toBe(1)
  })

  it('edits the name and URIs of a client as a registration checks them, returning before and after', async () => {
    const s = store()
    await current().db.query("INSERT INTO kigo_gateway.users (id, name, password_hash, api_password) VALUES ('olive', 'Olive', 'x', 'x') ON CONFLICT DO NOTHING")
    const { client, secret } = await s.createClient({ name: 'Site', ownerId: 'olive', redirectUris: ['https://site.example/cb'], public: false })
    const edited = await s.updateClient(client.clientId, { name: ' New site ', redirectUris: ['https://site.example/new', 'https://site.example/new'], postLogoutRedirectUris: ['https://site.example/'] })
    expect(edited).toEqual({ before: client, after: { ...client, name: 'New site', redirectUris: ['https://site.example/new'], postLogoutRedirectUris: ['https://site.example/'] } })
    for (const bad of [{ name: '' }, { redirectUris: [] }, { redirectUris: ['ftp://site.example/cb'] }, { postLogoutRedirectUris: ['https://site.example/#x'] }]) {
      await expect(s.updateClient(client.clientId, { name: 'Again', redirectUris: ['https://site.example/again'], postLogoutRedirectUris: [], ...bad })).rejects.toThrow(/must|give/)
    }
    expect(await s.getClient(client.clientId)).toEqual({ client: edited!.after, secret })
    expect(await s.updateClient('no-such-client', { name: 'X', redirectUris: ['https://x.example/'], postLogoutRedirectUris: [] })).toBeNull()
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

  it('rotates a client secret with an overlap: the old one kept sealed until its expiry, forgotten without one; a public client has none', async () => {
    const db = current().db
    await db.query("INSERT INTO kigo_gateway.users (id, name, password_hash, api_password) VALUES ('carol', 'Carol', 'x', 'x') ON CONFLICT DO NOTHING")
    const s = store()
    const { client, secret } = await s.createClient({ name: 'Site', ownerId: 'carol', redirectUris: ['https://site.example/cb'], public: false })
    const rotated = await s.rotateClientSecret(client.clientId, { overlapSeconds: 3600 })
    expect(rotated).toEqual({ client, secret: expect.any(String), previousUntil: new Date(clock + 3_600_000) })
    expect(await s.getClient(client.clientId)).toEqual({ client, secret: (rotated as { secret: string }).secret, previous: { secret, expiresAt: clock + 3_600_000 } })
    const [row] = await db.query<{ previous_secret: string }>('SELECT previous_secret FROM kigo_gateway.oidc_clients WHERE client_id = $1', [client.clientId])
    expect(row!.previous_secret).toMatch(/^v1\./)
    expect(row!.previous_secret).not.toContain(secret!)
    await db.query('UPDATE kigo_gateway.oidc_clients SET previous_secret = secret WHERE client_id = $1', [client.clientId])
    // Moved from another column, it is refused when it is read (and only then: an expired one never is).
    const moved = await s.getClient(client.clientId)
    expect(() => moved?.previous?.secret).toThrow(UnreadableSecret)

    const none = await s.rotateClientSecret(client.clientId)
    expect(await s.getClient(client.clientId)).toEqual({ client, secret: (none as { secret: string }).secret })
    const pub = await s.createClient({ name: 'App', ownerId: 'carol', redirectUris: ['https://app.example/cb'], public: true })
    expect(await s.rotateClientSecret(pub.client.clientId, { overlapSeconds: 3600 })).toBe('public')
    expect(await s.rotateClientSecret('no-such-client', { overlapSeconds: 3600 })).toBeNull()
  })
})
