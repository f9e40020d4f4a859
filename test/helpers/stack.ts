// A whole kigo in one test process: core and gateway on free ports, embedded storage in a
// temp directory (or PostgreSQL/Redis when given), seeded through the operator API.
import { randomBytes } from 'node:crypto'
import { rmSync } from 'node:fs'
import { loadConfig, type Config } from '../../src/common/config.js'
import { startCore } from '../../src/core/server.js'
import { startGateway, type RunningGateway } from '../../src/gateway/server.js'
import { embeddedDataDir } from './embedded-template.js'
import { freePort } from './ports.js'

export { freePort }

export interface StackOptions {
  databaseUrl?: string
  redisUrl?: string
  /** Extra config (deep-merged last). */
  overrides?: Record<string, unknown>
  /** Share these secrets (several gateways of one deployment). */
  secretKey?: string
  adminToken?: string
  dataDir?: string
  now?: () => number
  /** Start no core (the gateway's core URL points at `coreUrl`). */
  coreUrl?: string
  /** How often the gateway looks for a rotated OpenID Connect key, ms (30 s otherwise). */
  oidcKeyPollMs?: number
}

export interface Stack {
  config: Config
  /** Domestic deployment base URL: http://localhost:PORT */
  url: string
  /** Global deployment base URL: http://127.0.0.1:PORT */
  globalUrl: string
  adminUrl: string
  coreUrl: string
  /** The core's own metrics listener (none when no core was started). */
  coreMetricsUrl?: string
  gateway: RunningGateway
  admin<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }>
  /** A user with a generated API password. */
  addUser(id: string, name?: string): Promise<{ id: string; name: string; password: string; api_password: string }>
  /** An application and an access token for `user`. */
  addOAuthClient(user: string, appScopes: string[], tokenScopes?: string[]): Promise<{ consumerKey: string; consumerSecret: string; token: string; tokenSecret: string }>
  close(): Promise<void>
}

export interface StackEnv {
  env: Record<string, string>
  gatewayPort: number
  corePort: number
  adminPort: number
}

/**
 * The environment of one core and one gateway on free ports, with fresh secrets and the
 * data in `dataDir`, for tests that start (or stand in for) the servers themselves. An
 * entry of `extra` replaces the default of that name; an undefined one keeps it.
 */
export async function stackEnv(dataDir: string, extra: Record<string, string | undefined> = {}): Promise<StackEnv> {
  const [gatewayPort, corePort, adminPort] = [await freePort(), await freePort(), await freePort()]
  const env: Record<string, string> = {
    KIGO_DATA_DIR: dataDir,
    KIGO_SECRET_KEY: randomBytes(32).toString('base64'),
    KIGO_ADMIN_TOKEN: randomBytes(24).toString('base64url'),
    KIGO_GATEWAY_PORT: String(gatewayPort),
    KIGO_CORE_PORT: String(corePort),
    KIGO_CORE_METRICS_PORT: '0',
    KIGO_ADMIN_PORT: String(adminPort),
    KIGO_CORE_URL: `http://127.0.0.1:${corePort}`,
    LOG_LEVEL: 'silent',
  }
  for (const [name, value] of Object.entries(extra)) if (value !== undefined) env[name] = value
  return { env, gatewayPort, corePort, adminPort }
}

export type OperatorClient = Pick<Stack, 'admin' | 'addUser' | 'addOAuthClient'>

/** The operator API at `adminUrl` through `fetchFn` (the network's, or test/helpers/gateway-app.ts's): seeding users and applications. */
export function operatorClient(fetchFn: typeof fetch, adminUrl: string, adminToken: string): OperatorClient {
  const admin = async <T>(method: string, path: string, body?: unknown) => {
    const res = await fetchFn(adminUrl + path, {
      method,
      headers: { authorization: `Bearer ${adminToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    return { status: res.status, body: (await res.json()) as T }
  }
  return {
    admin,
    async addUser(id, name) {
      const r = await admin<{ id: string; name: string; password: string; api_password: string }>('POST', '/admin/users', { id, ...(name ? { name } : {}) })
      if (r.status !== 201) throw new Error(`addUser ${id}: ${r.status} ${JSON.stringify(r.body)}`)
      return r.body
    },
    async addOAuthClient(user, appScopes, tokenScopes = appScopes) {
      const a = await admin<{ consumer_key: string; consumer_secret: string }>('POST', '/admin/apps', { name: `app for ${user}`, owner: user, scopes: appScopes })
      if (a.status !== 201) throw new Error(`addOAuthClient app: ${a.status} ${JSON.stringify(a.body)}`)
      const t = await admin<{ token: string; token_secret: string }>('POST', '/admin/tokens', { consumer: a.body.consumer_key, user, scopes: tokenScopes })
      if (t.status !== 201) throw new Error(`addOAuthClient token: ${t.status} ${JSON.stringify(t.body)}`)
      return { consumerKey: a.body.consumer_key, consumerSecret: a.body.consumer_secret, token: t.body.token, tokenSecret: t.body.token_secret }
    },
  }
}

export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const dataDir = options.dataDir ?? embeddedDataDir('stack')
  const ownsDir = options.dataDir === undefined
  const { env, gatewayPort: gwPort, adminPort } = await stackEnv(dataDir, {
    KIGO_SECRET_KEY: options.secretKey,
    KIGO_ADMIN_TOKEN: options.adminToken,
    KIGO_CORE_URL: options.coreUrl,
    DATABASE_URL: options.databaseUrl || undefined,
    REDIS_URL: options.redisUrl || undefined,
  })
  const config = loadConfig({ env, overrides: { gateway: { host: '127.0.0.1' }, ...options.overrides } })
  const core = options.coreUrl ? null : await startCore(config, { logger: false })
  const gateway = await startGateway(config, { logger: false, ...(options.now ? { now: options.now } : {}), ...(options.oidcKeyPollMs ? { oidcKeyPollMs: options.oidcKeyPollMs } : {}) })
  const adminUrl = `http://127.0.0.1:${adminPort}`

  const operatorApi = operatorClient(fetch, adminUrl, config.adminToken)

  return {
    config,
    url: `http://localhost:${gwPort}`,
    globalUrl: `http://127.0.0.1:${gwPort}`,
    adminUrl,
    coreUrl: config.gateway.coreUrl,
    ...(core ? { coreMetricsUrl: core.metricsUrl } : {}),
    gateway,
    ...operatorApi,
    async close() {
      await gateway.close()
      await core?.close()
      if (ownsDir) rmSync(dataDir, { recursive: true, force: true })
    },
  }
}
