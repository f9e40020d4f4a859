// Where a request came from (docs/gateway.md#challenges): the public host, scheme and client address, with
// X-Forwarded-* believed only from a trusted proxy.
import fp from 'fastify-plugin'
import proxyAddr from '@fastify/proxy-addr'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Config } from '../../common/config.js'
import { repeatedHost, repeatedHostError } from '../../common/request-edges.js'
import { sendError } from '../../common/api-errors.js'

export interface PublicOrigin {
  host: string
  scheme: 'http' | 'https'
  ip: string
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's public origin once read (publicOrigin below); null before. */
    origin: PublicOrigin | null
  }
  interface FastifyInstance {
    /** The host, scheme and client address the request came from (trusted proxies applied); read once per request. */
    publicOrigin(request: FastifyRequest): PublicOrigin
  }
}

export interface OriginOptions {
  config: Pick<Config, 'trustedProxies' | 'publicScheme'>
}

/** The last element of a comma-separated header value (RFC 9110 §5.6.1), trimmed. */
function lastListValue(value: string): string {
  return value.slice(value.lastIndexOf(',') + 1).trim()
}

async function origin(app: FastifyInstance, { config }: OriginOptions): Promise<void> {
  const trusted = config.trustedProxies.length > 0 ? proxyAddr.compile(config.trustedProxies) : null

  const read = (request: FastifyRequest): PublicOrigin => {
    const socketIp = request.socket.remoteAddress ?? ''
    if (trusted && trusted(socketIp, 0)) {
      const xfp = request.headers['x-forwarded-proto']
      const xfh = request.headers['x-forwarded-host']
      // The right-most value is the one the nearest (trusted) proxy added; values to its
      // left came from further away, and may have come from the client itself.
      const proto = typeof xfp === 'string' ? lastListValue(xfp).toLowerCase() : ''
      const host = typeof xfh === 'string' && lastListValue(xfh) !== '' ? lastListValue(xfh) : request.headers.host ?? ''
      return {
        scheme: proto === 'https' || proto === 'http' ? proto : config.publicScheme,
        host: host.toLowerCase(),
        ip: proxyAddr(request.raw, trusted),
      }
    }
    return { scheme: config.publicScheme, host: (request.headers.host ?? '').toLowerCase(), ip: socketIp }
  }

  // RFC 9112 §3.2: a request with two Host fields is a 400. Node keeps the first; a proxy
  // in front keeping the last would have meant another host (docs/security.md#request-edges).
  app.addHook('onRequest', (request, reply, done) => {
    if (repeatedHost(request.raw.rawHeaders)) return void sendError(request, reply, repeatedHostError())
    done()
  })
  app.decorateRequest('origin', null)
  app.decorate('publicOrigin', (request: FastifyRequest): PublicOrigin => (request.origin ??= read(request)))
}

export default fp(origin, { name: 'kigo-origin', fastify: '5.x', dependencies: ['kigo-error-answers'] })
