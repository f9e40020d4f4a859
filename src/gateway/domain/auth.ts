// The authentication pipeline shared by every method (Kong's model): parse the
// credential, load the secret through a cache, verify, and return a result. Exactly one
// place (the gateway's auth hook) turns a result into a response or a principal.
import type { ErrorCode } from '../../common/errors.js'
import type { AuthMethod } from '../../common/identity.js'
import type { Scope } from './identifiers.js'
import type { PreviousSecret } from './secret-rotation.js'

export interface Principal {
  userId: string
  userName: string
  method: AuthMethod
  /** OAuth consumer key; '' for Basic and WSSE. */
  consumerKey: string
  /** OAuth token scopes; [] for Basic and WSSE (they are not scoped). */
  scopes: Scope[]
  /** WSSE: which nonce convention verified ('base64' raw bytes, or 'literal' text). */
  wsseNonceStyle?: 'base64' | 'literal'
}

/** Closed set of outcomes (docs/gateway.md#metrics metric label). */
export type Outcome =
  | 'ok'
  | 'bad_credentials'
  | 'bad_signature'
  | 'replay'
  | 'stale'
  | 'unknown_client'
  | 'scope_denied'
  | 'policy_denied'
  | 'throttled'
  | 'malformed'
  | 'unavailable'
  /** An OAuth header naming no token on a route open to anonymous reads, answered as anonymous. */
  | 'ignored_credentials'

export type AuthResult =
  | { kind: 'ok'; principal: Principal }
  | {
      kind: 'fail'
      method: AuthMethod
      status: 400 | 401 | 403 | 413 | 429 | 503
      /** Error code for the body (docs/api.md#errors); for OAuth, the oauth_problem. */
      code: ErrorCode
      message: string
      outcome: Outcome
      /** OAuth Problem Reporting extras, e.g. oauth_parameters_absent, oauth_acceptable_timestamps. */
      oauthProblem?: Record<string, string>
      /** The user the failed attempt named, when known (throttling per user). */
      attemptedUser?: string
      retryAfterSeconds?: number
      /** Further response headers (the signature base string, when enabled). */
      headers?: Record<string, string>
    }

/** A user's API password, as Basic and WSSE need it. */
export interface ApiPasswordEntry { userId: string; userName: string; apiPassword: string }
/** An OAuth consumer and its secret, with the one a rotation replaced while it is kept (it may have expired: the verifier checks). */
export interface ConsumerEntry { key: string; name: string; secret: string; scopes: Scope[]; previous?: PreviousSecret }
/** An access token, its secret, and the user it acts for. */
export interface TokenEntry {
  token: string
  secret: string
  consumerKey: string
  userId: string
  userName: string
  scopes: Scope[]
  revoked: boolean
}

/** Where verifiers load secrets from (the identity store behind an in-memory cache). */
export interface CredentialLookup {
  apiPassword(userId: string): Promise<ApiPasswordEntry | null>
  consumer(key: string): Promise<ConsumerEntry | null>
  accessToken(token: string): Promise<TokenEntry | null>
  /**
   * The consumer read from the store past any cache, when there is one: a signature that
   * fails against a cached entry is checked once more against this, so that a secret
   * rotated on another gateway works here at once (docs/gateway.md#rotating-a-secret).
   */
  freshConsumer?(key: string): Promise<ConsumerEntry | null>
}

/**
 * One authentication method's pipeline, the same for WSSE, Basic and OAuth (Kong's
 * `access`, Oathkeeper's `Authenticate`): read the credential from the request, then
 * load its secret through the cache, verify it and return a principal or a typed
 * failure. Reading comes apart from the rest so that the user a guessable credential
 * claims can be throttled before anything is verified (docs/operations.md#throttling).
 */
export interface CredentialVerifier {
  readonly method: AuthMethod
  /**
   * A secret a person chose (Basic, WSSE): attempts are throttled and failures counted.
   * An OAuth signature proves a random secret and is never throttled.
   */
  readonly guessable: boolean
  /** The request's credential, or the failure a missing or malformed one gets. */
  read(req: AuthRequest): ReadCredential | AuthFailure
}

/** A credential read from a request, not yet verified. */
export interface ReadCredential {
  /** The user the credential names (what throttling counts); undefined when it names none before verification (OAuth). */
  claimedUser: string | undefined
  /** Loads the secret through the cache, verifies, and claims the nonce where there is one. */
  verify(): Promise<AuthResult>
}

export type AuthFailure = Extract<AuthResult, { kind: 'fail' }>

/** The request as a verifier sees it: nothing framework-specific. */
export interface AuthRequest {
  method: string
  /** Path and query exactly as received on the request line. */
  url: string
  /** Lower-cased host[:port] as the client addressed it (public host, after trusted-proxy handling). */
  host: string
  /** Public scheme (config, or a trusted proxy's X-Forwarded-Proto). */
  scheme: 'http' | 'https'
  headers: Record<string, string | string[] | undefined>
  contentType: string | undefined
  /**
   * The raw body when it is application/x-www-form-urlencoded (its parameters are signed,
   * RFC 5849 §3.4.1.3.1); undefined otherwise (other bodies are streamed, never read).
   */
  body: Buffer | undefined
  /**
   * Present when the body is streamed to the core: hands over the oauth_body_hash of a
   * request whose signature verified, to be checked as the body streams
   * (proxy/body-hash-gate.ts). Absent: the hash is checked against `body` (none: empty).
   */
  deferBodyHash?: (algorithm: 'sha1' | 'sha256', expected: string) => void
  now: number
  /**
   * Reads a streamed (JSON or multipart) body, up to `limit` bytes (null beyond), only to
   * explain a failed signature; the request is refused afterwards. Used only for a body
   * whose declared length is at most that limit (verify.ts, signatureFailure).
   */
  readBodyForAdvice?: (limit: number) => Promise<Buffer | null>
}
