// Request bodies on the public port: urlencoded forms are read whole (their parameters are
// signed, RFC 5849 §3.4.1.3.1, and forwarded as read); everything else (multipart uploads,
// JSON, bytes) is passed on as a stream, never buffered here. A body covered by
// oauth_body_hash is read whole during verification, once its consumer and token are known.
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'

/** The largest form the gateway reads whole. */
const formBodyLimit = 1024 * 1024

async function bodyParsers(app: FastifyInstance): Promise<void> {
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer', bodyLimit: formBodyLimit }, (_req, body, done) => done(null, body))
  app.addContentTypeParser('*', (_req, payload, done) => done(null, payload))
}

export default fp(bodyParsers, { name: 'kigo-body-parsers', fastify: '5.x' })
