// A login-API site is known by its identity, never by its name (docs/gateway.md#migration-notices):
// its sign-ins are counted for it alone, and it moves only through its owner's own OpenID
// Connect clients. A stranger who registers an OpenID Connect client named like alice's
// site, and signs in to it, changes nothing of alice's site's report, plan or notices; a
// stranger who registers a site of the same name sees none of its sign-ins. The clock is
// the test's (a little behind the real one, so that the ID tokens the relying-party library
// checks are current). On each storage backend.
import { afterAll, beforeAll, expect, it } from 'vitest'
import { describeBackends, storageBackends } from '../../helpers/backends.js'
import { cliOf } from '../../helpers/cli.js'
import { startStack, type Stack } from '../../helpers/stack.js'
import { startTestSmtp, type TestSmtp } from '../../helpers/smtp.js'
import { browse, discover, oidc, registerClient, startSignIn } from '../oidc/helpers.js'
import { WebClient, signInPath, signInThrough, type Site } from './helpers.js'

describeBackends('a login-API site known by its identity', await storageBackends('site-identity'), (current) => {
  let clock = Date.now() - 10 * 60_000
  let stack: Stack
  let smtp: TestSmtp
  const users: Record<string, { id: string; password: string }> = {}
  const cli = cliOf(() => ({ KIGO_ADMIN_URL: stack.adminUrl, KIGO_ADMIN_TOKEN: stack.config.adminToken }))

  interface UsageRecord { method: string; user: string; client: string; accepted: number; moved: boolean | null }
  const loginApiRows = async () => (await stack.admin<{ records: UsageRecord[] }>('GET', '/admin/usage?method=login_api')).body.records

  /** `user` signs in to the OpenID Connect client `name` of `owner` (registered now). */
  async function signInWithOidc(name: string, owner: string, user: string): Promise<void> {
    const redirect = `https://${owner}.example/cb`
    const client = await registerClient(stack, { name, owner, redirect_uris: [redirect] })
    const config = await discover(stack.url, client)
    const s = await startSignIn(config, redirect)
    const { callback } = await browse(s.url, redirect, users[user]!)
    await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: s.verifier, expectedState: s.state, expectedNonce: s.nonce })
  }

  beforeAll(async () => {
    smtp = await startTestSmtp()
    const { databaseUrl, dataDir } = current()
    stack = await startStack({ dataDir, ...(databaseUrl !== undefined ? { databaseUrl } : {}), now: () => clock, overrides: { mail: { smtpUrl: smtp.url, sendIntervalSeconds: 0 }, notices: { intervalSeconds: 0 }, migration: { usageFlushMs: 200 } } })
    for (const id of ['alice', 'bob', 'mallory']) {
      users[id] = await stack.addUser(id)
      expect((await stack.admin('PUT', `/admin/users/${id}/email`, { email: `${id}@example.test` })).status).toBe(200)
    }
  })

  afterAll(async () => {
    await stack?.close()
    await smtp?.close()
  })

  it('a stranger\'s OpenID Connect client named like alice\'s site, and a site of the same name, change nothing of alice\'s site', async () => {
    const site = (await stack.admin<Site>('POST', '/admin/sites', { name: 'Alice Blog', owner: 'alice', callback: 'https://alice.example/cb' })).body
    const { answer } = await signInThrough(new WebClient(stack.url), signInPath(site), users.bob!)
    expect(answer.status).toBe(302)

    clock += 60_000
    await signInWithOidc('Alice Blog', 'mallory', 'mallory')
    // mallory's own site of the same name: nobody signs in through it.
    expect((await stack.admin('POST', '/admin/sites', { name: 'Alice Blog', owner: 'mallory', callback: 'https://mallory.example/cb' })).status).toBe(201)

    expect((await loginApiRows()).map((r) => [r.user, r.client, r.accepted, r.moved])).toEqual([['bob', 'Alice Blog', 1, false]])

    expect((await cli.kigo('policy', 'set', 'login_api', 'deprecate')).code).toBe(0)
    expect(await cli.json('notices', 'run')).toMatchObject({ sent: 1 })
    const toAlice = smtp.mails.filter((m) => m.to.includes('alice@example.test'))
    expect(toAlice).toHaveLength(1)
    expect(toAlice[0]!.text).toContain('Alice Blog: 1 sign-in, last seen')
    expect(smtp.mails.filter((m) => m.to.includes('mallory@example.test'))).toHaveLength(0)
    expect(await cli.json('policy', 'plan', 'login_api', 'deny')).toMatchObject({ users: 1, clients: 1, sites: 1, moved_users: 0 })

    // mallory's account page tells her nothing of alice's site's sign-ins.
    const web = new WebClient(stack.url)
    expect((await web.signIn('/account/login', 'mallory', users.mallory!.password)).status).toBe(303)
    expect((await web.get('/account')).text).not.toContain('id="migration-notice"')
  })

  it('the site moves when its visitors sign in through its owner\'s own OpenID Connect client', async () => {
    clock += 60_000
    await signInWithOidc('Alice Blog', 'alice', 'bob')
    expect((await loginApiRows()).map((r) => [r.user, r.client, r.moved])).toEqual([['bob', 'Alice Blog', true]])
    expect(await cli.json('policy', 'plan', 'login_api', 'deny')).toMatchObject({ users: 0, sites: 0, moved_users: 1 })
    expect((await cli.json<{ message: unknown }>('notices', 'preview', 'alice')).message).toBeNull()
  })
})
