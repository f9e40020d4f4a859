// Request bodies on the public port (docs/security.md#bodies-and-uploads): an
// application/x-www-form-urlencoded body is the one body the gateway reads, because its
// parameters are signed (RFC 5849 §3.4.1.3.1) and may carry the OAuth credential itself
// (§3.5.2), so it is read before the credential is verified. It is therefore bounded
// twice: each form to gateway.formBodyLimitBytes (413 past it), and the forms all requests
// hold at once to gateway.formBytesInFlight (503 with Retry-After past it, before more is
// read), those of one client's network to gateway.formBytesInFlightPerClient (429); the small bodies read to explain a failed signature count against the same bound. Everything else (multipart uploads, JSON, bytes) is passed on as a stream, never
// read here: a body under oauth_body_hash is checked as it streams (proxy/body-hash-gate.ts).
import { Transform } from 'node:stream'
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Config } from '../../common/config.js'
import { ByteBudget } from '../../common/byte-budget.js'
import { errors, Unavailable } from '../../common/errors.js'
import { isFormContentType } from '../../common/formats.js'
import { addressNetwork } from '../throttle/attempts.js'

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

/**
 * Whose share of the body budget a request's bytes are: its client's network (the address
 * the gateway believes, trusted proxies considered; IPv6 by its /64), so that one client
 * holding forms open takes its own share, never the others'.
 */
export function bodyHolder(request: FastifyRequest): string {
  const app = request.server as Partial<Pick<FastifyInstance, 'publicOrigin'>>
  return addressNetwork(app.publicOrigin ? app.publicOrigin(request).ip : request.ip)
}

async function bodyParsers(app: FastifyInstance, { config }: { config: Config }): Promise<void> {
  const budget = new ByteBudget(config.gateway.formBytesInFlight, config.gateway.formBytesInFlightPerClient)
  app.decorate('bodyBudget', budget)
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer', bodyLimit: config.gateway.formBodyLimitBytes }, (_req, body, done) => done(null, body))
  app.addContentTypeParser('*', (_req, payload, done) => done(null, payload))

  // A form's bytes are taken from the shared budget as they arrive, and given back when
  // its answer is done (the form is forwarded from memory until then).
  app.addHook('preParsing', (request, reply, payload, done) => {
    if (!isFormContentType(request.headers['content-type'])) return done(null, payload)
    let taken = 0
    const holder = bodyHolder(request)
    reply.raw.once('close', () => budget.release(holder, taken))
    const counted = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        const refusal = budget.take(holder, chunk.length)
        if (refusal === 'holder') {
          return callback(errors.tooManyRequests(formRetryAfterSeconds, 'Your requests in progress hold as many form bytes as one client may; try again when they are done'))
        }
        if (refusal !== null) {
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
