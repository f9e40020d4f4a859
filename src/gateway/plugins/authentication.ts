// Authentication by a route's rules (SPEC §4.1): the request in the verifiers' terms, the
// decision within the dependencies' deadline, its metrics and usage counts, and the
// decision recorded on the request for its log line.
import { createHash } from 'node:crypto'
import { Readable } from 'node:stream'
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Config } from '../../common/config.js'
import { errors } from '../../common/errors.js'
import { withDeadline } from '../../common/deadline.js'
import { createAuthenticator, type AuthDecision } from '../auth/authenticate.js'
import { readStreamedBody } from '../auth/read-body.js'
import type { AuthRequest, CredentialLookup } from '../domain/auth.js'
import type { GatewayMetrics } from '../metrics/metrics.js'
import type { LegacyPolicyCheck } from '../policy/service.js'
import type { ReplayCache } from '../replay/types.js'
import type { RoutePolicy } from '../domain/routes.js'
import type { AttemptThrottle } from '../throttle/attempts.js'
import { clientName } from '../usage/client-name.js'
import type { UsageRecorder } from '../usage/recorder.js'
import type { PublicOrigin } from './origin.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** A streamed body read whole to check oauth_body_hash (its digest is signed for the core); null otherwise. */
    verifiedBody: Buffer | null
  }
  interface FastifyInstance {
    /** Authenticates a request by a route's rules (SPEC §4.1) and records the decision. */
    gatewayAuth(request: FastifyRequest, route: RoutePolicy): AuthDecision | Promise<AuthDecision>
  }
}

export interface AuthenticationOptions {
  config: Config
  lookup: CredentialLookup
  replay: { oauth: ReplayCache; wsse: ReplayCache }
  throttle: AttemptThrottle
  metrics: GatewayMetrics
  now?: () => number
  /** Migration policy for verified legacy requests (SPEC §6.1). */
  policy?: LegacyPolicyCheck
  /** Usage report and per-minute counts (SPEC §6.3, §6.4). */
  usage?: Pick<UsageRecorder, 'observe'>
}

/** The request as the verifiers see it: public host and scheme, the raw form body. */
export function toAuthRequest(request: FastifyRequest, origin: PublicOrigin, now: number, hashedBodyLimit = 0): AuthRequest {
  return {
    method: request.method,
    url: request.url,
    host: origin.host,
    scheme: origin.scheme,
    headers: request.headers,
    contentType: request.headers['content-type'],
    body: Buffer.isBuffer(request.body) ? request.body : undefined,
    ...(hashedBodyLimit > 0 ? { readBody: () => readWhole(request, hashedBodyLimit) } : {}),
    now,
    readBodyForAdvice: (limit) => readStreamedBody(request.body, limit),
  }
}

/** SHA-256 (base64url) of the body the gateway read whole (a form, or one under oauth_body_hash); '' when streamed. */
export function bodyDigest(request: FastifyRequest): string {
  const read = Buffer.isBuffer(request.body) ? request.body : request.verifiedBody
  return read === null ? '' : createHash('sha256').update(read).digest('base64url')
}

/**
 * Reads a streamed body whole (at most `limit` bytes; null past it, the rest left for
 * Node to discard), and hands it on as a stream of the same bytes, so that the core
 * receives exactly what the gateway verified.
 */
function readWhole(request: FastifyRequest, limit: number): Promise<Buffer | null> {
  const body = request.body as NodeJS.ReadableStream | Buffer | undefined | null
  if (body === undefined || body === null) return Promise.resolve(Buffer.alloc(0))
  if (Buffer.isBuffer(body)) return Promise.resolve(body)
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size <= limit) return void chunks.push(chunk)
      body.removeListener('data', onData)
      body.removeListener('end', onEnd)
      body.pause()
      resolve(null)
    }
    const onEnd = () => {
      const whole = Buffer.concat(chunks)
      request.verifiedBody = whole
      request.body = Readable.from([whole])
      resolve(whole)
    }
    body.on('data', onData)
    body.once('end', onEnd)
    body.once('error', reject)
  })
}

/** The credential header sent more than once (`Authorization` or `X-WSSE`), else null. */
export function repeatedCredentialHeader(rawHeaders: string[]): string | null {
  let authorization = 0
  let wsse = 0
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!
    if (name.length === 13 && name.toLowerCase() === 'authorization') authorization++
    else if (name.length === 6 && name.toLowerCase() === 'x-wsse') wsse++
  }
  return authorization > 1 ? 'Authorization' : wsse > 1 ? 'X-WSSE' : null
}

async function authentication(app: FastifyInstance, deps: AuthenticationOptions): Promise<void> {
  const { config, metrics } = deps
  const now = deps.now ?? Date.now
  const authenticator = createAuthenticator({ auth: config.auth, lookup: deps.lookup, replay: deps.replay, throttle: deps.throttle, ...(deps.policy ? { policy: deps.policy } : {}), publicHosts: [config.domesticHost, config.globalHost] })

  app.decorateRequest('verifiedBody', null)

  /**
   * Authenticates `request` by `route`'s rules and records the decision on it (for the
   * request log and metrics). Plugins that serve routes of their own (the OAuth provider,
   * the user-information API) use it through `app.gatewayAuth`.
   */
  /** Records `decision` on the request, in the metrics and in the usage counts, and returns it. */
  const record = (request: FastifyRequest, authReq: AuthRequest, started: bigint, decision: AuthDecision): AuthDecision => {
    metrics.authDuration.series(decision.method).observe(Number(process.hrtime.bigint() - started) / 1e9)
    // Usage (SPEC §6.3): counted in memory here, written to the store in batches elsewhere.
    deps.usage?.observe(decision, () => clientName(authReq), authReq.now)
    request.auth = decision
    return decision
  }

  /**
   * Authenticates `request` by `route`'s rules and records the decision on it (for the
   * request log and metrics). Plugins that serve routes of their own (the OAuth provider,
   * the user-information API) use it through `app.gatewayAuth`. A request with nothing to
   * wait for (no credential, one refused unread, a Basic credential known in memory: see
   * Authenticator.decideNow) is decided at once, without a promise; the caller awaits the
   * result either way.
   */
  app.decorate('gatewayAuth', (request: FastifyRequest, route: RoutePolicy): AuthDecision | Promise<AuthDecision> => {
    request.routeName = route.name
    const origin = app.publicOrigin(request)
    const authReq = toAuthRequest(request, origin, now(), config.gateway.hashedBodyLimitBytes)
    const started = process.hrtime.bigint()
    // Node keeps the first of two Authorization headers and joins two X-WSSE: the
    // verifier and the core could each see another credential. Counted on the raw headers.
    const repeated = repeatedCredentialHeader(request.raw.rawHeaders)
    if (repeated !== null) {
      return record(request, authReq, started, { ok: false, method: 'none', outcome: 'malformed', error: errors.badRequest('multiple_credentials', `Send one ${repeated} header, not several`) })
    }
    const decided = authenticator.decideNow(authReq, route, origin.ip)
    if (decided !== null) return record(request, authReq, started, decided)
    // The whole of verification (credential lookup, nonce claim, throttle counts) is
    // bounded: a dependency that never answers costs at most requestDeadlineMs.
    return withDeadline(authenticator.authenticate(authReq, route, origin.ip), config.dependencies.requestDeadlineMs, 'authentication').then(
      (decision) => record(request, authReq, started, decision),
      (err: Error) => {
        // The identity store (or another dependency of verification) failed or did not answer
        // in time: SPEC §7 says 503, counted (outcome "unavailable"), and recovery without
        // restart (nothing here is cached on failure). The outage itself is logged once, where
        // it starts and ends (dependency-watch.ts); each request's line says "unavailable".
        request.log.debug({ err: { message: err.message, name: err.name } }, 'authentication dependency failed')
        return record(request, authReq, started, { ok: false, method: 'none', outcome: 'unavailable', error: errors.unavailable('store_unavailable', 'Credentials cannot be checked right now; try again shortly') })
      },
    )
  })
}

export default fp(authentication, { name: 'kigo-authentication', fastify: '5.x', dependencies: ['kigo-origin', 'kigo-request-log'] })
