// Request bodies on the public port (docs/security.md#bodies-and-uploads): an
// application/x-www-form-urlencoded body is the one body the gateway reads, because its
// parameters are signed (RFC 5849 §3.4.1.3.1) and may carry the OAuth credential itself
// (§3.5.2), so it is read before the credential is verified. It is therefore bounded
// twice: each form to gateway.formBodyLimitBytes (413 past it), and the forms all requests
// hold at once to gateway.formBytesInFlight (503 with Retry-After past it, before more is
// read); the small bodies read to explain a failed signature count against the same bound. Everything else (multipart uploads, JSON, bytes) is passed on as a stream, never
// read here: a body under oauth_body_hash is checked as it streams (proxy/body-hash-gate.ts).
import { Transform } from 'node:stream'
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import type { Config } from '../../common/config.js'
import { ByteBudget } from '../../common/byte-budget.js'
import { Unavailable } from '../../common/errors.js'
import { isFormContentType } from '../../common/formats.js'

/** What a form refused for the shared bound is told to wait (Retry-After, seconds). */
const formRetryAfterSeconds = 2

/** The forms in flight hold gateway.formBytesInFlight already: a 503 by classifyFailure. */
export class FormBytesBusy extends Unavailable {
  override name = 'FormBytesBusy'
  constructor() {
    super('service_unavailable', 'The gateway is reading too many request bodies; try again shortly', formRetryAfterSeconds)
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The bytes of request bodies the gateway reads (forms, a failed signature's explanation), bounded together. */
    bodyBudget: ByteBudget
  }
}

async function bodyParsers(app: FastifyInstance, { config }: { config: Config }): Promise<void> {
  const budget = new ByteBudget(config.gateway.formBytesInFlight)
  app.decorate('bodyBudget', budget)
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer', bodyLimit: config.gateway.formBodyLimitBytes }, (_req, body, done) => done(null, body))
  app.addContentTypeParser('*', (_req, payload, done) => done(null, payload))

  // A form's bytes are taken from the shared budget as they arrive, and given back when
  // its answer is done (the form is forwarded from memory until then).
  app.addHook('preParsing', (request, reply, payload, done) => {
    if (!isFormContentType(request.headers['content-type'])) return done(null, payload)
    let taken = 0
    reply.raw.once('close', () => budget.release('', taken))
    const counted = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        if (budget.take('', chunk.length) !== null) {
          return callback(new FormBytesBusy())
        }
        taken += chunk.length
        callback(null, chunk)
      },
    })
    payload.on('error', (err) => counted.destroy(err))
    done(null, payload.pipe(counted))
  })
}

export default fp(bodyParsers, { name: 'kigo-body-parsers', fastify: '5.x' })
