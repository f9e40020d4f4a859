// Differential test of the two parsers that must agree (STYLE: one for every pair): the
// gateway's reading of a request's path (which operation, so which scope) and the core's
// router. Generated spellings of every operation's path go through a real gateway and
// core over HTTP, signed with OAuth tokens that hold only read_public (or write_public).
// For each: either the gateway refuses it, or the core ran the operation the gateway
// authorized, and the token held the scope that operation needs.
import { rmSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { Writable } from 'node:stream'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig, type Config } from '../../src/common/config.js'
import { operationNameOf, operations, type Operation } from '../../src/common/route-table.js'
import { buildCoreApp } from '../../src/core/app.js'
import { openContentStore, type ContentStore } from '../../src/core/store/index.js'
import { startGateway, type RunningGateway } from '../../src/gateway/server.js'
import { authorizationHeader, hmacSha1Signature, protocolParams } from '../helpers/oauth-header.js'
import { stackEnv } from '../helpers/stack.js'
import { embeddedDataDir } from '../helpers/embedded-template.js'

let config: Config
let dir: string
let store: ContentStore
let core: FastifyInstance
let gateway: RunningGateway
let gatewayHost: string
/** The core's routing of each request, by the request ID the gateway gave it. */
const coreSaw = new Map<string, { operation: string; status: number }>()
/** The gateway's route for each request ID, read from its request log. */
const gatewaySaw = new Map<string, string>()
let readToken: Client
let writeToken: Client
let entryId: string

interface Client { consumerKey: string; consumerSecret: string; token: string; tokenSecret: string; scopes: string[] }

/**
 * The operation the core ran: the one it admitted the request for (a form of "the
 * authenticated user" named by `id` runs its `/{id}` form), else its route's URL pattern
 * read back through the route table.
 */
function operationOfCoreRoute(request: FastifyRequest): string {
  const admitted = request.coreContext?.operation
  if (admitted !== undefined) return admitted.name
  const url = request.routeOptions.url
  if (url === undefined) return ''
  return operationNameOf(request.method, url.replace(/:[A-Za-z_]+/g, '1'))
}

beforeAll(async () => {
  dir = embeddedDataDir('diff')
  const { env, gatewayPort: gwPort, corePort, adminPort } = await stackEnv(dir, { LOG_LEVEL: 'info' })
  config = loadConfig({
    env,
    overrides: { gateway: { host: '127.0.0.1' } },
  })
  store = await openContentStore({ dataDir: dir })
  core = buildCoreApp({ config, store })
  core.addHook('onResponse', (request, reply, done) => {
    coreSaw.set(String(request.id), { operation: operationOfCoreRoute(request), status: reply.statusCode })
    done()
  })
  await core.listen({ host: '127.0.0.1', port: corePort })
  const logStream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line.trim() === '') continue
        const entry = JSON.parse(line) as { msg?: string; reqId?: string; route?: string }
        if (entry.msg === 'request' && entry.reqId) gatewaySaw.set(entry.reqId, entry.route ?? '')
      }
      cb()
    },
  })
  console.log('core up', Date.now())
  gateway = await startGateway(config, { logStream })
  console.log('gateway up', Date.now())
  gatewayHost = `localhost:${gwPort}`

  const admin = async (path: string, body: unknown) => {
    const res = await fetch(`http://127.0.0.1:${adminPort}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${config.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    expect(res.status).toBe(201)
    return (await res.json()) as Record<string, string>
  }
  await admin('/admin/users', { id: 'mallory', name: 'Mallory' })
  const appKeys = await admin('/admin/apps', { name: 'reader', owner: 'mallory', scopes: ['read_public', 'write_public'] })
  const client = async (scopes: string[]): Promise<Client> => {
    const t = await admin('/admin/tokens', { consumer: appKeys.consumer_key, user: 'mallory', scopes })
    return { consumerKey: appKeys.consumer_key!, consumerSecret: appKeys.consumer_secret!, token: t.token!, tokenSecret: t.token_secret!, scopes }
  }
  readToken = await client(['read_public'])
  writeToken = await client(['write_public'])
  // An entry for the operations that take one.
  console.log('seeded', Date.now())
  const posted = await send('POST', '/api/statuses/update.json', writeToken, 'status=target')
  expect(posted.status).toBe(200)
  entryId = (JSON.parse(posted.body) as { id: string }).id
}, 180_000)

afterAll(async () => {
  await gateway?.close()
  await core?.close()
  await store?.close()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

/** An OAuth 1.0a header for `method` on the raw request target `target`, as a client that signs what it sends. */
function oauthHeader(method: string, target: string, c: Client, form: string): string {
  const params = protocolParams(c)
  const url = target.startsWith('/') ? target : new URL(target).pathname + new URL(target).search
  const q = url.indexOf('?')
  const path = q === -1 ? url : url.slice(0, q)
  const query = q === -1 ? [] : [...new URLSearchParams(url.slice(q + 1))]
  const signature = hmacSha1Signature(c, method, `http://${gatewayHost}${path}`, [...Object.entries(params), ...query, ...new URLSearchParams(form)])
  return authorizationHeader(params, signature)
}

/** Sends `target` byte for byte (node:http does not normalise the path). */
function send(method: string, target: string, c: Client, form = ''): Promise<{ status: number; body: string; requestId: string | undefined }> {
  return new Promise((resolve, reject) => {
    const [host, port] = gatewayHost.split(':')
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: Number(port),
        method,
        path: target,
        headers: {
          host: `${host}:${port}`,
          authorization: oauthHeader(method, target, c, form),
          ...(form ? { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(Buffer.byteLength(form)) } : {}),
        },
      },
      (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (d: string) => (body += d))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, requestId: undefined }))
      },
    )
    req.on('error', reject)
    req.end(form)
  })
}

/** Generated spellings of one concrete path: each one a way two parsers have disagreed. */
function spellings(path: string): string[] {
  const out = new Set<string>([path])
  const seps = [...path.matchAll(/\//g)].map((m) => m.index)
  const pctLower = (ch: string) => `%${ch.charCodeAt(0).toString(16).toLowerCase()}`
  const pctUpper = (ch: string) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`
  // Percent-encoded letters, dots and digits, in either case, one character at a time.
  for (let i = 1; i < path.length; i++) {
    const ch = path[i]!
    if (ch === '/') continue
    out.add(path.slice(0, i) + pctUpper(ch) + path.slice(i + 1))
    if (/[a-z.]/.test(ch)) out.add(path.slice(0, i) + pctLower(ch) + path.slice(i + 1))
  }
  for (const i of seps) {
    if (i === 0) continue
    out.add(`${path.slice(0, i)}%2F${path.slice(i + 1)}`)
    out.add(`${path.slice(0, i)}%2f${path.slice(i + 1)}`)
    out.add(`${path.slice(0, i)}//${path.slice(i + 1)}`)
    out.add(`${path.slice(0, i)}\\${path.slice(i + 1)}`)
    out.add(`${path.slice(0, i)}/./${path.slice(i + 1)}`)
    out.add(`${path.slice(0, i)}/x/../${path.slice(i + 1)}`)
    out.add(`${path.slice(0, i)}/%2e/${path.slice(i + 1)}`)
    out.add(`${path.slice(0, i)}/x/%2E%2E/${path.slice(i + 1)}`)
    out.add(`${path.slice(0, i)};x=1/${path.slice(i + 1)}`)
  }
  const last = path.lastIndexOf('/')
  out.add(`${path}/`)
  out.add(`${path};x=1`)
  out.add(`${path}#frag`)
  out.add(`${path}%23frag`)
  out.add(`${path}%00`)
  out.add(path.toUpperCase())
  out.add(path.slice(0, last) + path.slice(last).toUpperCase())
  out.add(path.replace('.json', '.JSON'))
  out.add(path.replace('.json', '%2Ejson'))
  out.add(path.replace('.json', ''))
  out.add(path.replace('.json', '.xml'))
  out.add(path.replace('.json', '.json.xml'))
  out.add(path.replace('/api/', '/api/%75%6E%69%63%6F%64%65/../'))
  out.add(path.replace('/api/', '/%C3%A4pi/'))
  out.add(path.replace('u', '%EF%BD%95')) // fullwidth u, as UTF-8
  out.add(path.replace('/api/', '/api/%252e%252e/'))
  out.add(`http://${gatewayHost}${path}`)
  out.add(`//${gatewayHost}${path}`)
  return [...out]
}

function concrete(o: Operation): string {
  return o.path.replace(/\{[a-z_]+\}/g, entryId) + '.json'
}

const scopeHeld = (c: Client, operation: string) => {
  const o = operations.find((op) => op.name === operation)!
  return o.scopes.length === 0 || o.scopes.some((s) => c.scopes.includes(s))
}

describe('the gateway and the core read every spelling of a path the same way', () => {
  it('a read_public token cannot write by spelling: the attacks of the issue answer 400 or 403 and store nothing', async () => {
    const before = await send('GET', `/api/statuses/show/${entryId}.json`, readToken)
    expect(before.status).toBe(200)
    for (const target of ['/api/statuses/%75pdate.json', '/api/statuses/update%2Ejson', `/api/favorites/%63reate/${entryId}.json`, `/api/statuses/%64estroy/${entryId}.json`]) {
      const res = await send('POST', target, readToken, 'status=sneaky')
      expect([400, 403], target).toContain(res.status)
      expect(JSON.parse(res.body).error.code, target).toMatch(/^(additional_authorization_required|bad_path)$/)
    }
    const photo = await send('POST', '/api/photos/%63reate.json', writeToken, 'title=x')
    expect(photo.status).toBe(403)
    const after = await send('GET', `/api/statuses/show/${entryId}.json`, readToken)
    expect(JSON.parse(after.body)).toMatchObject({ id: entryId, favorited: 0 })
  })
  /** Sends each spelling with each token and compares the gateway's route with what the core ran. */
  async function compare(cases: Array<{ method: string; target: string; form: string }>) {
    const disagreements: string[] = []
    let reachedCore = 0
    let refusedAtGateway = 0
    for (const { method, target, form } of cases) {
      for (const c of [readToken, writeToken]) {
        const before = new Set(coreSaw.keys())
        let res: { status: number; body: string }
        try {
          res = await send(method, target, c, form)
        } catch {
          // The client library refused to send it: nothing reached either side.
          continue
        }
        expect(res.status, `${method} ${target} ${form}`).toBeLessThan(500)
        const fresh = [...coreSaw.keys()].filter((k) => !before.has(k))
        if (fresh.length === 0) {
          refusedAtGateway++
          continue
        }
        reachedCore++
        const id = fresh[0]!
        const ran = coreSaw.get(id)!
        // Wait for the gateway's log line (written when the response is finished).
        for (let i = 0; i < 50 && !gatewaySaw.has(id); i++) await new Promise((r) => setTimeout(r, 10))
        const authorized = gatewaySaw.get(id)
        if (ran.operation === '') continue // the core ran no operation (404 or 405): nothing to compare
        if (authorized !== ran.operation || !scopeHeld(c, ran.operation)) {
          disagreements.push(`${method} ${target} ${form} [${c.scopes.join(',')}]: gateway ${authorized}, core ran ${ran.operation} (${ran.status})`)
        }
      }
    }
    return { disagreements, reachedCore, refusedAtGateway }
  }

  it('either the gateway refuses it, or the core runs what the gateway authorized, with the scope held', async () => {
    const apiOperations = operations.filter((o) => o.path.startsWith('/api/'))
    const cases = apiOperations.flatMap((o) => spellings(concrete(o)).map((target) => ({ method: o.method, target, form: o.method === 'POST' ? 'status=spelled' : '' })))
    const { disagreements, reachedCore, refusedAtGateway } = await compare(cases)
    expect(disagreements).toEqual([])
    // The test exercised both outcomes.
    expect(reachedCore).toBeGreaterThan(20)
    expect(refusedAtGateway).toBeGreaterThan(100)
  }, 180_000)

  it('POST spellings of every read and of every write\'s path: a read by POST is the same read, never a write', async () => {
    const apiOperations = operations.filter((o) => o.path.startsWith('/api/'))
    // Reads with a write's parameters in the body (their empty-body POST is in
    // test/gateway/legacy-clients-http.test.ts); writes with another write's.
    const cases = apiOperations.flatMap((o) =>
      spellings(concrete(o)).map((target) => ({ method: 'POST', target, form: o.readByPost ? 'status=spelled&keyword=k&word=w' : 'word=w&title=t' })),
    )
    const { disagreements, reachedCore, refusedAtGateway } = await compare(cases)
    expect(disagreements).toEqual([])
    expect(reachedCore).toBeGreaterThan(40)
    expect(refusedAtGateway).toBeGreaterThan(100)
  }, 300_000)

  it('`id` spellings on the forms of "the authenticated user": both sides pick the same operation', async () => {
    const selfForms = operations.filter((o) => o.byId !== undefined)
    expect(selfForms.length).toBeGreaterThanOrEqual(6)
    const queries = ['id=mallory', '%69d=mallory', 'i%64=mallory', 'ID=mallory', 'id=', 'id', 'id=&id=mallory', 'id=mallory&id=mallory', 'id%00=mallory', 'id+=mallory',
      '%2569d=mallory', 'x=1#&id=mallory', 'id=%20', 'id=+', 'id=%ZZ', 'id=mallory%00', 'id[]=mallory', 'id%3Dmallory']
    const cases = selfForms.flatMap((o) => {
      const path = `${o.path}.json`
      return queries.flatMap((q) => [
        { method: 'GET', target: `${path}?${q}`, form: '' },
        { method: 'POST', target: `${path}?${q}`, form: '' },
        { method: 'POST', target: path, form: q },
        { method: 'POST', target: `${path}?id=mallory`, form: q },
      ])
    })
    const { disagreements, reachedCore } = await compare(cases)
    expect(disagreements).toEqual([])
    expect(reachedCore).toBeGreaterThan(100)
  }, 300_000)

  it('a user ID written id:NAME (docs/api-differences.md#user-ids-written-as-keywords), in a path or in `id`, however spelled: both sides pick the same operation, and the user is NAME', async () => {
    const byPath = operations.filter((o) => o.path.endsWith('/{id}'))
    expect(byPath.length).toBeGreaterThanOrEqual(8)
    const written = ['id:mallory', 'id%3Amallory', 'id%3amallory', '%69d:mallory', '%69%64%3Amallory', 'id:id:mallory', 'ID:mallory', 'id:', 'id%3A']
    const pathCases = byPath.flatMap((o) => written.flatMap((w) => spellings(`${o.path.replace('{id}', w)}.json`).slice(0, 12).map((target) => ({ method: o.method, target, form: '' }))))
    const selfForms = operations.filter((o) => o.byId !== undefined)
    const idCases = selfForms.flatMap((o) => written.flatMap((w) => [
      { method: 'GET', target: `${o.path}.json?id=${w}`, form: '' },
      { method: 'POST', target: `${o.path}.json`, form: `id=${w}` },
    ]))
    const { disagreements, reachedCore } = await compare([...pathCases, ...idCases])
    expect(disagreements).toEqual([])
    expect(reachedCore).toBeGreaterThan(100)
    // What each side ran is the read of mallory, whichever way the keyword was spelled.
    for (const target of ['/api/friendships/show/id:mallory.json', '/api/friendships/show/id%3Amallory.json', '/api/friendships/show/%69d%3amallory.json', '/api/friendships/show.json?id=id%3Amallory']) {
      const res = await send('GET', target, readToken)
      expect([target, res.status, (JSON.parse(res.body) as { id?: string }).id]).toEqual([target, 200, 'mallory'])
    }
    for (const target of ['/api/friendships/show/ID:mallory.json', '/api/friendships/show/id:id:mallory.json']) {
      expect((await send('GET', target, readToken)).status, target).toBe(404)
    }
  }, 300_000)
})
