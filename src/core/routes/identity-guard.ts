// The core's second look at what the gateway authorized (SPEC §4.6, defence in depth):
// the core never decides on its own which operation a request is allowed to run; it
// checks that the operation it routed is the one the gateway signed, that the signed
// identity may run it (credential kind and OAuth scope, from the same route table), that
// a signed body is the body it received, and that a signed write is not replayed.
import { createHash } from 'node:crypto'
import { Readable } from 'node:stream'
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
  const methods = routeMethods[routed.name] ?? routed.methods
  if (!methods.includes(identity.authMethod)) throw refused()
  if (identity.authMethod === 'oauth' && routed.scopes.length > 0 && !routed.scopes.some((s) => identity.scopes.includes(s))) {
    throw errors.forbidden('additional_authorization_required', `This token lacks the scope this operation needs (${routed.scopes.join(' or ')})`)
  }
  return identity
}

/**
 * Request IDs of signed writes seen within the signature's freshness window: a signed
 * request replayed to the core (another body, or the same one again) is refused. Two
 * generations of `windowSeconds` each, so an ID is remembered at least one window.
 * Per process: a deployment with several cores keeps the freshness window as its bound.
 */
export class SeenRequestIds {
  private current = new Set<string>()
  private previous = new Set<string>()
  private rotatedAt: number

  constructor(
    private readonly windowSeconds: number,
    private readonly now: () => number = Date.now,
  ) {
    this.rotatedAt = now()
  }

  /** True the first time `id` is claimed within the window, false after. */
  claim(id: string): boolean {
    const t = this.now()
    if (t - this.rotatedAt >= this.windowSeconds * 1000) {
      this.previous = t - this.rotatedAt >= 2 * this.windowSeconds * 1000 ? new Set() : this.current
      this.current = new Set()
      this.rotatedAt = t
    }
    if (this.current.has(id) || this.previous.has(id)) return false
    this.current.add(id)
    return true
  }
}

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
