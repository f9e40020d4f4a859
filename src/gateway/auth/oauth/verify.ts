// OAuth 1.0a request verification (RFC 5849 §3.2, docs/gateway.md#oauth-10a), problems reported per the
// OAuth Problem Reporting extension. The pipeline: collect parameters → check them →
// load consumer and token → verify the signature (and oauth_body_hash) → claim the nonce.
import { createHash } from 'node:crypto'
import type { ErrorCode } from '../../../common/errors.js'
import { randomToken, safeEqual } from '../../../common/secrets.js'
import { isoSeconds } from '../../../common/time.js'
import type { ReplayCache } from '../../replay/types.js'
import { livePrevious, signedWithEither, type PreviousSecret } from '../../domain/secret-rotation.js'
import { claimNonce, defaultRetryAfterSeconds, failure, type AuthFailure } from '../../domain/auth-results.js'
import type { AuthRequest, AuthResult, ConsumerEntry, CredentialLookup, CredentialVerifier, Outcome } from '../../domain/auth.js'
import { adviceBodyLimit, adviseOnSignature, baseStringHeader, bodyFields, unsignedBodyKind, type SignatureAdviceOptions } from './advice.js'
import { baseStringUri, signatureBaseString } from './base-string.js'
import { collectOAuthParameters, type OAuthParameters } from './parameters.js'
import { percentEncode } from './percent-encode.js'
import { acceptedSignatureMethod, computeSignature, type SignatureMethod, type SignatureMethodOptions } from './signature.js'

export interface OAuthVerifyOptions extends SignatureMethodOptions {
  /** Accepted distance of oauth_timestamp from the gateway's clock, seconds (default: 300). */
  windowSeconds: number
  /** How a signature_invalid explains itself (advice.ts); the defaults: no extra hosts, no base string. */
  advice?: SignatureAdviceOptions
}

/** A request whose protocol parameters are present and acceptable; not yet verified. */
export interface CheckedOAuthRequest {
  params: OAuthParameters
  signatureMethod: SignatureMethod
  consumerKey: string
  /** '' when the request carries no oauth_token. */
  token: string
  timestamp: number
  nonce: string
}

/** Required on API requests: a resource request always acts for a user (its token). */
export const resourceRequestParameters = [
  'oauth_consumer_key',
  'oauth_token',
  'oauth_signature_method',
  'oauth_signature',
  'oauth_timestamp',
  'oauth_nonce',
] as const

const maxNonceLength = 255

/** A failure whose code is the oauth_problem; `extra` holds the problem's parameters. */
export function oauthFailure(
  status: AuthFailure['status'],
  problem: ErrorCode,
  message: string,
  outcome: Outcome,
  extra?: Record<string, string>,
): AuthFailure {
  return failure('oauth', status, problem, message, outcome, extra === undefined ? {} : { oauthProblem: extra })
}

/**
 * Collects and checks the protocol parameters: placement, presence, version, signature
 * method, timestamp window, and oauth_body_hash placement. Shared with the provider
 * endpoints, which pass their own required parameters.
 */
export function checkOAuthRequest(
  req: AuthRequest,
  opts: OAuthVerifyOptions,
  required: readonly string[] = resourceRequestParameters,
): { ok: true; request: CheckedOAuthRequest } | { ok: false; result: AuthFailure } {
  const collected = collectOAuthParameters(req)
  if (!collected.ok) return { ok: false, result: oauthFailure(400, 'parameter_rejected', collected.message, 'malformed') }
  const params = collected.params
  const p = params.protocol

  const absent = required.filter((name) => !p.get(name))
  if (absent.length > 0) {
    const advice = oneZeroAdvice(absent)
    return {
      ok: false,
      result: oauthFailure(400, 'parameter_absent', `Missing OAuth parameters: ${absent.join(', ')}${advice ? `. ${advice}` : ''}`, 'malformed', {
        oauth_parameters_absent: absent.join('&'),
        ...(advice ? { oauth_problem_advice: advice } : {}),
      }),
    }
  }

  const version = p.get('oauth_version')
  if (version !== undefined && version !== '1.0') {
    return {
      ok: false,
      result: oauthFailure(400, 'version_rejected', 'oauth_version must be 1.0', 'malformed', { oauth_acceptable_versions: '1.0-1.0' }),
    }
  }

  const signatureMethod = acceptedSignatureMethod(p.get('oauth_signature_method') ?? '', req.scheme, opts)
  if (signatureMethod === null) {
    const accepted = ['HMAC-SHA1', ...(opts.hmacSha256 ? ['HMAC-SHA256'] : []), ...(opts.plaintext && req.scheme === 'https' ? ['PLAINTEXT'] : [])]
    return {
      ok: false,
      result: oauthFailure(400, 'signature_method_rejected', `Unsupported oauth_signature_method; use ${accepted.join(' or ')}`, 'malformed'),
    }
  }

  const rawTimestamp = p.get('oauth_timestamp') ?? ''
  let timestamp = NaN
  if (rawTimestamp !== '' && rawTimestamp.length <= 12 && isDigits(rawTimestamp)) timestamp = Number(rawTimestamp)
  if (rawTimestamp !== '' && Number.isNaN(timestamp)) {
    return { ok: false, result: oauthFailure(400, 'parameter_rejected', 'oauth_timestamp must be a whole number of seconds', 'malformed') }
  }
  if (!Number.isNaN(timestamp)) {
    const now = Math.floor(req.now / 1000)
    if (Math.abs(timestamp - now) > opts.windowSeconds) {
      // State the server's time: a client whose clock is off can see by how much.
      const skew = timestamp - now
      const advice = `The server's time is ${isoSeconds(now * 1000)} (${now} seconds since the epoch); your oauth_timestamp is ${Math.abs(skew)} seconds ${skew < 0 ? 'behind' : 'ahead'}. Set your clock (NTP), or use the server's Date header.`
      return {
        ok: false,
        result: oauthFailure(401, 'timestamp_refused', `oauth_timestamp is more than ${opts.windowSeconds} seconds from the server's clock. ${advice}`, 'stale', {
          oauth_acceptable_timestamps: `${now - opts.windowSeconds}-${now + opts.windowSeconds}`,
          oauth_problem_advice: advice,
        }),
      }
    }
  }

  const nonce = p.get('oauth_nonce') ?? ''
  if (nonce.length > maxNonceLength) {
    return { ok: false, result: oauthFailure(400, 'parameter_rejected', `oauth_nonce is longer than ${maxNonceLength} characters`, 'malformed') }
  }

  // oauth_body_hash draft §4.1.1: not used with form-encoded bodies, whose parameters are signed.
  if (params.formBody && p.has('oauth_body_hash')) {
    return { ok: false, result: oauthFailure(400, 'parameter_rejected', 'oauth_body_hash must not be sent with a form-encoded body', 'malformed') }
  }

  return {
    ok: true,
    request: {
      params,
      signatureMethod,
      consumerKey: p.get('oauth_consumer_key') ?? '',
      token: p.get('oauth_token') ?? '',
      timestamp,
      nonce,
    },
  }
}

/**
 * The OAuth 1.0 flow (without "a") sends neither oauth_callback at initiate nor
 * oauth_verifier at the token exchange; RFC 5849 (1.0a) requires both.
 */
function oneZeroAdvice(absent: readonly string[]): string | null {
  if (absent.includes('oauth_verifier')) {
    return 'This looks like the OAuth 1.0 flow: kigo speaks OAuth 1.0a (RFC 5849 §2.3), where the token exchange carries the oauth_verifier the user was shown (oob) or that came to your callback.'
  }
  if (absent.includes('oauth_callback')) {
    return 'This looks like the OAuth 1.0 flow: kigo speaks OAuth 1.0a (RFC 5849 §2.1), where oauth/initiate carries oauth_callback (your callback URL, or oob to show the user a code).'
  }
  return null
}

/** A consumer's secrets as a signature may use them: the current one, and the one a rotation replaced (docs/gateway.md#rotating-a-secret). */
export interface ConsumerSecrets {
  secret: string
  previous?: PreviousSecret
}

/**
 * The signature_invalid failure for a request whose consumer (and token) are known: with
 * oauth_problem_advice naming what the server signed and any mistake recognised, and the
 * base string in a header when the options allow it. A request signed with a replaced
 * consumer secret whose overlap has ended is told so (only its holder can sign with it);
 * while the overlap lasts, the mistakes are looked for under either secret.
 */
export async function signatureFailure(req: AuthRequest, params: OAuthParameters, consumer: ConsumerSecrets, tokenSecret: string, opts: OAuthVerifyOptions): Promise<AuthFailure> {
  const previous = consumer.previous
  if (previous && livePrevious(previous, req.now) === null && verifyOAuthSignature(req, params, previous.secret, tokenSecret)) {
    const advice = `This request is signed with a consumer secret that was replaced; it worked until ${isoSeconds(previous.expiresAt)}. Sign with the application's new consumer secret.`
    return oauthFailure(401, 'signature_invalid', `Invalid oauth_signature. ${advice}`, 'bad_signature', { oauth_problem_advice: advice })
  }
  const kind = unsignedBodyKind(req.contentType)
  let fields: Array<[string, string]> = []
  // The body of a request whose signature failed is read only to explain the failure, and
  // only when it is small: a declared length within adviceBodyLimit, and no
  // oauth_body_hash (whose sender knows the body is not signed). Anything else is refused
  // unread (docs/security.md#bodies-and-uploads).
  if (kind !== null && (req.body !== undefined || (req.readBodyForAdvice && !params.protocol.has('oauth_body_hash') && declaredLength(req) <= adviceBodyLimit))) {
    const body = req.body ?? (await req.readBodyForAdvice!(adviceBodyLimit).catch(() => null))
    if (body) fields = bodyFields(kind, req.contentType!, body)
  }
  const adviceOptions = opts.advice ?? { hosts: [], exposeBaseString: false }
  const live = livePrevious(previous, req.now)
  const current = adviseOnSignature(req, params, consumer.secret, tokenSecret, adviceOptions, fields)
  const underPrevious = live !== null && current.mistakes.length === 0 ? adviseOnSignature(req, params, live.secret, tokenSecret, adviceOptions, fields) : null
  const a = underPrevious !== null && underPrevious.mistakes.length > 0 ? underPrevious : current
  const failed = oauthFailure(401, 'signature_invalid', `Invalid oauth_signature. ${a.advice}`, 'bad_signature', { oauth_problem_advice: a.advice })
  return a.baseString === undefined ? failed : { ...failed, headers: { [baseStringHeader]: a.baseString } }
}

/** The request's Content-Length; Infinity when it has none (a chunked body) or it is not a number. */
function declaredLength(req: AuthRequest): number {
  const raw = req.headers['content-length']
  const text = Array.isArray(raw) ? raw[0] : raw
  return text !== undefined && text !== '' && isDigits(text) ? Number(text) : Infinity
}

function isDigits(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 48 || c > 57) return false
  }
  return true
}

// Stand-ins for an unknown consumer or token, so that the signature is still computed
// and compared: the answer costs the same work either way (docs/gateway.md#oauth-10a).
const dummyConsumerSecret = randomToken(30)
const dummyTokenSecret = randomToken(30)

/**
 * True when the request's oauth_signature is the one computed with these secrets
 * (constant-time comparison), or with `previousConsumerSecret` in place of the consumer
 * secret when one is given (both compared, the base string built once). The signature
 * method must have been accepted already (checkOAuthRequest); any other value fails.
 */
export function verifyOAuthSignature(req: AuthRequest, params: OAuthParameters, consumerSecret: string, tokenSecret: string, previousConsumerSecret?: string): boolean {
  const method = params.protocol.get('oauth_signature_method')
  if (method !== 'HMAC-SHA1' && method !== 'HMAC-SHA256' && method !== 'PLAINTEXT') return false
  const base = method === 'PLAINTEXT' ? '' : signatureBaseString(req.method, baseStringUri(req.scheme, req.host, req.url), params.signed)
  const sent = params.protocol.get('oauth_signature') ?? ''
  // Constant time, and for PLAINTEXT (whose expected value is the secrets themselves)
  // without revealing their length.
  return signedWithEither(sent, (secret) => computeSignature(method, base, secret, tokenSecret), consumerSecret, previousConsumerSecret)
}

/**
 * True when the request is signed with the consumer's secret or, until its expiry at the
 * request's time, with the one a rotation replaced (docs/gateway.md#rotating-a-secret).
 * An unknown consumer (null) is checked against a stand-in, for the same work.
 */
export function verifyConsumerSignature(req: AuthRequest, params: OAuthParameters, consumer: ConsumerSecrets | null, tokenSecret: string): boolean {
  const previous = livePrevious(consumer?.previous, req.now)
  return verifyOAuthSignature(req, params, consumer?.secret ?? dummyConsumerSecret, tokenSecret, previous?.secret)
}

/**
 * oauth_body_hash (draft-eaton-oauth-bodyhash §3.2): when present, Base64 of the body's
 * hash (SHA-256 for HMAC-SHA256, else SHA-1; an absent body hashes as empty).
 */
export function bodyHashMatches(req: AuthRequest, params: OAuthParameters): boolean {
  const sent = params.protocol.get('oauth_body_hash')
  if (sent === undefined) return true
  const actual = createHash(bodyHashAlgorithm(params)).update(req.body ?? Buffer.alloc(0)).digest('base64')
  return safeEqual(sent, actual)
}

/** The hash oauth_body_hash uses: SHA-256 under HMAC-SHA256, else SHA-1 (draft §3.2). */
function bodyHashAlgorithm(params: OAuthParameters): 'sha1' | 'sha256' {
  return params.protocol.get('oauth_signature_method') === 'HMAC-SHA256' ? 'sha256' : 'sha1'
}

/** True when `sent` is the canonical base64 of a digest of `algorithm`'s length. */
function isBase64Digest(sent: string, algorithm: 'sha1' | 'sha256'): boolean {
  const bytes = Buffer.from(sent, 'base64')
  return bytes.length === (algorithm === 'sha1' ? 20 : 32) && bytes.toString('base64') === sent
}

/** The replay-cache key: (consumer key, token, timestamp, nonce), nonce decoded (docs/gateway.md#oauth-10a). */
export function oauthNonceKey(r: CheckedOAuthRequest): string {
  return `oauth:${percentEncode(r.consumerKey)}:${percentEncode(r.token)}:${r.timestamp}:${percentEncode(r.nonce)}`
}


/** Verifies an API request signed with an access token. */
export async function verifyOAuth(
  req: AuthRequest,
  lookup: CredentialLookup,
  replay: ReplayCache,
  opts: OAuthVerifyOptions,
): Promise<AuthResult> {
  const checked = checkOAuthRequest(req, opts)
  return checked.ok ? verifyCheckedOAuth(req, checked.request, lookup, replay, opts) : checked.result
}

/** OAuth 1.0a as a CredentialVerifier: the protocol parameters read and checked, consumer and token loaded through `lookup`, the nonce claimed in `replay`. */
export function oauthVerifier(lookup: CredentialLookup, replay: ReplayCache, opts: OAuthVerifyOptions): CredentialVerifier {
  return {
    method: 'oauth',
    guessable: false,
    read(req) {
      const checked = checkOAuthRequest(req, opts)
      if (!checked.ok) return checked.result
      return { claimedUser: undefined, verify: () => verifyCheckedOAuth(req, checked.request, lookup, replay, opts) }
    },
  }
}

/** Verifies a request whose protocol parameters checkOAuthRequest accepted. */
async function verifyCheckedOAuth(
  req: AuthRequest,
  r: CheckedOAuthRequest,
  lookup: CredentialLookup,
  replay: ReplayCache,
  opts: OAuthVerifyOptions,
): Promise<AuthResult> {
  // Both loads (from the cache, for every client in use) run side by side.
  const [loaded, token] = await Promise.all([lookup.consumer(r.consumerKey), lookup.accessToken(r.token)])
  const matching = (c: ConsumerEntry | null): c is ConsumerEntry => c !== null && token !== null && token.consumerKey === c.key
  let consumer = loaded
  let signatureOk = verifyConsumerSignature(req, r.params, consumer, matching(consumer) ? token!.secret : dummyTokenSecret)
  // The cached consumer may predate a rotation made on another gateway: a failed
  // signature is checked once more against the store (docs/gateway.md#rotating-a-secret).
  if (!signatureOk && matching(consumer) && lookup.freshConsumer) {
    consumer = await lookup.freshConsumer(r.consumerKey)
    signatureOk = matching(consumer) && verifyConsumerSignature(req, r.params, consumer, token!.secret)
  }
  if (consumer === null) return oauthFailure(401, 'consumer_key_unknown', 'Unknown oauth_consumer_key', 'unknown_client')
  if (token === null || !matching(consumer)) return oauthFailure(401, 'token_rejected', 'Unknown oauth_token', 'bad_credentials')
  const attemptedUser = token.userId
  if (!signatureOk) return { ...(await signatureFailure(req, r.params, consumer, token.secret, opts)), attemptedUser }
  // The signature covers oauth_body_hash: only now, the credential proven, is the body's
  // hash looked at. A streamed body is never read here: its hash is checked as it streams
  // to the core, which never acts on a body that does not match (proxy/body-hash-gate.ts).
  const sentBodyHash = r.params.protocol.get('oauth_body_hash')
  if (sentBodyHash !== undefined) {
    const algorithm = bodyHashAlgorithm(r.params)
    const bodyHashFailure = (message: string) => ({ ...oauthFailure(401, 'signature_invalid', message, 'bad_signature'), attemptedUser })
    if (req.body === undefined && req.deferBodyHash) {
      if (!isBase64Digest(sentBodyHash, algorithm)) return bodyHashFailure(`oauth_body_hash must be the base64 ${algorithm === 'sha1' ? 'SHA-1' : 'SHA-256'} of the body`)
      req.deferBodyHash(algorithm, sentBodyHash)
    } else if (!bodyHashMatches(req, r.params)) {
      return bodyHashFailure('oauth_body_hash does not match the body')
    }
  }
  if (token.revoked) return { ...oauthFailure(401, 'token_revoked', 'The access token was revoked', 'bad_credentials'), attemptedUser }

  // A timestamp up to `window` ahead stays acceptable until `window` after it: the claim
  // must outlive both halves (docs/gateway.md#oauth-10a).
  const replayed = await claimNonce(replay, oauthNonceKey(r), 2 * opts.windowSeconds + 1, 'oauth', defaultRetryAfterSeconds, () => ({
    ...oauthFailure(401, 'nonce_used', 'oauth_nonce was already used', 'replay'),
    attemptedUser,
  }), `oauth:${percentEncode(r.consumerKey)}:${percentEncode(r.token)}`)
  if (replayed !== null) return replayed

  return {
    kind: 'ok',
    principal: {
      userId: token.userId,
      userName: token.userName,
      method: 'oauth',
      consumerKey: consumer.key,
      scopes: token.scopes,
    },
  }
}
