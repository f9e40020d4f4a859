// Deadlines on the client side of a listening app (docs/security.md#what-the-gateway-guarantees): a head or a body
// trickled a byte at a time, or a connection that sends nothing, must not hold a
// connection forever. Node answers 408 and closes past them; checked every second.
import type { ServerOptions } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyInstance, FastifyServerOptions } from 'fastify'
import type { Config } from './config.js'

export function clientDeadlines(http: Config['gateway']['http']): Pick<FastifyServerOptions, 'requestTimeout' | 'connectionTimeout' | 'keepAliveTimeout'> & { http: ServerOptions } {
  return {
    requestTimeout: http.requestTimeoutMs,
    connectionTimeout: http.idleTimeoutMs,
    keepAliveTimeout: http.keepAliveTimeoutMs,
    http: { headersTimeout: http.headersTimeoutMs, connectionsCheckingInterval: 1000 },
  }
}

/**
 * When `app` closes, connections that never sent a byte are closed at once, and so is any
 * connection opened while it closes. Node closes idle kept-alive connections itself, but
 * counts a connection that has sent nothing yet as waiting for its head: without this, one
 * such connection (a balancer's spare, a port check) held a graceful stop until the head
 * deadline, and the stop's own 30 s limit then ended the process with status 1.
 * Connections in the middle of a request are left to finish. One listener per
 * connection, none per request.
 */
export function closeSilentConnections(app: FastifyInstance): void {
  const open = new Set<Socket>()
  let closing = false
  app.server.on('connection', (socket: Socket) => {
    if (closing) return void socket.destroy()
    open.add(socket)
    socket.once('close', () => open.delete(socket))
  })
  app.addHook('preClose', (done) => {
    closing = true
    for (const socket of open) if (socket.bytesRead === 0) socket.destroy()
    done()
  })
}
