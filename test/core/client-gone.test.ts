// A write whose client is gone before the core started it is not started
// (docs/operations.md#a-client-that-has-gone): the gateway gave up (its deadline passed, its client left) while the
// core was still waiting for its store; when the store answers, nothing is written.
import { createHash, randomBytes, randomUUID } from 'node:crypto'
import { operationNameOf } from '../../src/common/route-table.js'
import { mkdtempSync, rmSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { loadConfig, type Config } from '../../src/common/config.js'
import { identityKey, signIdentity } from '../../src/common/identity.js'
import { buildCoreApp } from '../../src/core/app.js'
import { openContentStore } from '../../src/core/store/index.js'
import type { ContentStore } from '../../src/core/store/types.js'
import type { FastifyInstance } from 'fastify'

let dir: string
let config: Config
let store: ContentStore
let app: FastifyInstance
let base: string
const lines: Array<Record<string, unknown>> = []
/** While set, the store's profile read waits for it (a store that is slow to answer). */
let gate: { promise: Promise<void>; open: () => void; entered: () => void; reached: Promise<void> } | null = null
const writes: string[] = []

function newGate() {
  let open!: () => void
  let entered!: () => void
  const promise = new Promise<void>((r) => (open = r))
  const reached = new Promise<void>((r) => (entered = r))
  return { promise, open, entered, reached }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kigo-client-gone-'))
  config = loadConfig({ env: { KIGO_DATA_DIR: dir, KIGO_SECRET_KEY: randomBytes(32).toString('base64'), KIGO_ADMIN_TOKEN: randomBytes(24).toString('base64url') } })
  const real = await openContentStore({ dataDir: dir })
  store = new Proxy(real, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver) as unknown
      if (typeof value !== 'function') return value
      return async (...args: unknown[]) => {
        if (name === 'getUser' && gate) {
          const g = gate
          g.entered()
          await g.promise
        }
        if (['createEntry', 'addStar', 'removeStar', 'deleteEntry', 'createPhoto', 'upsertUser'].includes(String(name))) writes.push(String(name))
        return (value as (...a: unknown[]) => unknown).apply(target, args)
      }
    },
  })
  const sink = new Writable({ write(chunk, _enc, done) { for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l)); done() } })
  app = buildCoreApp({ config, store, logger: { level: 'info', stream: sink } })
  base = await app.listen({ host: '127.0.0.1', port: 0 })
})

afterAll(async () => {
  await app?.close()
  await store?.close()
  rmSync(dir, { recursive: true, force: true })
})

/** As the gateway signs a form it read whole: with its body's digest. */
function signedHeaders(method: string, path: string, user: string, body: string): Record<string, string> {
  const host = config.domesticHost
  const bodySha256 = createHash('sha256').update(body).digest('base64url')
  return { host, ...signIdentity(identityKey(config.secretKey), { method, url: path, host, requestId: randomUUID(), operation: operationNameOf(method, path), bodySha256 }, { user, userName: `${user} name`, authMethod: 'basic', consumer: '', scopes: [] }) }
}

function send(method: string, path: string, user: string, body = ''): { done: Promise<{ status: number; body: string }>; abort: () => void } {
  const req = httpRequest(`${base}${path}`, { method, headers: { ...signedHeaders(method, path, user, body), 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(Buffer.byteLength(body)) } })
  const done = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req.on('response', (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => (text += c))
      res.on('end', () => resolve({ status: res.statusCode!, body: text }))
    })
    req.on('error', reject)
  })
  req.end(body)
  return { done, abort: () => req.destroy() }
}

it('a star whose client left while the store was slow is not made', async () => {
  const entry = await send('POST', '/api/statuses/update.json', 'alice', 'status=an+entry').done
  expect(entry.status).toBe(200)
  const id = JSON.parse(entry.body).id as number

  writes.length = 0
  gate = newGate()
  const star = send('POST', `/api/favorites/create/${id}.json`, 'bob')
  star.done.catch(() => undefined)
  await gate.reached
  star.abort()
  await new Promise((r) => setTimeout(r, 100))
  gate.open()
  gate = null
  await new Promise((r) => setTimeout(r, 200))
  expect(writes).not.toContain('addStar')
  expect(await store.hasStar(String(id), 'bob')).toBe(false)
  expect(lines.some((l) => l.msg === 'client closed the connection before the write started; not started' && l.level === 30)).toBe(true)

  // The same request from a client that waits is made.
  const kept = await send('POST', `/api/favorites/create/${id}.json`, 'bob').done
  expect(kept.status).toBe(200)
  expect(await store.hasStar(String(id), 'bob')).toBe(true)
})
