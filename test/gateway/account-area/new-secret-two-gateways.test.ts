// The page a registration or rotation redirects to, behind a balancer: two gateways on one
// PostgreSQL (docs/gateway.md#a-new-secret-is-shown-once). The new secret waits in the
// shared store beside the session, sealed, so the gateway that answers the redirect shows
// it even when another one took the post; once shown it is gone on both. Absent
// PostgreSQL skips this outside CI and fails it under CI=true.
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshPostgres } from '../../helpers/services.js'
import { startStack, type Stack } from '../../helpers/stack.js'
import { codeOf, csrfOf, WebClient } from '../provider/helpers.js'

const database = await freshPostgres()

describe.skipIf(!database)('a new secret shown once, with two gateways', () => {
  let a: Stack
  let b: Stack
  let db: pg.Client
  let alice: { id: string; password: string }

  beforeAll(async () => {
    const shared = { databaseUrl: database!.url, secretKey: randomBytes(32).toString('base64'), adminToken: randomBytes(24).toString('base64url') }
    a = await startStack(shared)
    // B answers for A's host too: one deployment on two gateways, as behind a balancer.
    b = await startStack({ ...shared, coreUrl: a.coreUrl, overrides: { domesticHost: new URL(a.url).host } })
    alice = await a.addUser('alice', 'Alice')
    db = new pg.Client({ connectionString: database!.url })
    await db.connect()
  })
  afterAll(async () => {
    await db?.end()
    await b?.close()
    await a?.close()
    await database?.drop()
  })

  /** A GET of `path` through gateway `target`, for the deployment both serve (`a`'s host), with `web`'s cookies. */
  const getOn = async (target: Stack, web: WebClient, path: string) => {
    const res = await request(`${target.globalUrl}${path}`, {
      headers: { host: new URL(a.url).host, cookie: [...web.cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
    })
    return { status: res.statusCode, text: await res.body.text() }
  }

  it('the post on one gateway, the page on the other: shown there once, sealed at rest meanwhile, then on neither', async () => {
    const web = new WebClient(a.url)
    expect((await web.signIn('/account/login', alice.id, alice.password)).status).toBe(303)
    const account = await web.get('/account')
    const posted = await web.post('/account/apps', { csrf_token: csrfOf(account.text), name: 'Balanced', scope: 'read_public' })
    expect(posted.status).toBe(303)
    const location = posted.headers.get('location')!

    const held = await db.query<{ shown_secret: string }>('SELECT shown_secret FROM kigo_gateway.web_sessions WHERE shown_secret IS NOT NULL')
    expect(held.rows).toHaveLength(1)
    expect(held.rows[0]!.shown_secret).toMatch(/^v1\./)

    const shown = await getOn(b, web, location)
    expect(shown.status).toBe(200)
    const secret = codeOf(shown.text, 'consumer_secret')!
    expect(secret).toMatch(/^[A-Za-z0-9_-]{40,}$/)
    expect(held.rows[0]!.shown_secret).not.toContain(secret)
    const key = codeOf(shown.text, 'consumer_key')!
    expect((await a.admin<{ consumer_key: string }>('GET', `/admin/apps/${key}`)).status).toBe(200)

    for (const target of [a, b]) {
      const again = await getOn(target, web, location)
      expect(again.status).toBe(200)
      expect(codeOf(again.text, 'consumer_secret')).toBeUndefined()
      expect(again.text).toContain('The consumer secret was shown once')
    }
    expect((await db.query('SELECT 1 FROM kigo_gateway.web_sessions WHERE shown_secret IS NOT NULL')).rows).toHaveLength(0)
  })
})
