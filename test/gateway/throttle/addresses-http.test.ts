// Throttling with the default settings, over HTTP, in memory and through Redis
// (docs/security.md#throttling): guessers at a dozen addresses do not lock the real user
// out of a new one, while the per-(user, address) and per-address limits still answer 429;
// only an operator's explicit, audited `kigo users lock` refuses a user everywhere.
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main } from '../../../src/cli/kigo.js'
import { availableRedis } from '../../helpers/services.js'
import { startStack, type Stack } from '../../helpers/stack.js'
import { csrfOf, oauthHeader, WebClient } from '../provider/helpers.js'

const redisUrl = await availableRedis()

/** A fresh IPv6 /64 per call: shared Redis keeps counts between runs, so no address is reused. */
const network = () => `2001:db8:${randomBytes(2).toString('hex')}:${randomBytes(2).toString('hex')}`
const address = () => `${network()}::1`
const unique = (name: string) => `${name}${randomBytes(3).toString('hex')}`

for (const backend of ['memory', 'redis'] as const) {
  describe.skipIf(backend === 'redis' && !redisUrl)(`throttling by address (${backend})`, () => {
    let stack: Stack
    const users: Record<string, { id: string; password: string; api_password: string }> = {}

    beforeAll(async () => {
      stack = await startStack({
        ...(backend === 'redis' ? { redisUrl: redisUrl! } : {}),
        // The test's requests come from loopback, so X-Forwarded-For says which address each is.
        overrides: { trustedProxies: ['127.0.0.1', '::1'] },
      })
      for (const name of ['alice', 'bob', 'carol', 'dave']) users[name] = await stack.addUser(unique(name))
    }, 60_000)

    afterAll(async () => {
      await stack?.close()
    })

    const basic = async (user: string, password: string, ip: string) => {
      const res = await fetch(`${stack.url}/api/statuses/update.json`, {
        method: 'POST',
        headers: { authorization: 'Basic ' + Buffer.from(`${user}:${password}`).toString('base64'), 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': ip },
        body: 'status=throttle',
      })
      const body = (await res.json()) as { error?: { code: string } }
      return { status: res.status, ...(body.error ? { code: body.error.code } : {}) }
    }

    const kigo = async (args: string[]) => {
      let stdout = ''
      let stderr = ''
      const code = await main(args, { KIGO_ADMIN_URL: stack.adminUrl, KIGO_ADMIN_TOKEN: stack.config.adminToken }, {
        stdout: { write: (s: string) => (stdout += s) },
        stderr: { write: (s: string) => (stderr += s) },
      })
      return { code, stdout, stderr }
    }

    it('10 wrong passwords from each of 12 addresses: the real user gets in from a new address', async () => {
      const alice = users.alice!
      const guessers = Array.from({ length: 12 }, address)
      for (const ip of guessers) {
        for (let i = 0; i < 10; i++) expect((await basic(alice.id, `guess${i}`, ip)).status).toBe(401)
      }
      expect(await basic(alice.id, alice.api_password, address())).toEqual({ status: 200 })
      // …and each guessing address is stopped for her: the per-(user, address) limit.
      const again = await basic(alice.id, alice.api_password, guessers[0]!)
      expect(again).toEqual({ status: 429, code: 'too_many_requests' })
    })

    it('one address spraying 200 failures over many names waits for any user it has not seen succeed', async () => {
      const sprayer = address()
      const carol = users.carol!
      for (let i = 0; i < 200; i++) expect((await basic(unique('nobody'), 'nope', sprayer)).status).toBe(401)
      expect(await basic(carol.id, carol.api_password, sprayer)).toEqual({ status: 429, code: 'too_many_requests' })
      expect(await basic(carol.id, carol.api_password, address())).toEqual({ status: 200 })
    })

    it('kigo users lock refuses the user everywhere, known addresses and the web sign-in too, until kigo users unlock', async () => {
      const bob = users.bob!
      const home = address()
      expect(await basic(bob.id, bob.api_password, home)).toEqual({ status: 200 })

      const locked = await kigo(['users', 'lock', bob.id, '--reason', 'guessing from a botnet', '--json'])
      expect(locked.code, locked.stderr).toBe(0)
      expect(JSON.parse(locked.stdout)).toMatchObject({ id: bob.id, locked: true, reason: 'guessing from a botnet' })

      for (const ip of [home, address()]) expect(await basic(bob.id, bob.api_password, ip)).toEqual({ status: 403, code: 'account_locked' })
      const web = new WebClient(stack.url)
      const page = await web.get('/account/login')
      const signIn = await web.post('/account/login', { csrf_token: csrfOf(page.text), username: bob.id, password: bob.password }, { 'x-forwarded-for': home })
      expect(signIn.status).toBe(403)
      expect(signIn.text).toContain('locked by the operator')
      // OAuth has no guessable secret: the user's access tokens keep working.
      const app = await stack.addOAuthClient(bob.id, ['write_public'])
      const url = `${stack.url}/api/statuses/update.json`
      const oauth = await fetch(url, {
        method: 'POST',
        headers: { authorization: oauthHeader({ url, consumer: { key: app.consumerKey, secret: app.consumerSecret }, token: { token: app.token, secret: app.tokenSecret }, form: { status: 'via oauth' } }), 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': home },
        body: 'status=via+oauth',
      })
      expect(oauth.status).toBe(200)
      // Other users are not affected.
      expect(await basic(users.dave!.id, users.dave!.api_password, home)).toEqual({ status: 200 })

      const audit = await stack.admin<{ events: Array<{ action: string; target: string; after: unknown }> }>('GET', `/admin/audit?target=${bob.id}`)
      expect(audit.body.events[0]).toMatchObject({ action: 'user.lock', target: bob.id, after: { locked: true, reason: 'guessing from a botnet' } })
      const metrics = await (await fetch(`${stack.adminUrl}/metrics`)).text()
      expect(metrics).toMatch(/kigo_throttle_refusals_total\{realm="api",rule="locked"\} [1-9]/)

      const unlocked = await kigo(['users', 'unlock', bob.id])
      expect(unlocked.code, unlocked.stderr).toBe(0)
      expect(unlocked.stdout).toMatch(/locked +false/)
      expect(await basic(bob.id, bob.api_password, address())).toEqual({ status: 200 })
      expect((await stack.admin<{ events: Array<{ action: string }> }>('GET', `/admin/audit?target=${bob.id}`)).body.events[0]!.action).toBe('user.unlock')
    })

    it('kigo users lock names an unknown user and a bad reason clearly', async () => {
      const missing = await kigo(['users', 'lock', 'nosuchuser', '--json'])
      expect(missing.code).toBe(1)
      expect(JSON.parse(missing.stderr).error.code).toBe('user_not_found')
      const bad = await stack.admin('PUT', `/admin/users/${users.dave!.id}/lock`, { reason: 'a\nb' })
      expect(bad.status).toBe(400)
      expect(await basic(users.dave!.id, users.dave!.api_password, address())).toEqual({ status: 200 })
    })
  })
}
