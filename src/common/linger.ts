// An answer sent before its request's body was read (a refusal: unverified, too large,
// too slow, over a memory bound) closes its connection (`Connection: close`): the rest of
// the body is never read into memory. Closed at once, though, the answer could be lost:
// the client is still sending, and a socket closed with unread bytes in its receive queue
// is reset (RST), which discards the answer on the client's side before it is read
// (RFC 9112 §9.6). So the connection closes the way RFC 9112 §9.6 asks: the answer is
// sent, the sending side is closed (FIN), and what still arrives is read and thrown
// away, never kept, for at most `lingerMs` before the socket is closed.
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'

/** How long a refused request's remaining body is discarded before its connection closes. */
export const lingerMs = 2000

const lingering = new WeakSet<Socket>()

/**
 * Marks `response` as closing its connection (when `request`'s body has not ended) and
 * makes that close a lingering one. Call before the answer is sent.
 */
export function closeAfterAnswer(request: IncomingMessage, response: ServerResponse, ms = lingerMs): void {
  if (request.complete) return
  if (!response.headersSent) response.setHeader('connection', 'close')
  const socket = request.socket as Socket & { destroySoon?: () => void }
  if (lingering.has(socket)) return
  lingering.add(socket)
  // Node's server ends a `Connection: close` exchange with destroySoon once the answer is
  // written: here, the same but lingering.
  socket.destroySoon = () => {
    socket.end()
    const timer = setTimeout(() => socket.destroy(), ms)
    timer.unref()
    socket.once('close', () => clearTimeout(timer))
    // Whatever was reading the body (a parser, a forward) has stopped: discard the rest.
    request.unpipe()
    request.removeAllListeners('data')
    request.resume()
    socket.resume()
  }
}
