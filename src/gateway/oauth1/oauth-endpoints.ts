// The token endpoints of the OAuth 1.0a provider (RFC 5849 §2.1, §2.3; docs/gateway.md#the-oauth-provider-and-the-account-pages):
// `POST /oauth/initiate` issues a request token to a consumer, `POST /oauth/token`
// exchanges an approved request token and its verifier for an access token. Both verify
// like the resource verifier (verify.ts): collect and check the protocol parameters,
// load the secrets (an unknown consumer or token costs the same work), verify the
// signature, then claim the nonce.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { errors } from '../../common/errors.js'
import { randomToken } from '../../common/secrets.js'
import { percentEncode } from '../auth/oauth/percent-encode.js'
import { bodyHashMatches, checkOAuthRequest, oauthFailure, oauthNonceKey, signatureFailure, verifyConsumerSignature, type CheckedOAuthRequest } from '../auth/oauth/verify.js'
import { claimNonce, defaultRetryAfterSeconds } from '../domain/auth-results.js'
import type { AuthRequest } from '../domain/auth.js'
import { sendError } from '../../common/api-errors.js'
import { checkOAuthCallback } from './callback.js'
import type { ProviderContext } from './provider-context.js'
import { authRequestOf, problem, problemError } from './oauth-request.js'
import { scopesBeyondRegistration } from '../store/validation.js'
import { parseScopeParameter } from '../domain/scopes.js'

const common = ['oauth_consumer_key', 'oauth_signature_method', 'oauth_signature', 'oauth_timestamp', 'oauth_nonce'] as const
/** §2.1: signed with the client credentials only; the callback is required in 1.0a. */
export const initiateParameters = [...common, 'oauth_callback'] as const
/** §2.3: signed with the request token; the verifier proves the user's approval. */
export const tokenParameters = [...common, 'oauth_token', 'oauth_verifier'] as const

// A stand-in for an unknown token's secret, so that the signature is computed either way
// (docs/gateway.md#oauth-10a; verifyConsumerSignature stands in for an unknown consumer).
const dummyTokenSecret = randomToken(30)

/** A form-encoded answer (RFC 5849 §2.1, §2.3), never cached (it carries secrets). */
function sendCredentials(reply: FastifyReply, values: Record<string, string>): FastifyReply {
  const body = Object.entries(values).map(([k, v]) => `${percentEncode(k)}=${percentEncode(v)}`).join('&')
  return reply.code(200).header('cache-control', 'no-store').header('pragma', 'no-cache').type('application/x-www-form-urlencoded').send(body)
}

/** The non-protocol parameter `name` from the query or the form body (both are signed); null when absent. */
function signedParameter(r: CheckedOAuthRequest, name: string): { value: string | null; repeated: boolean } {
  const values = r.params.signed.filter(([n]) => n === name).map(([, v]) => v)
  return { value: values[0] ?? null, repeated: values.length > 1 }
}

export function registerOAuthEndpoints(app: FastifyInstance, ctx: ProviderContext): void {
  const { store, realm } = ctx

  /** Claims the nonce of a verified request (docs/gateway.md#oauth-10a: only after the signature verified). */
  const claim = async (r: CheckedOAuthRequest): Promise<void> => {
    const window = ctx.verifyOptions.windowSeconds
    const failed = await claimNonce(ctx.replay, oauthNonceKey(r), 2 * window + 1, 'oauth', defaultRetryAfterSeconds, () =>
      oauthFailure(401, 'nonce_used', 'oauth_nonce was already used', 'replay'),
    )
    if (failed) throw problemError(realm, failed)
  }

  const check = (req: AuthRequest, required: readonly string[]): CheckedOAuthRequest => {
    const checked = checkOAuthRequest(req, ctx.verifyOptions, required)
    if (!checked.ok) throw problemError(realm, checked.result)
    return checked.request
  }

  const initiate = async (request: FastifyRequest, reply: FastifyReply) => {
    request.routeName = 'oauth/initiate'
    const req = authRequestOf(app, request, ctx.now())
    const r = check(req, initiateParameters)
    // Some clients send an empty oauth_token here; only a real token is out of place.
    if (r.token !== '') {
      throw problem(realm, 400, 'parameter_rejected', 'oauth/initiate is signed with the consumer credentials only; send no oauth_token', { oauth_parameters_rejected: 'oauth_token' })
    }
    const found = await store.getConsumer(r.consumerKey)
    // The consumer secret, or the one a rotation replaced while it still works (docs/gateway.md#rotating-a-secret).
    const signatureOk = verifyConsumerSignature(req, r.params, found, '')
    if (found === null) throw problem(realm, 401, 'consumer_key_unknown', 'Unknown oauth_consumer_key')
    if (!signatureOk) throw problemError(realm, await signatureFailure(req, r.params, found, '', ctx.verifyOptions))
    if (!bodyHashMatches(req, r.params)) throw problem(realm, 401, 'signature_invalid', 'oauth_body_hash does not match the body')
    await claim(r)

    const consumer = found.consumer
    const callback = checkOAuthCallback(r.params.protocol.get('oauth_callback')!, consumer.callbackUrl)
    if (!callback.ok) throw problem(realm, 400, 'parameter_rejected', callback.message, { oauth_parameters_rejected: 'oauth_callback' })

    // Without `scope` the client asks for everything its application registered.
    const scope = signedParameter(r, 'scope')
    let scopes = consumer.scopes
    if (scope.repeated) throw problem(realm, 400, 'parameter_rejected', 'scope is repeated; send one comma-separated list', { oauth_parameters_rejected: 'scope' })
    if (scope.value !== null) {
      const parsed = parseScopeParameter(scope.value)
      if (!parsed.ok) throw problem(realm, 400, 'parameter_rejected', parsed.message, { oauth_parameters_rejected: 'scope' })
      const beyond = scopesBeyondRegistration(parsed.scopes, consumer.scopes)
      if (beyond !== null) throw problem(realm, 400, 'parameter_rejected', `The application is ${beyond}`, { oauth_parameters_rejected: 'scope' })
      scopes = parsed.scopes
    }

    const now = ctx.now()
    const { requestToken, secret } = await store.createRequestToken({
      consumerKey: consumer.key,
      callback: callback.callback,
      scopes,
      now: new Date(now),
      expiresAt: new Date(now + ctx.requestTokenTtlSeconds * 1000),
    })
    return sendCredentials(reply, { oauth_token: requestToken.token, oauth_token_secret: secret, oauth_callback_confirmed: 'true' })
  }

  const token = async (request: FastifyRequest, reply: FastifyReply) => {
    request.routeName = 'oauth/token'
    const req = authRequestOf(app, request, ctx.now())
    const r = check(req, tokenParameters)
    const [found, pending] = await Promise.all([store.getConsumer(r.consumerKey), store.getRequestToken(r.token)])
    const tokenMatches = found !== null && pending !== null && pending.requestToken.consumerKey === found.consumer.key
    const signatureOk = verifyConsumerSignature(req, r.params, found, tokenMatches ? pending.secret : dummyTokenSecret)
    if (found === null) throw problem(realm, 401, 'consumer_key_unknown', 'Unknown oauth_consumer_key')
    if (!tokenMatches) throw problem(realm, 401, 'token_rejected', 'Unknown oauth_token')
    if (!signatureOk) throw problemError(realm, await signatureFailure(req, r.params, found, pending.secret, ctx.verifyOptions))
    if (!bodyHashMatches(req, r.params)) throw problem(realm, 401, 'signature_invalid', 'oauth_body_hash does not match the body')
    await claim(r)

    const result = await store.exchangeRequestToken(r.token, r.params.protocol.get('oauth_verifier')!, new Date(ctx.now()))
    if (!result.ok) {
      switch (result.reason) {
        case 'expired':
          throw problem(realm, 401, 'token_expired', 'The request token expired; start again at oauth/initiate')
        case 'used':
          throw problem(realm, 401, 'token_rejected', 'The request token was already exchanged; a request token and its verifier are good once')
        case 'denied':
          throw problem(realm, 401, 'permission_denied', 'The user denied the application access')
        case 'pending':
          throw problem(realm, 401, 'permission_unknown', 'The user has not authorized the request token yet')
        case 'verifier_mismatch':
          throw problem(realm, 401, 'parameter_rejected', 'oauth_verifier does not match the request token', { oauth_parameters_rejected: 'oauth_verifier' })
        default:
          throw problem(realm, 401, 'token_rejected', 'Unknown oauth_token')
      }
    }
    return sendCredentials(reply, { oauth_token: result.token.token, oauth_token_secret: result.secret })
  }

  const onlyPost = async (request: FastifyRequest, reply: FastifyReply) => sendError(request, reply, errors.methodNotAllowed(['POST']))

  for (const [url, handler] of [
    ['/oauth/initiate', initiate],
    ['/oauth/token', token],
  ] as const) {
    app.post(url, handler)
    app.route({ method: ['GET', 'HEAD', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'], url, handler: onlyPost })
  }
}
