// The core's anchor (group `core` of docs/performance.md#the-groups-and-their-keys): the least a Node service can do to answer statuses/show
// from PostgreSQL. Fastify with no hooks, a pg Pool of the core's size, the core's query
// texts (the entry, and its replies asked for at the same time) and row mapping (imported
// from its store) as named prepared statements (as src/common/sql.ts runs them), and the
// core's rendering functions, so the bytes are the same (the benchmark compares them
// before it measures). What the core spends beyond this is its own request handling:
// host and format checks, parameters, the identity check, error mapping, hooks.
//
// With `required`, the floor under the core's figures (as required-work-proxy.ts is the
// gateway's): the same handler plus only the checks the core cannot skip for a
// statuses/show, written the shortest way in the one handler with the core's own
// functions: the identity headers (none, or a signature that verifies: docs/gateway.md#forwarding), the
// canonical path, the format of the extension, the Host's deployment, the query's
// parameters decoded strictly (a known one twice is 400) with `callback` and
// `body_formats` (docs/api.md#callback-and-body_formats), and `Cache-Control: no-store`. For a signed identity,
// also: the signed operation and the identity's right to run it (the core's
// checkSignedOperation), the signed request claimed once (the core's SeenRequestIds),
// the public profile copy kept up to date (the core's
// ProfileRefresher), and the viewer's query, whose answer says whether the viewer
// starred the entry. No metrics, no logs, no request IDs, no store layer on the request's
// own query: a failure answers 400, 401 or 404. The floor sends its statements through
// the core's SQL layer (src/common/sql.ts: statements outside a transaction on pipelined
// connections, as named prepared statements), with the core's number of connections:
// the least the required work needs is measured on the cheapest way to PostgreSQL that
// kigo has, so that a signed viewer's extra cost is compared on the same base. The anchor
// itself keeps a pg Pool, as that section defines it.
//
// Run as its own process with the core's environment plus ANCHOR_PORT (and
// ANCHOR_REQUIRED=1 for the floor).
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify'
import pg from 'pg'
import { pathToFileURL } from 'node:url'
import { loadConfig } from '../src/common/config.js'
import { formatOfPath, isValidCallback, render } from '../src/common/formats.js'
import { identityKey, verifyIdentity, type AuthMethod, type Identity } from '../src/common/identity.js'
import { canonicalPath } from '../src/common/route-table.js'
import { openDb, type Db } from '../src/common/sql.js'
import type { ApiError } from '../src/common/errors.js'
import { parseId } from '../src/core/entries/ids.js'
import { parseBodyFormats, type BodyFormat } from '../src/core/render/body-formats.js'
import { renderEntryWithReplies } from '../src/core/render/entry.js'
import { deploymentMatcher, type Hosts } from '../src/common/deployment.js'
import { operationNamed } from '../src/core/routes/api-route.js'
import { checkSignedOperation, SeenRequestIds } from '../src/core/routes/identity-guard.js'
import { readParams, type Params } from '../src/core/routes/params.js'
import { ProfileRefresher } from '../src/core/routes/profiles.js'
import { entryByIdSql, entryForViewerSql, repliesToSql, SqlContentStore, toEntry, type EntryRecord } from '../src/core/store/sql-content-store.js'
import type { Deployment, EntryPage } from '../src/core/store/types.js'

/** src/common/sql.ts's default number of connections, the core content store's (half of them pipelined, half pooled). */
export const corePoolSize = 10

export interface AnchorOptions {
  databaseUrl: string
  hosts: Hosts
  poolSize?: number
  /** The floor: the checks the core cannot skip, with the key, freshness and route methods the core uses. */
  required?: { secretKey: string; identityMaxAgeSeconds: number; routeMethods: Record<string, AuthMethod[]> }
}

type ShowRow = EntryRecord & { favorited?: boolean }

export function buildAnchor(options: AnchorOptions): FastifyInstance {
  const app = Fastify({ logger: false })
  const max = options.poolSize ?? corePoolSize
  const context = { hosts: options.hosts, requestDeployment: 'domestic' as const }
  // The row of `id` (with the viewer's star when there is a viewer), and the floor's checks.
  let rowsOf: (id: string, viewer: Identity | null | undefined) => Promise<ShowRow[]>
  // Its replies, asked for at the same time, as the core does (an entry the benchmark shows
  // has none; with replies the core asks for their stars and authors' followers too).
  let repliesOf: (id: string) => Promise<EntryRecord[]>
  let checks: ((request: FastifyRequest) => Promise<Checked>) | undefined
  const required = options.required
  if (required) {
    // The floor: the core's SQL layer (see the head of this file), opened before it serves.
    let db: Db | undefined
    app.addHook('onReady', async () => {
      const opened = await openDb({ databaseUrl: options.databaseUrl, dataDir: '', maxConnections: max })
      db = opened
      rowsOf = (id, viewer) => opened.query<ShowRow>(viewer ? entryForViewerSql : entryByIdSql, viewer ? [id, viewer.user] : [id])
      repliesOf = (id) => opened.query<EntryRecord>(repliesToSql, [[id]])
      checks = requiredChecks(options.hosts, required, opened)
    })
    app.addHook('onClose', async () => db?.close())
  } else {
    // The anchor: a pg Pool and its one statement (the anchor is sent no signed viewers).
    const pool = new pg.Pool({ connectionString: options.databaseUrl, max })
    pool.on('error', () => undefined)
    app.addHook('onClose', () => pool.end())
    rowsOf = async (id) => (await pool.query<ShowRow>({ name: 'anchor_show', text: entryByIdSql, values: [id] })).rows
    repliesOf = async (id) => (await pool.query<EntryRecord>({ name: 'anchor_replies', text: repliesToSql, values: [[id]] })).rows
  }
  app.get('/readyz', async () => ({ ok: true }))
  app.get<{ Params: { target: string } }>('/api/statuses/show/:target', async (request, reply) => {
    const checked = await checks?.(request)
    if (checked?.refused) return reply.code(checked.refused).send({ error: 'refused' })
    const target = request.params.target.replace(/\.(json|xml)$/, '')
    const id = checked ? parseId(target) : /^[0-9]{1,19}$/.test(target) ? target : null
    if (id === null) return reply.code(404).send({ error: 'entry_not_found' })
    const [rows, replyRows] = await Promise.all([rowsOf(id, checked?.identity), repliesOf(id)])
    const r = rows[0]
    if (!r) return reply.code(404).send({ error: 'entry_not_found' })
    const entry = toEntry(r)
    const page: EntryPage = { entries: [], replies: new Map(), starred: new Set(), stars: new Map(), followers: new Map() }
    if (replyRows.length > 0) page.replies.set(id, replyRows.map(toEntry))
    const rendition = renderEntryWithReplies(page, entry, checked?.bodyFormats ?? [], checked ? { hosts: options.hosts, requestDeployment: checked.deployment } : context, r.favorited === true)
    const out = render(checked?.format ?? 'json', 'status', rendition.json, rendition.xml, checked?.callback)
    if (checked) reply.header('cache-control', 'no-store').headers(out.headers)
    return reply.type(out.contentType).send(out.body)
  })
  return app
}

type Checked =
  | { refused: 400 | 401 | 403 | 404 }
  | { refused?: undefined; identity: Identity | null; format: 'json' | 'xml'; deployment: Deployment; callback: string | undefined; bodyFormats: BodyFormat[] }

/** The floor's checks of one request (see the head of this file). */
function requiredChecks(hosts: Hosts, required: NonNullable<AnchorOptions['required']>, db: Db) {
  const key = identityKey(required.secretKey)
  const deploymentOf = deploymentMatcher(hosts)
  const show = operationNamed('statuses/show')
  // The profile copy through the core's own store, on the floor's connections: at most one
  // round trip per user a minute, so not the request's path.
  const profiles = new ProfileRefresher(new SqlContentStore(db))
  const seen = new SeenRequestIds()
  return async (request: FastifyRequest): Promise<Checked> => {
    const url = request.raw.url ?? '/'
    const check = verifyIdentity(key, request.headers, { method: 'GET', url, host: request.headers.host ?? '' }, required.identityMaxAgeSeconds)
    if (!check.ok) return { refused: 401 }
    let identity: Identity | null
    try {
      identity = checkSignedOperation(check.identity, check.operation, show, 'GET', required.routeMethods)
    } catch (err) {
      return { refused: (err as ApiError).status === 403 ? 403 : 401 }
    }
    if (check.signed && !seen.claim(check.requestId ?? '')) return { refused: 401 }
    const q = url.indexOf('?')
    if (!canonicalPath(q === -1 ? url : url.slice(0, q)).ok) return { refused: 400 }
    const format = formatOfPath(url)
    if (format === null) return { refused: 404 }
    const deployment = deploymentOf(request.headers.host)
    if (deployment === null) return { refused: 400 }
    // The core's own parameter reading (strict decoding, a known one twice, U+0000, `file`).
    let params: Params
    try {
      params = await readParams(request, { names: ['callback', 'body_formats'], maxFiles: 0, fileBytes: 0 })
    } catch {
      return { refused: 400 }
    }
    const callback = params.get('callback') || undefined
    if (callback !== undefined && !isValidCallback(callback)) return { refused: 400 }
    // Most requests: nothing to wait for (the core's preHandler makes no promise either).
    const refreshing = identity && profiles.refresh(identity)
    if (refreshing) await refreshing
    return { identity, format, deployment, callback, bodyFormats: parseBodyFormats(params.get('body_formats')) }
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const config = loadConfig({})
  if (!config.databaseUrl) {
    console.error('anchor: DATABASE_URL is required')
    process.exit(1)
  }
  const app = buildAnchor({
    databaseUrl: config.databaseUrl,
    hosts: {
      domesticHost: config.domesticHost,
      globalHost: config.globalHost,
      publicScheme: config.publicScheme,
      domesticAliases: config.domesticHostAliases ?? [],
      globalAliases: config.globalHostAliases ?? [],
    },
    ...(process.env.ANCHOR_REQUIRED === '1'
      ? { required: { secretKey: config.secretKey, identityMaxAgeSeconds: config.core.identityMaxAgeSeconds, routeMethods: config.auth.routeMethods } }
      : {}),
  })
  app.listen({ host: '127.0.0.1', port: Number(process.env.ANCHOR_PORT ?? '0') }).then(
    () => {
      const stop = () => void app.close().then(() => process.exit(0))
      process.on('SIGTERM', stop)
      process.on('SIGINT', stop)
    },
    (err: Error) => {
      console.error(`anchor: ${err.message}`)
      process.exit(1)
    },
  )
}
