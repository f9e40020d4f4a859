// The core's anchors are only a fair comparison if they answer as the core does. The
// plain anchor must give the core's bytes for a plain request; the floor (ANCHOR_REQUIRED)
// must also do every check the core cannot skip for a statuses/show, anonymous or signed:
// the same status as the core for each spelling below, and the same bytes when it answers
// 200 (for a signed viewer, whether the viewer starred the entry); and it keeps the public
// profile copy up to date as the core does.
import { randomBytes, randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildAnchor } from '../../bench/anchor.js'
import { loadConfig } from '../../src/common/config.js'
import { identityKey, signIdentity, type Identity } from '../../src/common/identity.js'
import { startCore, type RunningCore } from '../../src/core/server.js'
import { openContentStore } from '../../src/core/store/index.js'
import { freshPostgres } from '../helpers/services.js'

const database = await freshPostgres()

describe.skipIf(database === null)("the core's anchors", () => {
  const host = 'localhost:8080'
  const globalHost = 'global.example:8080'
  const secretKey = randomBytes(32).toString('base64')
  const dataDir = mkdtempSync(join(tmpdir(), 'kigo-anchor-test-'))
  const config = loadConfig({
    env: {
      DATABASE_URL: database!.url,
      KIGO_SECRET_KEY: secretKey,
      KIGO_ADMIN_TOKEN: 'x'.repeat(32),
      KIGO_CORE_PORT: '0',
      KIGO_CORE_METRICS_PORT: '0',
      KIGO_DOMESTIC_HOST: host,
      KIGO_GLOBAL_HOST: globalHost,
      KIGO_DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
    },
  })
  const hosts = { domesticHost: config.domesticHost, globalHost: config.globalHost, publicScheme: config.publicScheme }
  let core: RunningCore
  let plain: FastifyInstance
  let floor: FastifyInstance
  let id = ''

  beforeAll(async () => {
    core = await startCore(config, { logger: false })
    const store = await openContentStore({ databaseUrl: database!.url, dataDir })
    const entry = await store.createEntry(
      { authorId: 'bench', authorName: 'Bench', keyword: 'tea', source: 'web', deployment: 'domestic', inReplyToStatusId: null },
      [],
      () => 'green & <black>',
    )
    // One viewer starred it, one did not; both have a profile copy.
    await store.upsertUser({ id: 'fan', name: 'Fan' })
    await store.upsertUser({ id: 'renamed', name: 'Old Name' })
    await store.addStar(entry.id, 'fan')
    await store.close()
    id = entry.id
    plain = buildAnchor({ databaseUrl: database!.url, hosts })
    floor = buildAnchor({
      databaseUrl: database!.url,
      hosts,
      required: { secretKey, identityMaxAgeSeconds: config.core.identityMaxAgeSeconds, routeMethods: config.auth.routeMethods },
    })
  })

  afterAll(async () => {
    await plain?.close()
    await floor?.close()
    await core?.close()
    await database?.drop()
    rmSync(dataDir, { recursive: true, force: true })
  })

  const ask = (app: FastifyInstance, url: string, headers: Record<string, string> = {}) => app.inject({ method: 'GET', url, headers: { host, ...headers } })

  it('the plain anchor gives the core’s bytes for a plain request', async () => {
    const url = `/api/statuses/show/${id}.json`
    expect((await ask(plain, url)).body).toBe((await ask(core.app, url)).body)
  })

  it('the floor answers every spelling as the core does: the same status, and the same bytes and headers when it serves', async () => {
    const as = (user: string, authMethod: Identity['authMethod'] = 'basic', scopes: string[] = []): Identity => ({
      user,
      userName: user === 'fan' ? 'Fan' : 'Bench',
      authMethod,
      consumer: authMethod === 'oauth' ? 'client-1' : '',
      scopes,
    })
    const signed = (url: string, extra: Record<string, string> = {}, identity: Identity | null = null, operation = 'statuses/show') => ({
      ...signIdentity(identityKey(secretKey), { method: 'GET', url, host, requestId: randomUUID(), operation, bodySha256: '' }, identity),
      ...extra,
    })
    const show = `/api/statuses/show/${id}.json`
    const cases: Array<[string, Record<string, string>?]> = [
      [`/api/statuses/show/${id}.json`],
      [`/api/statuses/show/${id}.xml`],
      [`/api/statuses/show/${id}`],
      [`/api/statuses/show/${id}.json?callback=cb.fn`],
      [`/api/statuses/show/${id}.json?callback=`],
      [`/api/statuses/show/${id}.json?body_formats=html`],
      [`/api/statuses/show/${id}.json?oauth_token=ignored`],
      [`/api/statuses/show/${id}.json`, { host: globalHost }],
      [show, signed(show)],
      // Signed viewers: one who starred the entry, one who did not, an OAuth one.
      [show, signed(show, {}, as('fan'))],
      [`/api/statuses/show/${id}.xml`, signed(`/api/statuses/show/${id}.xml`, {}, as('fan'))],
      [show, signed(show, {}, as('bench'))],
      [show, signed(show, {}, as('fan', 'oauth', ['read_public']))],
      // Refused by both:
      [`/api/statuses/show/${id}.json?callback=a&callback=b`],
      [`/api/statuses/show/${id}.json?callback=not%20a%20name`],
      [`/api/statuses/show/${id}.json?x=%ZZ`],
      [`/api/statuses/show/${id}.json?x=a%00b`],
      [`/api/statuses/show/${id}.json?file=x`],
      [`/api/statuses/show/${id}.json`, { host: 'elsewhere.example' }],
      [`/api/statuses/show/${id}.json`, { 'x-kigo-user': 'mallory' }],
      [`/api/statuses/show/${id}.json`, signed(`/api/statuses/show/${id}.json`, { 'x-kigo-identity-signature': 't=1, v1=' + 'A'.repeat(43) })],
      [show, signed(show, {}, as('fan'), 'statuses/update')],
      [show, signed(show, {}, as('fan'), '')],
      [show, signed(show, {}, as('fan', 'oauth', ['private_timeline']))],
      [show, signed(show, {}, as('fan', 'wsse'))],
      [`/api/statuses/show/%30${id}.json`],
      [`/api/statuses/show/${id}.html`],
      [`/api/statuses/show/99999999.json`],
    ]
    for (const [url, headers] of cases) {
      const [fromCore, fromFloor] = [await ask(core.app, url, headers), await ask(floor, url, headers)]
      const what = `${url} ${JSON.stringify(headers ?? {})}`
      expect(fromFloor.statusCode, what).toBe(fromCore.statusCode)
      if (fromCore.statusCode !== 200) continue
      expect(fromFloor.body, what).toBe(fromCore.body)
      for (const name of ['content-type', 'cache-control']) expect(fromFloor.headers[name], `${what} ${name}`).toBe(fromCore.headers[name])
    }
    // A signed request runs once on both: the same headers again are 401.
    for (const app of [core.app, floor]) {
      const once = signed(show, {}, as('fan'))
      expect((await ask(app, show, once)).statusCode).toBe(200)
      expect((await ask(app, show, once)).statusCode).toBe(401)
    }
    // The viewer's star is in what both answered (so the comparison above saw it).
    for (const app of [core.app, floor]) {
      expect(JSON.parse((await ask(app, show, signed(show, {}, as('fan')))).body)).toMatchObject({ favorited: 1 })
      expect(JSON.parse((await ask(app, show, signed(show, {}, as('bench')))).body)).toMatchObject({ favorited: 0 })
    }
  })

  it('the floor keeps the public profile copy up to date from a signed identity, as the core does', async () => {
    const show = `/api/statuses/show/${id}.json`
    const identity: Identity = { user: 'renamed', userName: 'New Name', authMethod: 'basic', consumer: '', scopes: [] }
    const headers = signIdentity(identityKey(secretKey), { method: 'GET', url: show, host, requestId: 'r-2', operation: 'statuses/show', bodySha256: '' }, identity)
    expect((await ask(floor, show, headers)).statusCode).toBe(200)
    const store = await openContentStore({ databaseUrl: database!.url, dataDir })
    try {
      expect(await store.getUser('renamed')).toEqual({ id: 'renamed', name: 'New Name' })
    } finally {
      await store.close()
    }
  })
})
