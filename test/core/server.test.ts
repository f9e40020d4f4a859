// startCore: a real listener on a free port, real HTTP, graceful close (docs/operations.md#dependability).
import { randomBytes, randomUUID } from 'node:crypto'
import { operationNameOf } from '../../src/common/route-table.js'
import { mkdtempSync, rmSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { loadConfig, type Config } from '../../src/common/config.js'
import { identityKey, signIdentity } from '../../src/common/identity.js'
import { startCore, type RunningCore } from '../../src/core/server.js'
import { images, multipart } from './helpers/harness.js'

let dir: string
let config: Config
let core: RunningCore

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kigo-core-server-'))
  config = loadConfig({
    env: { KIGO_DATA_DIR: dir, KIGO_SECRET_KEY: randomBytes(32).toString('base64'), KIGO_ADMIN_TOKEN: randomBytes(24).toString('base64url'), KIGO_CORE_PORT: '0', KIGO_CORE_METRICS_PORT: '0' },
  })
  core = await startCore(config, { logger: false })
})
afterAll(async () => {
  await core?.close()
  rmSync(dir, { recursive: true, force: true })
})

function signed(method: string, path: string, user: string | null): Record<string, string> {
  const host = config.domesticHost
  const identity = user ? { user, userName: user, authMethod: 'wsse' as const, consumer: '', scopes: [] } : null
  return { host, ...signIdentity(identityKey(config.secretKey), { method: method, url: path, host, requestId: randomUUID(), operation: operationNameOf(method, path), bodySha256: '' }, identity) }
}

/** node:http, because fetch may not set Host (which the identity signature covers). */
function send(method: string, path: string, headers: Record<string, string>, body?: Buffer, base = core.url): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}${path}`, { method, headers }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => (text += c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

test('listens on the configured host and a free port; health and the API answer over HTTP', async () => {
  expect(core.url).toMatch(/^http:\/\/127\.0\.0\.1:[0-9]+$/)
  expect(core.url.endsWith(':0')).toBe(false)
  const health = await fetch(`${core.url}/healthz`)
  expect(health.status).toBe(200)
  expect(await health.json()).toEqual({ status: 'ok' })
  const path = '/api/statuses/update.json'
  const { payload, headers } = multipart([['status', 'over the wire'], ['file', { bytes: images.png }]])
  const res = await send('POST', path, { ...signed('POST', path, 'alice'), ...headers }, payload)
  expect(res.status).toBe(400)
  expect(JSON.parse(res.body).error.code).toBe('status_and_file')
})

test('close finishes an upload in flight, then stops accepting', async () => {
  const path = '/api/statuses/update.json'
  const { payload, headers } = multipart([['keyword', 'slow'], ['file', { bytes: Buffer.concat([images.jpg, randomBytes(200_000)]) }]])
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = httpRequest(`${core.url}${path}`, { method: 'POST', headers: { ...signed('POST', path, 'alice'), ...headers, 'content-length': String(payload.length) } }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => (body += c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.on('error', reject)
    // Half the body now, the rest after close() has begun.
    req.write(payload.subarray(0, 1000))
    setTimeout(() => {
      closing = core.close()
      setTimeout(() => req.end(payload.subarray(1000)), 200)
    }, 200)
  })
  let closing: Promise<void> | undefined
  const res = await response
  expect(res.status, res.body).toBe(200)
  expect(JSON.parse(res.body)).toMatchObject({ keyword: 'slow' })
  await closing
  await expect(fetch(`${core.url}/healthz`)).rejects.toThrow()
  // The store was closed too: the data directory opens again, with the entry in it.
  const again = await startCore(config, { logger: false })
  try {
    const id = JSON.parse(res.body).id as string
    const shown = await send('GET', `/api/statuses/show/${id}.json`, { host: config.domesticHost }, undefined, again.url)
    expect(shown.status).toBe(200)
  } finally {
    await again.close()
  }
})
