// The login API on PostgreSQL with two gateways (production topology): sites, sessions
// and certs live in the shared store, so every step of a sign-in may reach another
// gateway. Absent PostgreSQL skips this outside CI and fails it under CI=true.
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshPostgres } from '../../helpers/services.js'
import { startStack, type Stack } from '../../helpers/stack.js'
import { WebClient, csrfOf, exchangePath, hiddenField, signInPath, type Site } from './helpers.js'

const pg = await freshPostgres()

describe.skipIf(!pg)('a sign-in across two gateways on PostgreSQL', () => {
  let a: Stack
  let b: Stack
  let alice: { id: string; password: string }
  let site: Site

  beforeAll(async () => {
    const shared = { databaseUrl: pg!.url, secretKey: randomBytes(32).toString('base64'), adminToken: randomBytes(24).toString('base64url') }
    a = await startStack(shared)
    b = await startStack({ ...shared, coreUrl: a.coreUrl })
    alice = await a.addUser('alice', 'Alice')
    site = (await b.admin<Site>('POST', '/admin/sites', { name: 'Shared site', owner: 'alice', callback: 'https://shared.example/cb' })).body
  })
  afterAll(async () => {
    await b?.close()
    await a?.close()
    await pg?.drop()
  })

  it('starts on one gateway, signs in and allows on the other, exchanges on the first, once', async () => {
    const path = signInPath(site, { back: 'x' })
    const onA = new WebClient(a.url)
    const form = await onA.get(path)
    expect(form.status).toBe(200)
    // The same browser (its cookies) now reaches gateway B.
    const onB = new WebClient(b.url)
    for (const [k, v] of onA.cookies) onB.cookies.set(k, v)
    const login = await onB.post('/account/login', { csrf_token: csrfOf(form.text), next: hiddenField(form.text, 'next')!, username: alice.id, password: alice.password })
    expect(login.status).toBe(303)
    for (const [k, v] of onB.cookies) onA.cookies.set(k, v)
    const consent = await onA.get(path)
    expect(consent.text).toContain('Shared site')
    const allowed = await onB.post('/auth', { csrf_token: csrfOf(consent.text), request: hiddenField(consent.text, 'request')!, decision: 'allow' })
    expect(allowed.status).toBe(302)
    const cert = new URL(allowed.headers.get('location')!).searchParams.get('cert')!
    const first = await fetch(a.url + exchangePath(site, cert))
    expect(first.status).toBe(200)
    expect((await first.json()).user.name).toBe('alice')
    const second = await fetch(b.url + exchangePath(site, cert))
    expect(second.status).toBe(400)
    expect((await second.json()).error.message).toMatch(/already exchanged/)
  })
})
