// The core's anchor (issue 18): the least a Node service can do to answer statuses/show
// from PostgreSQL. Fastify with no hooks, a pg Pool of the core's size, the core's query
// text and row mapping (imported from its store) with the query as a named prepared
// statement (as src/common/sql.ts runs it), and the core's rendering functions, so the
// bytes are the same (the benchmark compares them before it measures). What the core spends beyond this is its own request handling: host and
// format checks, parameters, the identity check, error mapping, hooks.
//
// Run as its own process with the core's environment plus ANCHOR_PORT.
import Fastify, { type FastifyInstance } from 'fastify'
import pg from 'pg'
import { pathToFileURL } from 'node:url'
import { loadConfig } from '../src/common/config.js'
import { render } from '../src/common/formats.js'
import { renderEntry } from '../src/core/render/entry.js'
import type { Hosts } from '../src/core/entries/deployment.js'
import { entryByIdSql, toEntry, type EntryRecord } from '../src/core/store/sql-content-store.js'

/** src/common/sql.ts's default pool size, the one the core's content store opens. */
export const corePoolSize = 10

export function buildAnchor(options: { databaseUrl: string; hosts: Hosts; poolSize?: number }): FastifyInstance {
  const pool = new pg.Pool({ connectionString: options.databaseUrl, max: options.poolSize ?? corePoolSize })
  pool.on('error', () => undefined)
  const app = Fastify({ logger: false })
  app.addHook('onClose', () => pool.end())
  const context = { hosts: options.hosts, requestDeployment: 'domestic' as const }
  app.get('/readyz', async () => ({ ok: true }))
  app.get<{ Params: { target: string } }>('/api/statuses/show/:target', async (request, reply) => {
    const id = request.params.target.replace(/\.json$/, '')
    if (!/^[0-9]{1,19}$/.test(id)) return reply.code(404).send({ error: 'entry_not_found' })
    const { rows } = await pool.query<EntryRecord>({ name: 'anchor_show', text: entryByIdSql, values: [id] })
    const r = rows[0]
    if (!r) return reply.code(404).send({ error: 'entry_not_found' })
    const entry = toEntry(r)
    const rendition = renderEntry(entry, false, [], context)
    const out = render('json', 'status', rendition.json, rendition.xml)
    return reply.type(out.contentType).send(out.body)
  })
  return app
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const config = loadConfig({})
  if (!config.databaseUrl) {
    console.error('anchor: DATABASE_URL is required')
    process.exit(1)
  }
  const app = buildAnchor({
    databaseUrl: config.databaseUrl,
    hosts: { domesticHost: config.domesticHost, globalHost: config.globalHost, publicScheme: config.publicScheme },
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
