// Authentication by a route's rules (docs/gateway.md#which-credentials-each-operation-accepts): the request in the verifiers' terms, the
// decision within the dependencies' deadline, its metrics and usage counts, and the
// decision recorded on the request for its log line.
import { createHash } from 'node:crypto'
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Config } from '../../common/config.js'
import { classifyFailure, errors, failureResponse, type FailureWording } from '../../common/errors.js'
import { withDeadline } from '../../common/deadline.js'
import type { AppTracing } from '../../common/tracing.js'
import { createAuthenticator, type AuthDecision, type BearerAuthenticator } from '../auth/authenticate.js'
import { readStreamedBody } from '../auth/read-body.js'
import { bodyHolder } from './body-parsers.js'
import type { AuthRequest, CredentialLookup } from '../domain/auth.js'
import type { BodyHash } from '../proxy/body-hash-gate.js'
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
    /** The oauth_body_hash a streamed body must match (checked as it streams to the core); null otherwise. */
    bodyHash: BodyHash | null
  }
  interface FastifyInstance {
    /**
     * Authenticates a request by a route's rules (docs/gateway.md#which-credentials-each-operation-accepts)
     * and records the decision: at once when the credentials alone decide (none on an
     * anonymous route, two kinds…), through a promise when one must be verified.
     */
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
  /** Migration policy for verified legacy requests (docs/gateway.md#the-migration-policy). */
  policy?: LegacyPolicyCheck
  /** Usage report and per-minute counts (docs/gateway.md#the-usage-report, docs/gateway.md#the-operator-api-and-dashboard). */
  usage?: Pick<UsageRecorder, 'observe'>
  /** Verification as a span (docs/operations.md#traces), when tracing is on. */
  tracing?: Pick<AppTracing, 'step'>
  /** OAuth 2.0 access tokens on the API (docs/oauth2.md#calling-the-api). */
  bearer?: BearerAuthenticator
}

/**
 * The request as the verifiers see it: public host and scheme, the raw form body. With
 * `streamedBodyHash`, a streamed body's oauth_body_hash is handed over once the signature
 * verified, and checked as the body streams to the core (proxy/body-hash-gate.ts).
 */
export function toAuthRequest(request: FastifyRequest, origin: PublicOrigin, now: number, streamedBodyHash = false): AuthRequest {
  const streamed = streamedBodyHash && request.method !== 'GET' && request.method !== 'HEAD' && isStream(request.body)
  return {
    method: request.method,
    url: request.url,
    host: origin.host,
    scheme: origin.scheme,
    headers: request.headers,
    contentType: request.headers['content-type'],
    body: Buffer.isBuffer(request.body) ? request.body : undefined,
    ...(streamed ? { deferBodyHash: (algorithm: BodyHash['algorithm'], expected: string) => void (request.bodyHash = { algorithm, expected }) } : {}),
    now,
    readBodyForAdvice: (limit) => readForAdvice(request, limit),
  }
}

/**
 * A failed signature's body, read to explain the failure (verify.ts asks only for one
 * declared within `limit`): its bytes are taken from the gateway's body budget while
 * read, and nothing is read when the budget cannot hold them.
 */
function readForAdvice(request: FastifyRequest, limit: number): Promise<Buffer | null> {
  const budget = (request.server as Partial<Pick<FastifyInstance, 'bodyBudget'>>).bodyBudget
  const declared = Math.min(Number(request.headers['content-length']) || limit, limit)
  if (budget === undefined) return readStreamedBody(request.body, limit)
  const holder = bodyHolder(request)
  if (budget.take(holder, declared) !== null) return Promise.resolve(null)
  return readStreamedBody(request.body, limit).finally(() => budget.release(holder, declared))
}

function isStream(body: unknown): body is NodeJS.ReadableStream {
  return typeof body === 'object' && body !== null && typeof (body as NodeJS.ReadableStream).pipe === 'function'
}

/**
 * The digest the core is told the body has (docs/security.md#bodies-and-uploads):
 * base64url SHA-256 of a form the
 * gateway read, or the client's oauth_body_hash of a streamed body (base64url, prefixed
 * `sha1:` for SHA-1); '' when nothing vouches for the body.
 */
export function bodyDigest(request: FastifyRequest): string {
  if (Buffer.isBuffer(request.body)) return createHash('sha256').update(request.body).digest('base64url')
  const hash = request.bodyHash
  if (hash === null) return ''
  const value = Buffer.from(hash.expected, 'base64').toString('base64url')
  return hash.algorithm === 'sha1' ? `sha1:${value}` : value
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

/** A verification that could not finish, as the classifier reads it. */
const verificationWording: FailureWording = {
  unavailable: () => errors.unavailable('store_unavailable', 'Credentials cannot be checked right now; try again shortly'),
  internalMessage: 'Internal error',
}

async function authentication(app: FastifyInstance, deps: AuthenticationOptions): Promise<void> {
  const { config, metrics } = deps
  const now = deps.now ?? Date.now
  const authenticator = createAuthenticator({ auth: config.auth, lookup: deps.lookup, replay: deps.replay, throttle: deps.throttle, ...(deps.policy ? { policy: deps.policy } : {}), ...(deps.bearer ? { bearer: deps.bearer } : {}), publicHosts: [config.domesticHost, config.globalHost] })

  app.decorateRequest('bodyHash', null)

  /**
   * Records `decision` on the request, in the usage counts and, for a credential that was
   * verified (`started`: when verification began), in the authentication histogram: a
   * decision the credentials alone made took no time worth a histogram's observation.
   */
  const record = (request: FastifyRequest, authReq: AuthRequest, started: bigint | null, decision: AuthDecision): AuthDecision => {
    if (started !== null) metrics.authDuration.series(decision.method).observe(Number(process.hrtime.bigint() - started) / 1e9)
    // Usage (docs/gateway.md#the-usage-report): counted in memory here, written to the store in batches elsewhere.
    // With the request's deployment: a migration notice links to the deployment its recipient uses.
    deps.usage?.observe(decision, () => clientName(authReq), authReq.now, request.routeName ?? undefined, app.deploymentOf(request)?.name)
    request.auth = decision
    return decision
  }

  /**
   * Authenticates `request` by `route`'s rules and records the decision on it (for the
   * request log and metrics). Plugins that serve routes of their own (the OAuth provider,
   * the user-information API) use it through `app.gatewayAuth`.
   */
  app.decorate('gatewayAuth', (request: FastifyRequest, route: RoutePolicy): AuthDecision | Promise<AuthDecision> => {
    request.routeName = route.name
    const origin = app.publicOrigin(request)
    const authReq = toAuthRequest(request, origin, now(), true)
    // Node keeps the first of two Authorization headers and joins two X-WSSE: the
    // verifier and the core could each see another credential. Counted on the raw headers.
    const repeated = repeatedCredentialHeader(request.raw.rawHeaders)
    if (repeated !== null) {
      return record(request, authReq, null, { ok: false, method: 'none', outcome: 'malformed', error: errors.badRequest('multiple_credentials', `Send one ${repeated} header, not several`) })
    }
    // The span says how and with what outcome, never what credential.
    const spanAttributes = (d: AuthDecision) => ({ 'kigo.auth.method': d.method, 'kigo.auth.outcome': d.outcome })
    // What the credentials alone decide (an anonymous request above all) is decided here
    // and now: no deadline, no promise, nothing timed.
    const method = authenticator.triage(authReq, route)
    if (typeof method !== 'string') {
      if (!deps.tracing) return record(request, authReq, null, method)
      return deps.tracing.step(request, 'kigo.authenticate', () => Promise.resolve(record(request, authReq, null, method)), spanAttributes)
    }
    const started = process.hrtime.bigint()
    // The whole of verification (credential lookup, nonce claim, throttle counts) is
    // bounded: a dependency that never answers costs at most requestDeadlineMs.
    const decide = () => withDeadline(authenticator.verify(method, authReq, route, origin.ip), config.dependencies.requestDeadlineMs, 'authentication').then(
      (decision) => record(request, authReq, started, decision),
      (err: Error) => {
        // The identity store (or another dependency of verification) failed or did not answer
        // in time: docs/operations.md#dependability says 503, counted (outcome "unavailable"), and recovery without
        // restart (nothing here is cached on failure). The outage itself is logged once, where
        // it starts and ends (dependency-watch.ts); each request's line says "unavailable".
        // Anything else thrown here is kigo's own fault: a 500, logged with its stack.
        const error = failureResponse(err, verificationWording)
        if (classifyFailure(err).kind === 'fault') request.log.error({ err }, 'authentication failed')
        else request.log.debug({ err: { message: err.message, name: err.name } }, 'authentication dependency failed')
        return record(request, authReq, started, { ok: false, method: 'none', outcome: 'unavailable', error })
      },
    )
    return deps.tracing ? deps.tracing.step(request, 'kigo.authenticate', decide, spanAttributes) : decide()
  })
}

export default fp(authentication, { name: 'kigo-authentication', fastify: '5.x', dependencies: ['kigo-origin', 'kigo-request-log'] })
