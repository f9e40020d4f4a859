// A core app over a real store (by default the embedded database in a temp directory; the
// route tests run once per storage backend of helpers/backends.ts, each harness on a fresh
// database), and requests signed the way the gateway signs them (docs/gateway.md#forwarding).
import { gifHeader, jpegHeader, pngHeader, webpHeader } from '../../helpers/image-headers.js'
import { createHash, randomBytes, randomUUID, type KeyObject } from 'node:crypto'
import { operationNameOf } from '../../../src/common/route-table.js'
import { rmSync } from 'node:fs'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { XMLParser } from 'fast-xml-parser'
import { loadConfig, type Config } from '../../../src/common/config.js'
import { identityKey, signIdentity, type Identity } from '../../../src/common/identity.js'
import { buildCoreApp } from '../../../src/core/app.js'
import { openContentStore } from '../../../src/core/store/index.js'
import type { ContentStore } from '../../../src/core/store/types.js'
import { storageBackends, type StorageBackend } from '../../helpers/backends.js'
import { embeddedDataDir } from '../../helpers/embedded-template.js'

export interface Harness {
  app: FastifyInstance
  config: Config
  store: ContentStore
  key: KeyObject
  domestic: string
  global: string
  call(req: CallOptions): Promise<LightMyRequestResponse>
  close(): Promise<void>
}

export interface CallOptions {
  method?: string
  url: string
  host?: string
  /** The authenticated requester (signed), by user ID or as a whole identity. */
  as?: string | Partial<Identity> & { user: string }
  headers?: Record<string, string>
  payload?: string | Buffer
  /** Signing time (ms), to make stale signatures. */
  signedAt?: number
  /** Send no signature at all, even for `as`. */
  unsigned?: boolean
}

/** The backends the route tests run on: embedded and PostgreSQL. */
export const routeBackends = await storageBackends('core-test')

/**
 * Starts a core with `overrides` over a store set up by `storage` (a backend's setup,
 * called once for this harness; default the embedded database), cleaned up by close().
 */
export async function startHarness(overrides: Record<string, unknown> = {}, storage?: () => Promise<StorageBackend>): Promise<Harness> {
  const dir = embeddedDataDir('core-test')
  const backend = storage ? await storage() : undefined
  const config = loadConfig({
    env: {
      KIGO_DATA_DIR: dir,
      KIGO_SECRET_KEY: randomBytes(32).toString('base64'),
      KIGO_ADMIN_TOKEN: randomBytes(24).toString('base64url'),
      KIGO_DOMESTIC_HOST: 'kigo.example:8080',
      KIGO_GLOBAL_HOST: 'global.kigo.example',
    },
    overrides,
  })
  const store = await openContentStore(backend ?? { dataDir: dir })
  const app = buildCoreApp({ config, store })
  await app.ready()
  const key = identityKey(config.secretKey)
  return {
    app,
    config,
    store,
    key,
    domestic: config.domesticHost,
    global: config.globalHost,
    call: async (req) => {
      const method = req.method ?? 'GET'
      const host = req.host ?? config.domesticHost
      const headers: Record<string, string> = { host, ...req.headers }
      const identity: Identity | null = req.as === undefined
        ? null
        : typeof req.as === 'string'
          ? { user: req.as, userName: `${req.as} name`, authMethod: 'oauth', consumer: 'ck', scopes: ['write_public', 'write_private'] }
          : { userName: `${req.as.user} name`, authMethod: 'oauth', consumer: 'ck', scopes: ['write_public', 'write_private'], ...req.as }
      if (!req.unsigned) {
        // The gateway reads a form whole and signs its digest; the core refuses a signed form without one.
        const formBody = method !== 'GET' && method !== 'HEAD' && req.payload !== undefined && /^\s*application\/x-www-form-urlencoded/i.test(headers['content-type'] ?? '')
        const bodySha256 = formBody ? createHash('sha256').update(req.payload as string | Buffer).digest('base64url') : ''
        Object.assign(headers, signIdentity(key, { method: method, url: req.url, host, requestId: randomUUID(), operation: operationNameOf(method, req.url), bodySha256 }, identity, req.signedAt))
      } else if (identity) {
        headers['x-kigo-user'] = identity.user
      }
      return app.inject({ method: method as 'GET', url: req.url, headers, ...(req.payload !== undefined ? { payload: req.payload } : {}) })
    },
    close: async () => {
      try {
        await app.close()
        await store.close()
      } finally {
        // Also after a test closed the store itself: the database must not outlive the run.
        await backend?.cleanup()
        rmSync(dir, { recursive: true, force: true })
      }
    },
  }
}

export const form = (params: Record<string, string>) => ({
  payload: new URLSearchParams(params).toString(),
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
})

export type Part = [name: string, value: string | { bytes: Buffer; filename?: string; type?: string }]

export function multipart(parts: Part[]): { payload: Buffer; headers: Record<string, string> } {
  const boundary = `----kigo${randomBytes(8).toString('hex')}`
  const chunks: Buffer[] = []
  for (const [name, value] of parts) {
    chunks.push(Buffer.from(`--${boundary}\r\n`))
    if (typeof value === 'string') {
      chunks.push(Buffer.from(`Content-Disposition: form-data; name="${name}"\r\n\r\n`), Buffer.from(value, 'utf8'))
    } else {
      chunks.push(
        Buffer.from(`Content-Disposition: form-data; name="${name}"; filename="${value.filename ?? 'upload.bin'}"\r\nContent-Type: ${value.type ?? 'application/octet-stream'}\r\n\r\n`),
        value.bytes,
      )
    }
    chunks.push(Buffer.from('\r\n'))
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`))
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } }
}

/** XML as a plain object, every text kept as a string (`0` stays "0", empty elements ""). */
export function parseXml(text: string): Record<string, unknown> {
  return new XMLParser({ parseTagValue: false, ignoreDeclaration: false, ignoreAttributes: false }).parse(text) as Record<string, unknown>
}

/** Minimal images of each type: a header that decodes (1×1 pixel), then random bytes. */
export const images = {
  png: Buffer.concat([pngHeader(1, 1), randomBytes(64)]),
  jpg: Buffer.concat([jpegHeader(1, 1), randomBytes(64)]),
  gif: Buffer.concat([gifHeader(1, 1), randomBytes(64)]),
  webp: Buffer.concat([webpHeader('VP8 ', 1, 1), randomBytes(52)]),
}
