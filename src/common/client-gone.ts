// A client that closed its connection will never read the answer; for a write that has
// not started yet, starting it anyway only makes a change nobody asked to be told of
// (docs/operations.md#a-client-that-has-gone: a write whose client is gone before it started is not started).
import type { FastifyReply, FastifyRequest } from 'fastify'

export function clientGone(request: FastifyRequest, reply: FastifyReply): boolean {
  return request.raw.socket?.destroyed === true || reply.raw.closed || reply.raw.destroyed
}

const safeMethods = new Set(['GET', 'HEAD', 'OPTIONS'])

/** A request that may change something (docs/api.md: every write is a POST). */
export function isWrite(method: string): boolean {
  return !safeMethods.has(method)
}
