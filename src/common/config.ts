// Configuration: config/default.json, then an optional file named by KIGO_CONFIG,
// then the environment variables of docs/operations.md#configuration. Validated once at start-up; a bad value
// is reported as one line naming the setting (ConfigError) and the process exits.
import { readFileSync, existsSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Type, Value, type Static } from './typebox.js'
import { operationNames } from './route-table.js'

const Port = Type.Integer({ minimum: 0, maximum: 65535 })
const HostPort = Type.String({ pattern: '^[A-Za-z0-9.\\-]+(:[0-9]{1,5})?$|^\\[[0-9A-Fa-f:.]+\\](:[0-9]{1,5})?$' })
const Fallback = Type.Union([Type.Literal('fail-closed'), Type.Literal('memory')])

export const ConfigSchema = Type.Object({
  dataDir: Type.String({ minLength: 1 }),
  databaseUrl: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  redisUrl: Type.Optional(Type.String({ pattern: '^rediss?://' })),
  logLevel: Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l))),
  publicScheme: Type.Union([Type.Literal('http'), Type.Literal('https')]),
  trustedProxies: Type.Array(Type.String({ minLength: 1 })),
  domesticHost: HostPort,
  globalHost: HostPort,
  /**
   * Further host names each deployment answers to (a second gateway reached on its own
   * port, a staging name); links and pages keep using domesticHost and globalHost.
   */
  domesticHostAliases: Type.Array(HostPort),
  globalHostAliases: Type.Array(HostPort),
  secretKey: Type.String({ minLength: 1 }),
  adminToken: Type.String({ minLength: 16 }),
  /**
   * Bearer token the /metrics endpoints (operator port, core metrics port) require when
   * set; unset, they are open (docs/operations.md#metrics-token).
   */
  metricsToken: Type.Optional(Type.String({ minLength: 16 })),
  gateway: Type.Object({
    host: Type.String({ minLength: 1 }),
    port: Port,
    adminHost: Type.String({ minLength: 1 }),
    adminPort: Port,
    /**
     * Host names the operator port answers besides 127.0.0.1, localhost and [::1]
     * (`name` on any port, `name:port` on that port): the names scrapers and operators
     * reach it by (docs/operations.md#operator-port-host-names).
     */
    adminHostNames: Type.Array(HostPort),
    coreUrl: Type.String({ pattern: '^https?://' }),
    coreTimeoutMs: Type.Integer({ minimum: 1 }),
    stripCredentials: Type.Boolean(),
    /**
     * Largest application/x-www-form-urlencoded body the gateway reads (before verifying
     * the credential: a form's parameters are signed, RFC 5849 §3.4.1.3.1); larger ones
     * get 413. Every other body is streamed to the core, never read by the gateway
     * (docs/security.md#bodies-and-uploads).
     */
    formBodyLimitBytes: Type.Integer({ minimum: 1024 }),
    /**
     * Form bytes all requests together may hold in the gateway's memory at once; past it
     * a form is refused with 503 and Retry-After before it is read.
     */
    formBytesInFlight: Type.Integer({ minimum: 1024 }),
    /** The same for the requests of one client (its address; IPv6 its /64): past it 429, others unaffected. */
    formBytesInFlightPerClient: Type.Integer({ minimum: 1024 }),
    /** Client-side deadlines (both listeners) and the connection caps (like nginx's defaults). */
    http: Type.Object({
      /** The whole request head must arrive within this. */
      headersTimeoutMs: Type.Integer({ minimum: 1 }),
      /** The whole request, body included, must arrive within this. */
      requestTimeoutMs: Type.Integer({ minimum: 1 }),
      /** An idle connection (no bytes either way) is closed after this. */
      idleTimeoutMs: Type.Integer({ minimum: 1 }),
      /** A kept-alive connection waiting for its next request is closed after this. */
      keepAliveTimeoutMs: Type.Integer({ minimum: 1 }),
      /** Open connections at most on the public port; past it new ones are closed at once. */
      maxConnections: Type.Integer({ minimum: 1 }),
      /**
       * The same on the operator port: a flood there is refused before it can take the
       * descriptors the public port needs. Operators, scrapers and the CLI need few.
       */
      operatorMaxConnections: Type.Integer({ minimum: 1 }),
    }),
  }),
  core: Type.Object({
    host: Type.String({ minLength: 1 }),
    port: Port,
    /** The core's own /metrics (docs/gateway.md#metrics for the core), on loopback by default. */
    metricsHost: Type.String({ minLength: 1 }),
    metricsPort: Port,
    /**
     * Host names the core's metrics port answers besides 127.0.0.1, localhost and [::1]:
     * the names a scraper reaches it by (docs/operations.md#operator-port-host-names).
     */
    metricsHostNames: Type.Array(HostPort),
    identityMaxAgeSeconds: Type.Integer({ minimum: 1 }),
    limits: Type.Object({
      bodyChars: Type.Integer({ minimum: 1 }),
      keywordChars: Type.Integer({ minimum: 1 }),
      sourceChars: Type.Integer({ minimum: 1 }),
      fileBytes: Type.Integer({ minimum: 1 }),
      files: Type.Integer({ minimum: 1 }),
      /** An image whose header declares a side longer than this (pixels) is not accepted (415 not_an_image). */
      imageMaxSide: Type.Integer({ minimum: 1, maximum: 1_000_000 }),
    }),
    /**
     * Multipart uploads (docs/operations-memory.md): the bytes every upload in progress
     * holds in memory together, and those of one user's uploads, are bounded; past either
     * bound an upload is refused (503, or 429 for one user's share, with Retry-After). An
     * upload whose body has not arrived within timeoutMs is cut with 408.
     */
    uploads: Type.Object({
      bytesInFlight: Type.Integer({ minimum: 1024 }),
      bytesInFlightPerUser: Type.Integer({ minimum: 1024 }),
      timeoutMs: Type.Integer({ minimum: 100 }),
    }),
    // docs/api.md#timelines sort=hot and docs/api.md#keywords keywords/hot look back this far.
    hotEntriesHours: Type.Integer({ minimum: 1 }),
    hotKeywordsHours: Type.Integer({ minimum: 1 }),
    // sort=hot's order of a source and keywords/hot are the same for every caller: ranked again
    // at most this often (0: on every call).
    hotRefreshSeconds: Type.Integer({ minimum: 0 }),
  }),
  /**
   * Deadlines of every call to PostgreSQL and Redis (docs/operations.md#deadlines): a stopped or
   * partitioned server is waited for this long at most, then the request gets 503.
   */
  dependencies: Type.Object({
    /** A new connection (PostgreSQL, Redis), and a free connection from the pool. */
    connectTimeoutMs: Type.Integer({ minimum: 50, maximum: 60000 }),
    /** One PostgreSQL statement. */
    statementTimeoutMs: Type.Integer({ minimum: 50, maximum: 600000 }),
    /** One Redis command (nonce claims, throttle counts). */
    redisCommandTimeoutMs: Type.Integer({ minimum: 50, maximum: 60000 }),
    /** All of a request's dependency work before it is forwarded or answered (authentication at the gateway, the store calls at the core). */
    requestDeadlineMs: Type.Integer({ minimum: 50, maximum: 600000 }),
  }),
  // Migration controls and usage report (docs/gateway.md#the-migration-policy, docs/gateway.md#the-usage-report).
  migration: Type.Object({
    guideUrl: Type.String({ pattern: '^https?://[^\\s<>"]+$' }),
    policyRefreshMs: Type.Integer({ minimum: 100, maximum: 15000 }),
    usageFlushMs: Type.Integer({ minimum: 100, maximum: 15000 }),
    /** Report rows last seen longer ago than this are deleted. */
    usageRetentionDays: Type.Integer({ minimum: 1, maximum: 3650 }),
    /** Distinct clients kept per (method, user); the rest are added to one "(other clients)" row. */
    usageMaxClientsPerUser: Type.Integer({ minimum: 1, maximum: 1000 }),
  }),
  /** OAuth provider and account area lifetimes (docs/gateway.md#the-oauth-provider-and-the-account-pages). */
  provider: Type.Object({
    requestTokenTtlSeconds: Type.Integer({ minimum: 1 }),
    sessionTtlSeconds: Type.Integer({ minimum: 60 }),
  }),
  /**
   * Mail for "forgot your password?" (docs/gateway.md#the-oauth-provider-and-the-account-pages):
   * without an SMTP server the sign-in page sends users to the operator instead.
   */
  mail: Type.Object({
    /** smtp://user:pass@host:port or smtps://…; null: no mail is sent. */
    smtpUrl: Type.Union([Type.String({ pattern: '^smtps?://' }), Type.Null()]),
    /** The From of the reset mail. */
    from: Type.String({ minLength: 3 }),
    /** How long a reset link works (once). */
    resetTtlSeconds: Type.Integer({ minimum: 60, maximum: 86400 }),
    /** The outbox's sender (docs/operations.md#mail): a pass every this long (0: only when mail is enqueued and on demand). */
    sendIntervalSeconds: Type.Integer({ minimum: 0, maximum: 86400 }),
    /** How long one send may take; a claimed message's lease is four times this. */
    sendTimeoutSeconds: Type.Integer({ minimum: 1, maximum: 600 }),
    /** The delay before retrying a failed send, doubled after each further failure up to retryMaxSeconds. */
    retryBaseSeconds: Type.Integer({ minimum: 1, maximum: 86400 }),
    retryMaxSeconds: Type.Integer({ minimum: 1, maximum: 604800 }),
    /** How long the link that confirms a user's new contact e-mail works (once). */
    verifyTtlSeconds: Type.Integer({ minimum: 300, maximum: 604800 }),
  }),
  /** Migration notices (docs/gateway.md#migration-notices): who is told, how often the sender runs. */
  notices: Type.Object({
    /** false turns the whole feature off: no notices decided, mailed or shown. */
    enabled: Type.Boolean(),
    /** How often each gateway runs a pass of the sender; 0: never on its own (kigo notices run still does). */
    intervalSeconds: Type.Integer({ minimum: 0, maximum: 86400 }),
    /** Users with legacy requests seen this many days back are told (and counted by the plan). */
    lookbackDays: Type.Integer({ minimum: 1, maximum: 400 }),
    /** A directory of templates replacing the notices' wording (subject.txt, text.txt, html.html); null: the built-in wording. */
    templateDir: Type.Union([Type.String({ minLength: 1 }), Type.Null()]),
  }),
  /** The legacy login API (docs/login-api.md): how long a sign-in's cert may be exchanged. */
  loginApi: Type.Object({
    certTtlSeconds: Type.Integer({ minimum: 1, maximum: 86400 }),
  }),
  auth: Type.Object({
    timestampWindowSeconds: Type.Integer({ minimum: 1 }),
    wsseWindowSeconds: Type.Integer({ minimum: 1 }),
    hmacSha256: Type.Boolean(),
    plaintext: Type.Boolean(),
    /**
     * Send the whole signature base string with a signature_invalid (header
     * X-OAuth-Signature-Base-String). Unset: on in embedded mode, off in production.
     */
    signatureBaseStringHeader: Type.Optional(Type.Boolean()),
    realm: Type.String({ minLength: 1 }),
    /** Per-route override of the accepted methods (docs/gateway.md#which-credentials-each-operation-accepts), keyed by route name. */
    routeMethods: Type.Record(Type.String(), Type.Array(Type.Union([Type.Literal('oauth'), Type.Literal('basic'), Type.Literal('wsse')]))),
    replayFallback: Type.Object({ wsse: Fallback, oauth: Fallback }),
    /** Unexpired nonces one client (OAuth token, WSSE user) may hold in an in-process replay cache. */
    replayPerClientMax: Type.Integer({ minimum: 1 }),
    /**
     * Clients that may each hold replayPerClientMax nonces at once in an in-process replay
     * cache: its bound is the product (docs/operations.md#replay-cache-bounds).
     */
    replayClients: Type.Integer({ minimum: 1, maximum: 100000 }),
    /** The rules of src/gateway/throttle/attempts.ts. */
    throttle: Type.Object({
      /** Consecutive failures of one user from one address… */
      maxFailures: Type.Integer({ minimum: 1 }),
      /** …within this window. */
      windowSeconds: Type.Integer({ minimum: 1 }),
      /** Failures from one address (IPv6: one /64), whatever user they name. */
      addressMaxFailures: Type.Integer({ minimum: 1 }),
      addressWindowSeconds: Type.Integer({ minimum: 1 }),
      /** Failures naming one user, from any address. */
      userMaxFailures: Type.Integer({ minimum: 1 }),
      userWindowSeconds: Type.Integer({ minimum: 1 }),
      /** How long a success marks a user's address as theirs (exempt from the two rules above). */
      knownAddressDays: Type.Integer({ minimum: 1, maximum: 365 }),
    }),
  }),
})

export type Config = Static<typeof ConfigSchema>

export class ConfigError extends Error {
  override name = 'ConfigError'
}

type Env = Record<string, string | undefined>
type Json = Record<string, unknown>

export const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', ...(import.meta.url.includes('/dist/') ? ['..'] : []))

function readJson(path: string): Json {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Json
  } catch (err) {
    throw new ConfigError(`config file ${path}: ${(err as Error).message}`)
  }
}

function merge(base: Json, over: Json): Json {
  const out: Json = { ...base }
  for (const [k, v] of Object.entries(over)) {
    const b = out[k]
    out[k] = v && typeof v === 'object' && !Array.isArray(v) && b && typeof b === 'object' && !Array.isArray(b)
      ? merge(b as Json, v as Json)
      : v
  }
  return out
}

function intFrom(name: string, value: string): number {
  if (!/^[0-9]+$/.test(value)) throw new ConfigError(`${name}: expected a whole number, got ${JSON.stringify(value)}`)
  return Number(value)
}

/**
 * The settings the environment can give (docs/operations.md#configuration): each variable, the setting it sets
 * (a JSON pointer into the configuration) and how its text is read. The one table both
 * the loader and the error messages (which name the variable) use.
 */
const envSettings: ReadonlyArray<{ name: string; path: string; kind: 'text' | 'port' | 'list' }> = [
  { name: 'KIGO_DATA_DIR', path: '/dataDir', kind: 'text' },
  { name: 'DATABASE_URL', path: '/databaseUrl', kind: 'text' },
  { name: 'REDIS_URL', path: '/redisUrl', kind: 'text' },
  { name: 'KIGO_CORE_URL', path: '/gateway/coreUrl', kind: 'text' },
  { name: 'KIGO_DOMESTIC_HOST', path: '/domesticHost', kind: 'text' },
  { name: 'KIGO_GLOBAL_HOST', path: '/globalHost', kind: 'text' },
  { name: 'KIGO_PUBLIC_SCHEME', path: '/publicScheme', kind: 'text' },
  { name: 'KIGO_SECRET_KEY', path: '/secretKey', kind: 'text' },
  { name: 'KIGO_ADMIN_TOKEN', path: '/adminToken', kind: 'text' },
  { name: 'KIGO_METRICS_TOKEN', path: '/metricsToken', kind: 'text' },
  { name: 'LOG_LEVEL', path: '/logLevel', kind: 'text' },
  { name: 'KIGO_GATEWAY_BIND', path: '/gateway/host', kind: 'text' },
  { name: 'KIGO_ADMIN_BIND', path: '/gateway/adminHost', kind: 'text' },
  { name: 'KIGO_CORE_BIND', path: '/core/host', kind: 'text' },
  { name: 'KIGO_CORE_METRICS_BIND', path: '/core/metricsHost', kind: 'text' },
  { name: 'KIGO_MIGRATION_GUIDE_URL', path: '/migration/guideUrl', kind: 'text' },
  { name: 'KIGO_SMTP_URL', path: '/mail/smtpUrl', kind: 'text' },
  { name: 'KIGO_MAIL_FROM', path: '/mail/from', kind: 'text' },
  { name: 'KIGO_GATEWAY_PORT', path: '/gateway/port', kind: 'port' },
  { name: 'KIGO_CORE_PORT', path: '/core/port', kind: 'port' },
  { name: 'KIGO_CORE_METRICS_PORT', path: '/core/metricsPort', kind: 'port' },
  { name: 'KIGO_ADMIN_PORT', path: '/gateway/adminPort', kind: 'port' },
  { name: 'KIGO_DOMESTIC_HOST_ALIASES', path: '/domesticHostAliases', kind: 'list' },
  { name: 'KIGO_GLOBAL_HOST_ALIASES', path: '/globalHostAliases', kind: 'list' },
  { name: 'KIGO_TRUSTED_PROXIES', path: '/trustedProxies', kind: 'list' },
  { name: 'KIGO_ADMIN_HOST_NAMES', path: '/gateway/adminHostNames', kind: 'list' },
  { name: 'KIGO_CORE_METRICS_HOST_NAMES', path: '/core/metricsHostNames', kind: 'list' },
]

/** Setting (JSON pointer) → the environment variable that sets it. */
export const envNames: Record<string, string> = Object.fromEntries(envSettings.map((e) => [e.path, e.name]))

/** Settings that come from the environment, as a partial config. */
function fromEnv(env: Env): Json {
  const out: Json = {}
  for (const { name, path, kind } of envSettings) {
    const v = env[name]
    if (v === undefined || v === '') continue
    const keys = path.slice(1).split('/')
    let node = out
    for (const key of keys.slice(0, -1)) node = (node[key] ??= {}) as Json
    node[keys[keys.length - 1]!] = kind === 'port' ? intFrom(name, v) : kind === 'list' ? v.split(',').map((x) => x.trim()).filter(Boolean) : v
  }
  return out
}

export interface LoadOptions {
  env?: Env
  /** Extra settings applied last (tests). */
  overrides?: Json
  /** Supplies secrets that are neither configured nor in the environment (the data directory's generated ones). */
  secrets?: (dataDir: string) => { secretKey: string; adminToken: string }
}

/** Loads and validates the configuration; throws ConfigError with one line naming the setting. */
export function loadConfig(options: LoadOptions = {}): Config {
  const env = options.env ?? process.env
  let raw = readJson(resolve(projectRoot, 'config', 'default.json'))
  const file = env.KIGO_CONFIG
  if (file) {
    if (!existsSync(file)) throw new ConfigError(`KIGO_CONFIG: no such file ${file}`)
    raw = merge(raw, readJson(file))
  }
  raw = merge(raw, fromEnv(env))
  if (options.overrides) raw = merge(raw, options.overrides)
  const gw = raw.gateway as Json | undefined
  const gwPort = gw && typeof gw.port === 'number' ? gw.port : 8080
  raw.domesticHost ??= `localhost:${gwPort}`
  raw.globalHost ??= `127.0.0.1:${gwPort}`
  raw.domesticHostAliases ??= []
  raw.globalHostAliases ??= []
  // The core URL follows the core's port when it is not given (embedded mode with
  // KIGO_CORE_PORT alone must reach its own core, not port 8081).
  const core = raw.core as Json | undefined
  const corePort = core && typeof core.port === 'number' ? core.port : 8081
  const coreHost = core && typeof core.host === 'string' && !['0.0.0.0', '::', ''].includes(core.host) ? core.host : '127.0.0.1'
  if (gw && gw.coreUrl === undefined) gw.coreUrl = `http://${coreHost.includes(':') ? `[${coreHost}]` : coreHost}:${corePort}`
  // The migration guide defaults to the page the gateway serves itself (/migration).
  const migration = (raw.migration ??= {}) as Json
  migration.guideUrl ??= `${String(raw.publicScheme)}://${String(raw.domesticHost)}/migration`
  const tokenSource =
    options.overrides && 'adminToken' in options.overrides ? 'the configuration given to the process'
      : env.KIGO_ADMIN_TOKEN ? 'the KIGO_ADMIN_TOKEN environment variable'
        : raw.adminToken !== undefined ? `the file named by KIGO_CONFIG (${String(file)})`
          : `the file ${resolve(String(raw.dataDir), 'admin-token')}`
  if ((raw.secretKey === undefined || raw.adminToken === undefined) && options.secrets) {
    const generated = options.secrets(String(raw.dataDir))
    raw.secretKey ??= generated.secretKey
    raw.adminToken ??= generated.adminToken
  }
  const first = Value.Errors(ConfigSchema, raw)[0]
  if (first) {
    const where = first.instancePath || (first.params && 'requiredProperties' in first.params ? `/${first.params.requiredProperties[0]}` : '/')
    const name = envNames[where] ?? `setting ${where.slice(1).replaceAll('/', '.')}`
    throw new ConfigError(`${name}: ${first.message}`)
  }
  const config = raw as unknown as Config
  // A key that names no operation (a typo) would otherwise narrow nothing, silently.
  const unknownRoute = Object.keys(config.auth.routeMethods).find((name) => !operationNames.includes(name))
  if (unknownRoute !== undefined) {
    throw new ConfigError(`setting auth.routeMethods: ${JSON.stringify(unknownRoute)} is not an operation; the operations are ${operationNames.join(', ')}`)
  }
  adminTokenSources.set(config, tokenSource)
  const key = Buffer.from(config.secretKey, 'base64')
  if (key.length !== 32 || key.toString('base64') !== config.secretKey.trim()) {
    throw new ConfigError('KIGO_SECRET_KEY: must be 32 bytes, base64-encoded')
  }
  return config
}

const adminTokenSources = new WeakMap<object, string>()

/** Where loadConfig found the admin token, for the start-up line (never the token itself). */
export function adminTokenSource(config: Config): string {
  return adminTokenSources.get(config) ?? 'the configuration given to the process'
}
