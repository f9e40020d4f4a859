// How the core's answers are written, known before anything can fail: API answers are never
// cached, and the JSONP callback is read first so that early errors are wrapped too
// (docs/api.md#callback-and-body_formats). A repeated Host is refused before anything else.
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { repeatedHost, repeatedHostError } from '../../common/request-edges.js'
import { contextOf } from '../routes/context.js'
import { decodeForm, queryBytes } from '../routes/form-decoding.js'

async function formats(app: FastifyInstance): Promise<void> {
  // Callback-style (a throw before `done` is answered as an error, as a rejection would
  // be): a request with nothing to wait for makes no promises.
  app.addHook('onRequest', (request, reply, done) => {
    // RFC 9112 §3.2: one Host, or 400 (docs/security.md#request-edges).
    if (repeatedHost(request.raw.rawHeaders)) throw repeatedHostError()
    const url = request.raw.url ?? '/'
    // API answers depend on the requester: never cached (errors included).
    if (url.startsWith('/api/')) reply.header('cache-control', 'no-store')
    // The callback is known before the parameters are read; a query that cannot be decoded
    // is reported later, by the route. A query with neither `callback` nor a percent-escape
    // cannot name one: it is not decoded here.
    const query = url.indexOf('?')
    if (query !== -1 && (url.includes('callback', query) || url.includes('%', query))) {
      try {
        const callbacks = decodeForm(queryBytes(url)).filter(([n]) => n === 'callback')
        if (callbacks.length === 1 && callbacks[0]![1] !== '') contextOf(request).callback = callbacks[0]![1]
      } catch {
        // reported by the route
      }
    }
    done()
  })
}

export default fp(formats, { name: 'kigo-core-formats', fastify: '5.x' })
