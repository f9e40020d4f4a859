// The upstream of the gateway-alone benchmark (group `gateway_alone` of docs/performance.md#the-groups-and-their-keys, the way Kong and Envoy measure a
// gateway): plain node:http with keep-alive, answering every request with the same
// Entry JSON of about 700 bytes, so that the proxy in front of it sets the rate.
//
// Run as its own process: FIXED_UPSTREAM_PORT.
import { createServer, type Server } from 'node:http'
import { pathToFileURL } from 'node:url'

/** An Entry (docs/api.md#objects) as the core renders it for statuses/show, about 700 bytes. */
export const fixedEntry = Buffer.from(
  JSON.stringify({
    id: '9083712345678901234',
    created_at: '2026-11-21T09:30:00Z',
    favorited: 0,
    in_reply_to_status_id: 0,
    in_reply_to_user_id: 0,
    keyword: 'bench',
    link: 'http://localhost:8080/bench/9083712345678901234',
    source: 'kigo bench',
    text: 'bench=seeded entry 1234: a short entry of the size people write, with a little more text so that the body is like a real one, neither empty nor long.',
    user: {
      id: 'benchuser',
      name: 'Bench User',
      screen_name: 'benchuser',
      followers_count: 0,
      profile_image_url: 'http://localhost:8080/users/benchuser/profile_image',
      url: 'http://localhost:8080/users/benchuser/',
    },
    haiku_text: 'seeded entry 1234: a short entry, about seven hundred bytes in all with the JSON around it',
  }),
)

export function startFixedUpstream(port: number, host = '127.0.0.1'): Promise<Server> {
  const headers = { 'content-type': 'application/json; charset=utf-8', 'content-length': String(fixedEntry.length) }
  const server = createServer((req, res) => {
    // Drain any body, then answer; the answer never depends on the request.
    req.resume()
    res.writeHead(200, headers)
    res.end(fixedEntry)
  })
  server.keepAliveTimeout = 60_000
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => resolve(server))
  })
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  startFixedUpstream(Number(process.env.FIXED_UPSTREAM_PORT ?? '0')).then(
    (server) => {
      const stop = () => server.close(() => process.exit(0))
      process.on('SIGTERM', stop)
      process.on('SIGINT', stop)
    },
    (err: Error) => {
      console.error(`fixed upstream: ${err.message}`)
      process.exit(1)
    },
  )
}
