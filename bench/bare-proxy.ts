// The benchmark's reference point (docs/performance.md#how-it-measures): the plain Fastify reverse proxy,
// @fastify/reply-from with the undici pool settings of src/gateway/proxy/forward.ts, and
// nothing else: no authentication, no header hygiene, no identity. The gateway does not
// forward with reply-from: it has its own forwarder on undici's pool
// (src/gateway/proxy/forward.ts; docs/performance.md#forwarding-on-undicis-pool). The
// gateway's cost is what it spends beyond this fastest plain form.
//
// Run as its own process: BARE_PROXY_PORT, BARE_PROXY_UPSTREAM, BARE_PROXY_TIMEOUT_MS.
import Fastify, { type FastifyInstance } from 'fastify'
import replyFrom from '@fastify/reply-from'
import { pathToFileURL } from 'node:url'

export interface BareProxyOptions {
  upstream: string
  /** The gateway's coreTimeoutMs (config/default.json). */
  timeoutMs?: number
}

export async function buildBareProxy(options: BareProxyOptions): Promise<FastifyInstance> {
  const timeoutMs = options.timeoutMs ?? 10_000
  const app = Fastify({ logger: false })
  await app.register(replyFrom, {
    base: options.upstream,
    undici: { connections: 128, pipelining: 1, keepAliveTimeout: 60_000, headersTimeout: timeoutMs, bodyTimeout: timeoutMs },
    disableRequestLogging: true,
  })
  // Bodies pass through as streams, whatever their type.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload))
  // Returns nothing, as the gateway's catch-all does: a synchronous handler that returns the
  // reply reply-from gives back served 6–20% fewer requests here
  // (docs/performance.md#the-bare-proxys-handler-returns-nothing), and
  // the reference must be the fastest plain form, not a slower one.
  app.all('/*', (request, reply) => {
    void reply.from(request.url, {
      // reply-from would send the upstream's own host; the core must see the one the
      // client addressed, as through the gateway.
      rewriteRequestHeaders: (req, headers) => ({ ...headers, host: req.headers.host ?? headers.host }),
    })
  })
  return app
}

async function main(): Promise<void> {
  const upstream = process.env.BARE_PROXY_UPSTREAM
  const port = Number(process.env.BARE_PROXY_PORT ?? '0')
  if (!upstream) throw new Error('BARE_PROXY_UPSTREAM is required')
  const app = await buildBareProxy({ upstream, timeoutMs: Number(process.env.BARE_PROXY_TIMEOUT_MS ?? '10000') })
  await app.listen({ host: '127.0.0.1', port })
  const stop = () => void app.close().then(() => process.exit(0))
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: Error) => {
    console.error(`bare proxy: ${err.message}`)
    process.exit(1)
  })
}
