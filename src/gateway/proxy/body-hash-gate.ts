// A body under oauth_body_hash, checked while it streams to the core: never held whole in
// the gateway (docs/security.md#bodies-and-uploads). It is only ever reached once the
// request's signature, which covers oauth_body_hash, has verified. Every chunk is hashed
// on its way; the last chunk is held back until the client's body has ended and its hash
// is known. A body whose hash matches goes through whole. One that does not is cut before
// its last bytes, with an error that aborts the request to the core: the core receives an
// incomplete body, which it never acts on (its parsers need the whole body), and it checks
// the same hash itself before acting (the signed digest, identity-guard.ts), so a
// mismatched body is refused by both. The client is answered 401 signature_invalid.
import { createHash, timingSafeEqual } from 'node:crypto'
import { Transform, type Readable } from 'node:stream'
import type { ApiError } from '../../common/errors.js'

export interface BodyHash {
  algorithm: 'sha1' | 'sha256'
  /** The client's oauth_body_hash (standard base64). */
  expected: string
}

/**
 * `source` passed through with its hash checked: the returned stream ends normally when
 * the hash matches, and is destroyed with `mismatch()` when it does not. An error or early
 * end of the source (the client went away) destroys it too, so the core's request is
 * aborted and never completes.
 */
export function gateBodyHash(source: Readable, hash: BodyHash, mismatch: () => ApiError): Readable {
  const digest = createHash(hash.algorithm)
  const expected = Buffer.from(hash.expected, 'base64')
  let held: Buffer | null = null
  const gate = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      digest.update(chunk)
      const previous = held
      held = chunk
      callback(null, previous ?? undefined)
    },
    flush(callback) {
      const actual = digest.digest()
      if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) return callback(mismatch())
      callback(null, held ?? undefined)
    },
  })
  source.on('error', (err) => gate.destroy(err))
  // A client that closes mid-body ends nothing by itself on an IncomingMessage: its close does.
  source.once('close', () => {
    if (!source.readableEnded) gate.destroy(new Error('the client closed the request before its body ended'))
  })
  source.pipe(gate)
  return gate
}
