// The shared Redis client (docs/operations.md#modes, docs/operations.md#dependability): replay cache and throttling in production.
//
// URL convention (REDIS_URL):
//   redis://[user:password@]host:port[/db]                 one server
//   rediss://…                                             the same over TLS
//   redis://[user:password@]host:port,host:port,…          Redis Cluster (seed nodes)
//   redis://[user:password@]host:port?cluster=1            Redis Cluster from one seed node
// More than one host, or `cluster=1` / `cluster=true`, asks for a Cluster; a database
// number is not allowed there (Cluster has only database 0).
//
// While Redis is away the client fails fast instead of queueing: no offline queue, no
// retried or re-sent commands, and every command bounded by `commandTimeoutMs` (a server
// that accepts the connection but does not answer). It reconnects by itself with a capped
// backoff, and 'error' events always have a listener, so an outage never crashes the process.
import { createRequire } from 'node:module'
import type { Cluster, ClusterOptions, Redis, RedisOptions } from 'ioredis'

// ioredis is loaded when the first client is made, not with this module: embedded mode
// never makes one, and loading it cost about a tenth of the embedded start
// (docs/performance.md#the-embedded-start). It is CommonJS, so a synchronous require keeps createRedis synchronous.
const loadIoredis = () => createRequire(import.meta.url)('ioredis') as typeof import('ioredis')

export type RedisClient = Redis | Cluster

export interface RedisUrlParts {
  cluster: boolean
  nodes: Array<{ host: string; port: number }>
  username?: string
  password?: string
  db: number
  tls: boolean
}

export interface RedisClientOptions {
  /** Longest wait for one command's answer; default 500 ms. */
  commandTimeoutMs?: number
  /** Longest wait for a TCP connection; default 1000 ms. */
  connectTimeoutMs?: number
  /** Cap of the reconnect backoff; default 1000 ms, so recovery takes about a second. */
  maxReconnectDelayMs?: number
  /** Told of connection errors (for the log); the client keeps reconnecting regardless. */
  onError?: (err: Error) => void
}

// The URL may carry a password: errors name the problem, never the URL.
function bad(why: string): Error {
  return new Error(`REDIS_URL: ${why}`)
}

/** Splits a REDIS_URL per the convention above; throws a one-line Error naming the problem. */
export function parseRedisUrl(url: string): RedisUrlParts {
  const m = /^(rediss?):\/\/(?:([^@/?#]*)@)?([^/?#]+)(?:\/([^?#]*))?(?:\?([^#]*))?$/.exec(url)
  if (!m) throw bad('expected redis://[user:password@]host:port[,host:port…][/db][?cluster=1]')
  const [, scheme, userinfo, hostList, path, query] = m
  const nodes = hostList!.split(',').map((h) => {
    const hm = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.\-_]+)(?::([0-9]{1,5}))?$/.exec(h.trim())
    if (!hm) throw bad(`bad host ${JSON.stringify(h)}`)
    const port = hm[2] === undefined ? 6379 : Number(hm[2])
    if (port < 1 || port > 65535) throw bad(`bad port ${hm[2]}`)
    return { host: hm[1]!.replace(/^\[|\]$/g, ''), port }
  })
  const params = new URLSearchParams(query ?? '')
  const flag = params.get('cluster')
  if (flag !== null && !['1', 'true', '0', 'false'].includes(flag)) throw bad('cluster must be 1, true, 0 or false')
  const cluster = nodes.length > 1 || flag === '1' || flag === 'true'
  let db = 0
  if (path !== undefined && path !== '') {
    if (!/^[0-9]{1,2}$/.test(path)) throw bad(`bad database number ${JSON.stringify(path)}`)
    db = Number(path)
    if (cluster && db !== 0) throw bad('Redis Cluster has only database 0')
  }
  let username: string | undefined
  let password: string | undefined
  if (userinfo !== undefined && userinfo !== '') {
    const decode = (s: string) => {
      try {
        return decodeURIComponent(s)
      } catch {
        throw bad('bad percent-encoding in the user or password')
      }
    }
    const colon = userinfo.indexOf(':')
    const user = decode(colon < 0 ? userinfo : userinfo.slice(0, colon))
    // redis://:password@host (no user) is the classic AUTH form.
    if (colon < 0) password = user
    else {
      if (user !== '') username = user
      password = decode(userinfo.slice(colon + 1))
    }
  }
  return { cluster, nodes, username, password, db, tls: scheme === 'rediss' }
}

/** A client for `url` (a plain server or a Cluster, see above) that fails fast and reconnects by itself. */
export function createRedis(url: string, options: RedisClientOptions = {}): RedisClient {
  const parts = parseRedisUrl(url)
  const maxDelay = options.maxReconnectDelayMs ?? 1000
  const common: RedisOptions = {
    username: parts.username,
    password: parts.password,
    tls: parts.tls ? {} : undefined,
    connectTimeout: options.connectTimeoutMs ?? 1000,
    commandTimeout: options.commandTimeoutMs ?? 500,
    // Fail fast: a command issued while disconnected is rejected at once rather than
    // queued, and one in flight when the connection drops is failed, never re-sent later
    // (a SET NX reported as failed must not silently claim its key afterwards).
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    // Commands issued in one tick (nonce claims of concurrent requests) share one write.
    enableAutoPipelining: true,
    // Reconnect forever, 50 ms, 100 ms, … up to the cap.
    retryStrategy: (attempt: number) => Math.min(50 * 2 ** Math.min(attempt, 10), maxDelay),
  }
  const { Cluster, Redis } = loadIoredis()
  const client: RedisClient = parts.cluster
    ? new Cluster(parts.nodes, {
        enableOfflineQueue: false,
        enableAutoPipelining: true,
        clusterRetryStrategy: (attempt: number) => Math.min(50 * 2 ** Math.min(attempt, 10), maxDelay),
        slotsRefreshTimeout: options.connectTimeoutMs ?? 1000,
        redisOptions: common,
      } satisfies ClusterOptions)
    : new Redis({ ...common, host: parts.nodes[0]!.host, port: parts.nodes[0]!.port, db: parts.db })
  client.on('error', (err: Error) => options.onError?.(err))
  return client
}

/**
 * Resolves true once the client is ready, false after `timeoutMs` (Redis absent at start:
 * the caller starts anyway, and the client keeps reconnecting). Useful at start-up, since
 * commands issued before the first connection are refused rather than queued.
 */
export async function redisReady(client: RedisClient, timeoutMs = 2000): Promise<boolean> {
  if (client.status === 'ready') return true
  return new Promise<boolean>((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer)
      client.off('ready', onReady)
      resolve(ok)
    }
    const onReady = () => done(true)
    const timer = setTimeout(() => done(false), timeoutMs)
    client.on('ready', onReady)
  })
}
