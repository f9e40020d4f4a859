// The gateway's two apps in the test's process, built by the gateway's own composition
// (buildGateway in src/gateway/server.ts) and answered through fastify's `inject`: no
// listening socket, no core, on a copy of a database with the gateway's schema already
// migrated (test/helpers/embedded-template.ts). For tests of what one gateway answers by
// itself: its pages, the operator API and dashboard, its plugins. A test about the core's
// answers, sockets and connections, several gateways or processes starts a stack
// (test/helpers/stack.ts) instead (docs/development.md#running-the-tests).
import { rmSync } from 'node:fs'
import type { FastifyInstance } from 'fastify'
import { randomBytes } from 'node:crypto'
import { loadConfig, type Config } from '../../src/common/config.js'
import { buildGateway, type GatewayStartOptions } from '../../src/gateway/server.js'
import { gatewayDataDir } from './embedded-template.js'
import { operatorClient, type OperatorClient } from './stack.js'

export interface GatewayAppOptions {
  /** Extra config (deep-merged last). */
  overrides?: Record<string, unknown>
  now?: () => number
  provider?: GatewayStartOptions['provider']
}

export interface GatewayApp extends OperatorClient {
  config: Config
  /** The public app, not listening. */
  app: FastifyInstance
  /** The operator app, not listening. */
  operator: FastifyInstance
  /** Domestic deployment base URL: http://localhost:PORT (PORT is configured, never listened on). */
  url: string
  /** Global deployment base URL: http://127.0.0.1:PORT */
  globalUrl: string
  /** The operator app's base URL: http://127.0.0.1:ADMIN_PORT */
  adminUrl: string
  /**
   * `fetch` answered by the operator app for `adminUrl`, by the public app for any other
   * URL: the request as fetch would send it (its headers, its encoded body), the answer as
   * a Response; redirects followed unless `redirect` says otherwise, within this gateway only.
   */
  fetch: typeof fetch
  close(): Promise<void>
}

/** Fixed ports: the apps never listen, and the core's URL refuses at once (no core). */
const gatewayPort = 18_080
const adminPort = 18_081
const noCore = 'http://127.0.0.1:9'

/** What fetch (undici) sends when the caller does not say. */
const fetchDefaults: Record<string, string> = { accept: '*/*', 'accept-language': '*', 'sec-fetch-mode': 'cors', 'user-agent': 'node' }

export async function gatewayApp(options: GatewayAppOptions = {}): Promise<GatewayApp> {
  const dataDir = gatewayDataDir('gateway-app')
  const env = {
    KIGO_DATA_DIR: dataDir,
    KIGO_SECRET_KEY: randomBytes(32).toString('base64'),
    KIGO_ADMIN_TOKEN: randomBytes(24).toString('base64url'),
    KIGO_GATEWAY_PORT: String(gatewayPort),
    KIGO_ADMIN_PORT: String(adminPort),
    KIGO_CORE_URL: noCore,
    LOG_LEVEL: 'silent',
  }
  const config = loadConfig({ env, overrides: { gateway: { host: '127.0.0.1' }, ...options.overrides } })
  let gateway
  try {
    gateway = await buildGateway(config, { logger: false, ...(options.now ? { now: options.now } : {}), ...(options.provider ? { provider: options.provider } : {}) })
  } catch (err) {
    rmSync(dataDir, { recursive: true, force: true })
    throw err
  }
  const { app, operator } = gateway
  const adminUrl = `http://127.0.0.1:${adminPort}`
  const adminOrigin = new URL(adminUrl).origin

  async function once(url: URL, init: RequestInit | undefined): Promise<Response> {
    const request = new Request(url, init)
    const headers: Record<string, string> = { ...fetchDefaults }
    request.headers.forEach((value, name) => (headers[name] = value))
    const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined
    const target = url.origin === adminOrigin ? operator : app
    const res = await target.inject({ method: request.method as 'GET', url: url.href, headers, ...(body ? { payload: body } : {}) })
    const answer = new Headers()
    for (const [name, value] of Object.entries(res.headers)) {
      for (const v of Array.isArray(value) ? value : [value]) if (v !== undefined) answer.append(name, String(v))
    }
    const empty = [204, 205, 304].includes(res.statusCode) || request.method === 'HEAD'
    const response = new Response(empty ? null : new Uint8Array(res.rawPayload), { status: res.statusCode, statusText: res.statusMessage, headers: answer })
    Object.defineProperty(response, 'url', { value: url.href })
    return response
  }

  async function fetchThrough(input: string | URL | Request, init?: RequestInit): Promise<Response> {
    let url = new URL(input instanceof Request ? input.url : input)
    let current = input instanceof Request
      ? { method: input.method, headers: input.headers, redirect: input.redirect, body: input.body ? await input.arrayBuffer() : null, ...init }
      : init
    for (let hops = 0; ; hops++) {
      const res = await once(url, current)
      const location = res.headers.get('location')
      if (![301, 302, 303, 307, 308].includes(res.status) || location === null || current?.redirect === 'manual') return res
      if (current?.redirect === 'error') throw new TypeError(`redirect to ${location}`)
      if (hops >= 20) throw new TypeError('too many redirects')
      const next = new URL(location, url)
      if (![new URL(`${config.publicScheme}://${config.domesticHost}`).origin, new URL(`${config.publicScheme}://${config.globalHost}`).origin, adminOrigin].includes(next.origin)) {
        throw new Error(`a redirect off this gateway (${next.href}): pass redirect: 'manual'`)
      }
      const method = (current?.method ?? 'GET').toUpperCase()
      // As fetch: a 303, or a 301/302 after a POST, becomes a GET without the body.
      if (res.status === 303 ? method !== 'HEAD' : ([301, 302].includes(res.status) && method === 'POST')) {
        const headers = new Headers(current?.headers)
        for (const name of ['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location']) headers.delete(name)
        current = { ...current, method: 'GET', body: null, headers }
      }
      url = next
    }
  }

  return {
    config,
    app,
    operator,
    url: `${config.publicScheme}://${config.domesticHost}`,
    globalUrl: `${config.publicScheme}://${config.globalHost}`,
    adminUrl,
    fetch: fetchThrough,
    ...operatorClient(fetchThrough, adminUrl, config.adminToken),
    async close() {
      await gateway.close()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}
