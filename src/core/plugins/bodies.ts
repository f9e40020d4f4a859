// The bodies the core reads (docs/security.md#bodies-and-uploads): urlencoded forms, decoded
// strictly (form-decoding.ts), and multipart uploads where an operation takes one, bounded in
// bytes held and in time (upload-guard.ts). A body whose digest the gateway signed is the
// body that runs.
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { ByteBudget } from '../../common/byte-budget.js'
import type { Config } from '../../common/config.js'
import { errors } from '../../common/errors.js'
import { contextOf, routeOf } from '../routes/context.js'
import { decodeForm } from '../routes/form-decoding.js'
import { tapBodyDigest, verifiedBody } from '../routes/identity-guard.js'
import { FormBody } from '../routes/params.js'
import { guardUpload } from '../routes/upload-guard.js'

export interface BodiesOptions {
  config: Config
}

/** What a refused upload is told to wait before trying again (Retry-After, seconds). */
const uploadRetryAfterSeconds = 5

async function bodies(app: FastifyInstance, { config }: BodiesOptions): Promise<void> {
  const uploads = new ByteBudget(config.core.uploads.bytesInFlight, config.core.uploads.bytesInFlightPerUser)
  const formLimit = app.initialConfig.bodyLimit ?? 1024 * 1024

  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer' }, (request, body, done) => {
    // The gateway reads every form whole and signs its digest: a signed form without one
    // is not a body the gateway verified (docs/security.md#request-edges).
    const ctx = contextOf(request)
    // A form of "the authenticated user" is admitted once its body is read (preValidation):
    // its verified identity waits in pendingIdentity until then, and counts here too.
    if ((ctx.identity ?? ctx.pendingIdentity?.identity) && ctx.bodySha256 === undefined) {
      request.log.warn('signed form without a body digest')
      done(errors.unauthorized('invalid_identity', 'The identity of this request could not be verified'), undefined)
      return
    }
    const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(request.headers['content-type'] ?? '')?.[1]?.toLowerCase()
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8' && charset !== 'us-ascii') {
      done(errors.unsupportedMedia('unsupported_charset', 'Parameters must be UTF-8'), undefined)
      return
    }
    try {
      done(null, new FormBody(decodeForm(body as Buffer)))
    } catch (err) {
      done(err as Error, undefined)
    }
  })
  // A multipart body is read only where an operation takes one (api-route.ts); anywhere
  // else (404, 405) it is left unread.
  app.addContentTypeParser('multipart/form-data', (_request, _payload, done) => done(null))

  app.addHook('preParsing', (request, reply, payload, done) => {
    const ctx = contextOf(request)
    const expected = ctx.bodySha256
    // The multipart parser reads the request itself (and marks it only after this hook).
    if (/^\s*multipart\/form-data/i.test(request.headers['content-type'] ?? '')) {
      // Counted against the upload budget where an operation takes files. Elsewhere it
      // is refused at its first file, and is at most what a form may be: without that
      // bound, a body held open there was read for as long as its client kept sending.
      // Both are cut at the upload deadline.
      const limits = routeOf(request).takesFiles === true ? { budget: uploads } : { maxBytes: formLimit }
      ctx.upload = guardUpload(request, reply, ctx.identity?.user ?? '', { ...limits, timeoutMs: config.core.uploads.timeoutMs, retryAfterSeconds: uploadRetryAfterSeconds })
      if (expected !== undefined) ctx.bodyCheck = tapBodyDigest(payload, expected)
      return done(null, payload)
    }
    if (expected === undefined) return done(null, payload)
    // Only forms are parsed here (anything else is 415 unread): read within the parsers' own limit.
    if (!/^\s*application\/x-www-form-urlencoded/i.test(request.headers['content-type'] ?? '')) return done(null, payload)
    verifiedBody(payload, expected, formLimit).then((body) => done(null, body), done)
  })
}

export default fp(bodies, { name: 'kigo-core-bodies', fastify: '5.x', dependencies: ['kigo-core-identity'] })
