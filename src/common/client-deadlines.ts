// Deadlines on the client side of a listening app (docs/security.md#what-the-gateway-guarantees): a head or a body
// trickled a byte at a time, or a connection that sends nothing, must not hold a
// connection forever. Node answers 408 and closes past them; checked every second. A
// connection silent both ways (a client that stopped reading its answer) is closed by
// closeSilentConnections below.
import type { ServerOptions } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyInstance, FastifyServerOptions } from 'fastify'
import type { Config } from './config.js'

export function clientDeadlines(http: Config['gateway']['http']): Pick<FastifyServerOptions, 'requestTimeout' | 'connectionTimeout' | 'keepAliveTimeout'> & { http: ServerOptions } {
  return {
    requestTimeout: http.requestTimeoutMs,
    // No socket timer for the idle deadline: Node would move it at every read and write of
    // every request. closeSilentConnections sweeps for idle connections instead.
    connectionTimeout: 0,
    keepAliveTimeout: http.keepAliveTimeoutMs,
    http: { headersTimeout: http.headersTimeoutMs, connectionsCheckingInterval: 1000 },
  }
}

/** What the idle sweep knows of a connection: its byte counts as last seen, and since when they have not moved. */
interface Seen {
  bytes: number
  since: number
}

/** The sweep's period for an idle deadline of `idleMs`: a twelfth of it, between 100 ms and 5 s. */
export function idleSweepMs(idleMs: number): number {
  return Math.min(5000, Math.max(100, Math.floor(idleMs / 12)))
}

/** What the sweep reads of a connection, and how it closes one. */
export interface SweptConnection {
  readonly bytesRead: number
  readonly bytesWritten: number
  destroy(): unknown
}

/**
 * One pass of the idle sweep at `now`: a connection whose bytes read and written have not
 * moved for `idleMs` is destroyed. A connection's bytes are seen moving at a pass, so it is
 * never closed before it has been silent for `idleMs`, and at most two periods after.
 */
export function sweepIdle(open: Map<SweptConnection, Seen>, idleMs: number, now: number): void {
  for (const [socket, seen] of open) {
    const bytes = socket.bytesRead + socket.bytesWritten
    if (bytes !== seen.bytes) {
      seen.bytes = bytes
      seen.since = now
    } else if (now - seen.since >= idleMs) socket.destroy()
  }
}

/**
 * With `idleMs`, a connection with no byte either way for that long is closed (the idle
 * deadline, `gateway.http.idleTimeoutMs`): swept every idleSweepMs rather than timed per
 * socket, whose timer Node moves at every read and write.
 *
 * When `app` closes, connections that never sent a byte are closed at once, and so is any
 * connection opened while it closes. Node closes idle kept-alive connections itself, but
 * counts a connection that has sent nothing yet as waiting for its head: without this, one
 * such connection (a balancer's spare, a port check) held a graceful stop until the head
 * deadline, and the stop's own 30 s limit then ended the process with status 1.
 * Connections in the middle of a request are left to finish. One listener per
 * connection, none per request.
 */
export function closeSilentConnections(app: FastifyInstance, idleMs?: number, now: () => number = Date.now): void {
  const open = new Map<Socket, Seen>()
  let closing = false
  app.server.on('connection', (socket: Socket) => {
    if (closing) return void socket.destroy()
    open.set(socket, { bytes: 0, since: now() })
    socket.once('close', () => open.delete(socket))
  })
  const sweep = idleMs === undefined ? null : setInterval(() => sweepIdle(open, idleMs, now()), idleSweepMs(idleMs))
  sweep?.unref()
  // The sweep goes on while requests drain, so that a client that stops reading during a
  // shutdown is still closed at the idle deadline; it ends with the server.
  app.addHook('onClose', (_instance, done) => {
    if (sweep) clearInterval(sweep)
    done()
  })
  app.addHook('preClose', (done) => {
    closing = true
    for (const socket of open.keys()) if (socket.bytesRead === 0) socket.destroy()
    done()
  })
}
