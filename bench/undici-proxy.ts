// The hand-written minimal proxy of the gateway-alone benchmark: node:http in front, an
// undici Pool behind (the client reply-from uses), and only the work any HTTP/1.1 proxy
// must do: drop the hop-by-hop headers (RFC 9110 §7.6.1), keep the client's Host, stream
// the body both ways. What reply-from and the gateway cost is measured against this.
//
// Run as its own process: UNDICI_PROXY_PORT, UNDICI_PROXY_UPSTREAM.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import { pathToFileURL } from 'node:url'
import { Pool } from 'undici'

/** The hop-by-hop headers (RFC 9110 §7.6.1) every proxy of the benchmark drops. */
const hopByHop = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade'])

/** `headers` without the hop-by-hop ones. */
function forwardable(headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {}
  for (const name in headers) {
    const v = headers[name]
    if (v !== undefined && !hopByHop.has(name)) out[name] = v
  }
  return out
}

export function startUndiciProxy(port: number, upstream: string, host = '127.0.0.1'): Promise<Server> {
  const pool = new Pool(upstream, { connections: 128, pipelining: 1, keepAliveTimeout: 60_000 })
  const server = createServer((req, res) => {
    const method = req.method ?? 'GET'
    pool.request(
      { method, path: req.url ?? '/', headers: forwardable(req.headers), body: method === 'GET' || method === 'HEAD' ? null : req },
      (err, data) => {
        if (err) {
          if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' })
          res.end('bad gateway')
          return
        }
        // The client may have gone while the upstream answered (the load generator stops
        // mid-request at the end of a window): then the answer is dropped, not piped.
        if (res.destroyed) {
          data.body.destroy()
          return
        }
        res.writeHead(data.statusCode, forwardable(data.headers))
        // pipe, not stream.pipeline: pipeline's end-of-stream watch on both sides cost this
        // proxy about 50 of its 95 µs of CPU per request, measured side by side.
        data.body.on('error', () => res.destroy())
        data.body.pipe(res)
      },
    )
  })
  server.keepAliveTimeout = 60_000
  server.on('close', () => void pool.close())
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => resolve(server))
  })
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const upstream = process.env.UNDICI_PROXY_UPSTREAM
  if (!upstream) {
    console.error('undici proxy: UNDICI_PROXY_UPSTREAM is required')
    process.exit(1)
  }
  startUndiciProxy(Number(process.env.UNDICI_PROXY_PORT ?? '0'), upstream).then(
    (server) => {
      const stop = () => server.close(() => process.exit(0))
      process.on('SIGTERM', stop)
      process.on('SIGINT', stop)
    },
    (err: Error) => {
      console.error(`undici proxy: ${err.message}`)
      process.exit(1)
    },
  )
}
