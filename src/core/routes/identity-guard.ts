// The core's second look at what the gateway authorized (docs/gateway.md#forwarding, defence in depth):
// the core never decides on its own which operation a request is allowed to run; it
// checks that the operation it routed is the one the gateway signed, that the signed
// identity may run it (credential kind and OAuth scope, from the same route table), that
// a signed body is the body it received, and that a signed request is not replayed.
import { createHash } from 'node:crypto'
import { Readable } from 'node:stream'
import { LRUCache } from 'lru-cache'
import { errors } from '../../common/errors.js'
import type { AuthMethod, Identity } from '../../common/identity.js'
import type { Operation } from '../../common/route-table.js'

const refused = () => errors.unauthorized('invalid_identity', 'The identity of this request could not be verified')

/**
 * The identity the core believes for a request signed for `signedOperation` that routed
 * to `routed` (undefined: a route outside the table, or a 405 or 404 answer). Throws the
 * error to answer when the identity may not run what was routed.
 */
export function checkSignedOperation(
  identity: Identity | null,
  signedOperation: string,
  routed: Operation | undefined,
  method: string,
  routeMethods: Record<string, AuthMethod[]>,
): Identity | null {
  if (identity === null) return null
  // What the gateway authorized is what runs: the same operation, or none on both sides.
  if (signedOperation !== (routed?.name ?? '')) throw refused()
  if (routed === undefined) {
    // Outside the table an identity goes with reads only; nothing else is done as anyone.
    return method === 'GET' || method === 'HEAD' ? identity : null
  }
  // A reader's account session names them on a page, and never runs an operation.
  if (identity.authMethod === 'session') throw refused()
  const methods = routeMethods[routed.name] ?? routed.methods
  if (!methods.includes(identity.authMethod)) throw refused()
  if (identity.authMethod === 'oauth' && routed.scopes.length > 0 && !routed.scopes.some((s) => identity.scopes.includes(s))) {
    throw errors.forbidden('additional_authorization_required', `This token lacks the scope this operation needs (${routed.scopes.join(' or ')})`)
  }
  return identity
}

/**
 * Signed requests already run by this core process, by request ID: a signed request
 * replayed to the core, a read as much as a write, is refused (docs/security.md#request-edges).
 * At most `max` are remembered, the least recently claimed forgotten first (lru-cache: O(1)
 * per claim and per eviction). A remembered ID needs no expiry: once its signature is
 * older than the freshness window, verifyIdentity refuses it before it is claimed. An ID
 * forgotten while its signature is still fresh is no longer recognised: the bound covers
 * the whole window up to `max` signed requests per two freshness windows, and past that
 * rate the last `max` requests. (Refusing whatever was signed before a forgotten ID would
 * close that gap, but it refused honest requests signed ahead of time, as a load
 * generator signs them.) The gateway's own retry signs afresh under a new ID
 * (proxy/forward.ts). Per process: a deployment with several cores keeps the freshness
 * window as its bound across them.
 */
export class SeenRequestIds {
  private readonly seen: LRUCache<string, true>

  constructor(max = seenRequestIdsMax) {
    this.seen = new LRUCache<string, true>({ max })
  }

  /** True the first time `id` is claimed; false for a replay of a remembered one. */
  claim(id: string): boolean {
    if (this.seen.has(id)) return false
    this.seen.set(id, true)
    return true
  }
}

/**
 * Request IDs a core remembers: at two minutes' freshness window (twice the 60 s default
 * age, either way) the whole window at up to about 800 signed requests a second, the last
 * 100,000 past that. About 11 MB when full: 5.6 MB of cache measured with 100,000 UUIDs
 * claimed (node --expose-gc, heap after gc), plus the IDs' own strings.
 */
export const seenRequestIdsMax = 100_000

/**
 * The hash a signed body digest names and its base64url value: SHA-256 (the gateway's own
 * digest of a form it read), or, when prefixed `sha1:`, SHA-1 (a client's oauth_body_hash
 * under HMAC-SHA1, vouched for by the gateway; see identity.ts).
 */
export function digestOf(expected: string): { algorithm: 'sha1' | 'sha256'; value: string } {
  return expected.startsWith('sha1:') ? { algorithm: 'sha1', value: expected.slice(5) } : { algorithm: 'sha256', value: expected }
}

/**
 * The request body read whole and checked against the digest the gateway signed, handed
 * on as a stream to the body parsers (forms only, within `limit`).
 */
export async function verifiedBody(payload: NodeJS.ReadableStream, expected: string, limit: number): Promise<Readable> {
  const digest = digestOf(expected)
  const hash = createHash(digest.algorithm)
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of payload as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > limit) throw errors.tooLarge('body_too_large', 'The request body is too large')
    hash.update(chunk)
    chunks.push(chunk)
  }
  if (hash.digest('base64url') !== digest.value) throw refused()
  return Readable.from([Buffer.concat(chunks)])
}

/**
 * The digest of a multipart body, taken as the multipart parser reads it (it reads the
 * request itself, so the body cannot be read ahead and handed on): resolves, once the body
 * has ended, to whether it is the body the gateway signed. The parameters are read whole
 * before any write starts, so the answer is known before it matters (params.ts).
 */
export function tapBodyDigest(payload: NodeJS.ReadableStream, expected: string): Promise<boolean> {
  const digest = digestOf(expected)
  const hash = createHash(digest.algorithm)
  const result = new Promise<boolean>((resolve) => {
    payload.on('data', (chunk: Buffer) => hash.update(chunk))
    payload.once('end', () => resolve(hash.digest('base64url') === digest.value))
    payload.once('error', () => resolve(false))
  })
  // The listener above would start the flow before the parser is attached: held until it is.
  payload.pause()
  return result
}
