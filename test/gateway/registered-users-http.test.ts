// docs/gateway.md#registered-users-in-the-core: every registered user exists for the
// API from registration, in embedded mode (one process, the embedded engine): a user made
// by the operator API (what `kigo users add` calls) who never made a request can be
// followed, has empty timelines, a User and a page; a new display name shows at once; a
// store made before the rule is filled in at start-up.
import { rmSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { request } from 'undici'
import { loadConfig } from '../../src/common/config.js'
import { migrate, openDb } from '../../src/common/sql.js'
import { coreSchema, migrations as coreMigrations } from '../../src/core/store/migrations.js'
import { gatewayMigrations } from '../../src/gateway/schema.js'
import { identityStoreOn } from '../../src/gateway/identity.js'
import { oauth1aClient } from '../helpers/oauth1a.js'
import { startStack, stackEnv, type Stack } from '../helpers/stack.js'
import { embeddedDataDir } from '../helpers/embedded-template.js'

type Client = { consumerKey: string; consumerSecret: string; token: string; tokenSecret: string }

async function call(stack: Stack, method: string, path: string, headers: Record<string, string> = {}, body?: string) {
  const res = await request(`${stack.url}${path}`, {
    method: method as 'GET',
    headers: body === undefined ? headers : { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    ...(body === undefined ? {} : { body }),
  })
  return { status: res.statusCode, text: await res.body.text() }
}

function oauth(stack: Stack, c: Client, method: string, path: string): Record<string, string> {
  const client = oauth1aClient({ key: c.consumerKey, secret: c.consumerSecret })
  return { ...client.toHeader(client.authorize({ url: `${stack.url}${path}`, method, data: {} }, { key: c.token, secret: c.tokenSecret })) }
}

const basic = (id: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${id}:${password}`).toString('base64')}` })

describe('registered users in the core, embedded', () => {
  let stack: Stack
  let alice: { api_password: string }
  let aliceReader: Client

  beforeAll(async () => {
    stack = await startStack()
    alice = await stack.addUser('alice', 'Alice')
    aliceReader = await stack.addOAuthClient('alice', ['read_public', 'write_public'])
    await stack.addUser('bob', 'Bob')
  }, 120_000)
  afterAll(async () => {
    await stack?.close()
  })

  test('a user who never made a request can be followed, has empty timelines, a User and a page', async () => {
    const follow = await call(stack, 'POST', '/api/friendships/create/bob.json', basic('alice', alice.api_password))
    expect(follow.status).toBe(200)
    expect(JSON.parse(follow.text)).toMatchObject({ id: 'bob', name: 'Bob', followers_count: 1 })
    for (const path of ['/api/statuses/user_timeline/bob.json', '/api/statuses/friends_timeline/bob.json', '/api/statuses/user_timeline.json?id=bob']) {
      const res = await call(stack, 'GET', path)
      expect([path, res.status, res.text]).toEqual([path, 200, '[]'])
    }
    const xml = await call(stack, 'GET', '/api/statuses/user_timeline/bob.xml')
    expect(xml.status).toBe(200)
    expect(xml.text).toContain('<statuses type="array"')
    const show = await call(stack, 'GET', '/api/friendships/show/bob.json')
    expect(show.status).toBe(200)
    expect(JSON.parse(show.text)).toMatchObject({ id: 'bob', name: 'Bob' })
    const page = await call(stack, 'GET', '/bob/', { accept: 'text/html' })
    expect(page.status).toBe(200)
    expect(page.text).toContain('Bob <small>(bob)</small>')
    // Who follows bob, from bob's side.
    const followers = await call(stack, 'GET', '/api/statuses/followers/bob.json')
    expect(JSON.parse(followers.text).map((u: { id: string }) => u.id)).toEqual(['alice'])
  })

  test("an OAuth user who never posted reads their own antenna and timeline: 200 []", async () => {
    const carol = await stack.addUser('carol', 'Carol')
    expect(carol.id).toBe('carol')
    const token = await stack.addOAuthClient('carol', ['read_public'])
    for (const path of ['/api/statuses/friends_timeline.json', '/api/statuses/user_timeline.json', '/api/statuses/friends.json']) {
      const res = await call(stack, 'GET', path, oauth(stack, token, 'GET', path))
      expect([path, res.status, res.text]).toEqual([path, 200, '[]'])
    }
    void aliceReader
  })

  test('a new display name shows at once in the API, in entries and on the page', async () => {
    // bob posts once under his first name, so his entries carry it too.
    const bob = await stack.admin<{ api_password: string }>('POST', '/admin/users/bob/reset-api-password')
    const posted = await call(stack, 'POST', '/api/statuses/update.json', basic('bob', bob.body.api_password), 'status=hello')
    expect(posted.status).toBe(200)
    const renamed = await stack.admin<{ name: string }>('PUT', '/admin/users/bob/name', { name: 'Robert ✨' })
    expect(renamed.status).toBe(200)
    expect(renamed.body.name).toBe('Robert ✨')
    const show = await call(stack, 'GET', '/api/friendships/show/bob.json')
    expect(JSON.parse(show.text)).toMatchObject({ id: 'bob', name: 'Robert ✨' })
    const timeline = await call(stack, 'GET', '/api/statuses/user_timeline/bob.json')
    expect(JSON.parse(timeline.text)[0].user).toMatchObject({ id: 'bob', name: 'Robert ✨' })
    const page = await call(stack, 'GET', '/bob/', { accept: 'text/html' })
    expect(page.text).toContain('Robert ✨ <small>(bob)</small>')
    // alice's antenna shows bob's entry under the new name.
    const antenna = await call(stack, 'GET', '/api/statuses/friends_timeline.json', basic('alice', alice.api_password))
    expect(JSON.parse(antenna.text)[0].user.name).toBe('Robert ✨')
    // A name of blanks is refused, the user unknown is 404.
    expect((await stack.admin('PUT', '/admin/users/bob/name', { name: '   ' })).status).toBe(400)
    expect((await stack.admin('PUT', '/admin/users/nobody/name', { name: 'X' })).status).toBe(404)
    expect(JSON.parse((await call(stack, 'GET', '/api/friendships/show/bob.json')).text).name).toBe('Robert ✨')
  })

  test('the core takes registered users only from the gateway: a client posting to its path gets 404', async () => {
    const body = `users=${encodeURIComponent(JSON.stringify([['mallory', 'Mallory', 99]]))}`
    for (const headers of [{}, basic('alice', alice.api_password)]) {
      const res = await call(stack, 'POST', '/users', headers, body)
      expect(res.status).toBe(404)
    }
    // Straight to the core, unsigned: the same.
    const direct = await request(`${stack.coreUrl}/users`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body })
    expect(direct.statusCode).toBe(404)
    await direct.body.dump()
    expect((await call(stack, 'GET', '/api/friendships/show/mallory.json')).status).toBe(404)
  })
})

describe('a store made before the rule', () => {
  test('is filled in at start-up: its users exist for the API', async () => {
    const dir = embeddedDataDir('old-store')
    try {
      // The schemas as the last kigo without the rule left them, and a user it registered.
      const { env } = await stackEnv(dir)
      const config = loadConfig({ env })
      const db = await openDb({ dataDir: dir })
      await migrate(db, coreSchema, coreMigrations.filter((m) => m.version < 5))
      const store = await identityStoreOn(db, config.secretKey, gatewayMigrations.filter((m) => m.version !== 61))
      await store.createUser({ id: 'olduser', name: 'Old User', password: 'a long enough password', apiPassword: 'api-password-of-old-user' })
      await db.close()

      const stack = await startStack({ dataDir: dir, secretKey: config.secretKey })
      try {
        let show = await call(stack, 'GET', '/api/friendships/show/olduser.json')
        // The start-up send runs beside the first requests: it is done within moments.
        for (let i = 0; show.status !== 200 && i < 300; i++) {
          await new Promise((r) => setTimeout(r, 100))
          show = await call(stack, 'GET', '/api/friendships/show/olduser.json')
        }
        expect(show.status).toBe(200)
        expect(JSON.parse(show.text)).toMatchObject({ id: 'olduser', name: 'Old User' })
        expect((await call(stack, 'GET', '/api/statuses/user_timeline/olduser.json')).text).toBe('[]')
      } finally {
        await stack.close()
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})
