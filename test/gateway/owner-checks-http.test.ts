// Owner checks on the account pages and the operator API read who owns a login site or an
// OpenID Connect client, never its secret (docs/security.md#secrets-at-rest): a secret that
// cannot be opened (sealed under another KIGO_SECRET_KEY, damaged in the database) does not
// stop its owner from seeing or deleting the site, nor the operator from reading it.
// PostgreSQL, so that the test can damage a sealed secret as a bad restore would.
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshPostgres } from '../helpers/services.js'
import { startStack, type Stack } from '../helpers/stack.js'
import { WebClient, csrfOf } from './provider/helpers.js'

const database = await freshPostgres()

describe.skipIf(!database)('owner checks do not open secrets', () => {
  let stack: Stack
  let db: pg.Client
  let alice: { id: string; password: string }

  beforeAll(async () => {
    stack = await startStack({ databaseUrl: database!.url })
    db = new pg.Client({ connectionString: database!.url })
    await db.connect()
    alice = await stack.addUser('alice', 'Alice')
  })

  afterAll(async () => {
    await db?.end()
    await stack?.close()
    await database?.drop()
  })

  it('a login site whose secret cannot be opened: the operator reads it and its owner deletes it', async () => {
    const created = await stack.admin<{ api_key: string }>('POST', '/admin/sites', { name: 'Old blog', owner: 'alice', callback: 'https://old.example/cb' })
    expect(created.status).toBe(201)
    const key = created.body.api_key
    await db.query("UPDATE kigo_gateway.login_sites SET secret = 'damaged' WHERE api_key = $1", [key])

    const read = await stack.admin<{ api_key: string; owner: string }>('GET', `/admin/sites/${key}`)
    expect(read.status).toBe(200)
    expect(read.body).toMatchObject({ api_key: key, owner: 'alice' })

    const web = new WebClient(stack.url)
    await web.signIn('/account/login', alice.id, alice.password)
    const page = await web.get('/account/sites')
    const deleted = await web.post(`/account/sites/${key}/delete`, { csrf_token: csrfOf(page.text), confirm: 'yes' })
    expect(deleted.status).toBe(303)
    expect((await stack.admin('GET', `/admin/sites/${key}`)).status).toBe(404)
  })

  it('an OpenID Connect client whose secret cannot be opened: the operator reads it, its owner rotates the secret', async () => {
    const created = await stack.admin<{ client_id: string }>('POST', '/admin/oidc-clients', { name: 'Old site', owner: 'alice', redirect_uris: ['https://old.example/cb'] })
    expect(created.status).toBe(201)
    const id = created.body.client_id
    await db.query("UPDATE kigo_gateway.oidc_clients SET secret = 'damaged' WHERE client_id = $1", [id])

    const read = await stack.admin<{ client_id: string; owner: string }>('GET', `/admin/oidc-clients/${id}`)
    expect(read.status).toBe(200)
    expect(read.body).toMatchObject({ client_id: id, owner: 'alice' })

    // With the default overlap: the secret that does not open worked for nobody, so none is kept beside the new one.
    const rotated = await stack.admin<{ client_secret: string; overlap_seconds: number; previous_secret_until: string | null }>('POST', `/admin/oidc-clients/${id}/rotate-secret`)
    expect(rotated.status).toBe(200)
    expect(rotated.body.client_secret).toMatch(/^[A-Za-z0-9_-]{32,}$/)
    expect(rotated.body).toMatchObject({ overlap_seconds: 86400, previous_secret_until: null })
  })
})
