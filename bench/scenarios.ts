// The benchmark's scenarios (docs/performance.md#how-it-measures) and the requests each one sends. Every request is
// built in full before the timed window (path, headers, body; signed ones with their own
// nonce and timestamp), so that the load generator does the same work per request in
// every scenario.
import { randomBytes } from 'node:crypto'
import { identityKey, signIdentity, type Identity } from '../src/common/identity.js'
import { basicAuthorization, oauthAuthorization, percentEncode, wsseHeader, type OAuthCredentials } from './signing.js'

/** The whole system (docs/performance.md#the-groups-and-their-keys): core, bare proxy and gateway on PostgreSQL and Redis. */
export const scenarioNames = [
  'core_direct',
  'bare_proxy',
  'gateway_anonymous',
  'gateway_oauth',
  'gateway_basic',
  'gateway_wsse',
  'gateway_update_oauth',
  // Issue 14: a page of the public timeline (count=20) from a store of 100,000 entries
  // or more, beside statuses/show (gateway_anonymous, gateway_oauth).
  'gateway_public_timeline',
  'gateway_public_timeline_oauth',
] as const

export type ScenarioName = (typeof scenarioNames)[number]

/** The two fixed-rate runs (docs/performance.md#how-it-measures latency budget) and what they measure. */
export const fixedRateNames = ['core_direct_fixed_rate', 'gateway_oauth_fixed_rate'] as const
export type FixedRateName = (typeof fixedRateNames)[number]

/**
 * The gateway alone (group `gateway_alone` of docs/performance.md#the-groups-and-their-keys): each front process in front of the fixed upstream
 * (fixed-upstream.ts), and the upstream itself. `alone_nginx` runs only when nginx is
 * installed. `alone_required_*`: the same requests through required-work-proxy.ts, the
 * bare proxy plus only the work authentication requires. Every gateway measured has served
 * OpenID Connect discovery and a sign-in first, as one in production has (oidc-sign-in.ts),
 * except the one of `alone_anonymous_no_oidc`, which never has: what serving it costs later requests.
 */
export const aloneNames = [
  'alone_upstream_direct',
  'alone_undici_proxy',
  'alone_bare_proxy',
  'alone_nginx',
  'alone_anonymous',
  'alone_anonymous_no_oidc',
  'alone_basic',
  'alone_wsse',
  'alone_oauth',
  'alone_oauth2',
  'alone_required_anonymous',
  'alone_required_basic',
  'alone_required_wsse',
  'alone_required_oauth',
  'alone_required_oauth2',
] as const
export type AloneName = (typeof aloneNames)[number]

/**
 * The core against its anchor (anchor.ts): statuses/show, the same query and bytes.
 * `core_required_show` and `core_required_show_identified`: the anchor with the checks
 * the core cannot skip, anonymous and with a signed identity, the floors.
 */
export const coreNames = ['core_anchor_show', 'core_required_show', 'core_required_show_identified', 'core_show', 'core_show_identified'] as const
export type CoreName = (typeof coreNames)[number]

/** The latency runs: at half the bare proxy's saturation rate, gateway alone. */
/** `latency_required_oauth`: the required-work proxy's OAuth, the floor of the OAuth ratio. */
export const latencyNames = ['latency_bare_proxy', 'latency_anonymous', 'latency_basic', 'latency_wsse', 'latency_oauth', 'latency_required_oauth'] as const
export type LatencyName = (typeof latencyNames)[number]

export type AnyScenario = ScenarioName | FixedRateName | AloneName | CoreName | LatencyName

export type Target = 'core' | 'bare' | 'gateway' | 'upstream' | 'undici' | 'alone_bare' | 'nginx' | 'alone_gateway' | 'alone_gateway_no_oidc' | 'alone_required' | 'anchor' | 'anchor_required'
export type RequestKind = 'anonymous' | 'identified' | 'oauth' | 'oauth2' | 'basic' | 'wsse' | 'update_oauth' | 'timeline_anonymous' | 'timeline_oauth'

export const scenarios: Record<AnyScenario, { target: Target; kind: RequestKind }> = {
  core_direct: { target: 'core', kind: 'anonymous' },
  bare_proxy: { target: 'bare', kind: 'anonymous' },
  gateway_anonymous: { target: 'gateway', kind: 'anonymous' },
  gateway_oauth: { target: 'gateway', kind: 'oauth' },
  gateway_basic: { target: 'gateway', kind: 'basic' },
  gateway_wsse: { target: 'gateway', kind: 'wsse' },
  gateway_update_oauth: { target: 'gateway', kind: 'update_oauth' },
  gateway_public_timeline: { target: 'gateway', kind: 'timeline_anonymous' },
  gateway_public_timeline_oauth: { target: 'gateway', kind: 'timeline_oauth' },
  core_direct_fixed_rate: { target: 'core', kind: 'anonymous' },
  gateway_oauth_fixed_rate: { target: 'gateway', kind: 'oauth' },
  alone_upstream_direct: { target: 'upstream', kind: 'anonymous' },
  alone_undici_proxy: { target: 'undici', kind: 'anonymous' },
  alone_bare_proxy: { target: 'alone_bare', kind: 'anonymous' },
  alone_nginx: { target: 'nginx', kind: 'anonymous' },
  alone_anonymous: { target: 'alone_gateway', kind: 'anonymous' },
  alone_anonymous_no_oidc: { target: 'alone_gateway_no_oidc', kind: 'anonymous' },
  alone_basic: { target: 'alone_gateway', kind: 'basic' },
  alone_wsse: { target: 'alone_gateway', kind: 'wsse' },
  alone_oauth: { target: 'alone_gateway', kind: 'oauth' },
  alone_oauth2: { target: 'alone_gateway', kind: 'oauth2' },
  alone_required_anonymous: { target: 'alone_required', kind: 'anonymous' },
  alone_required_basic: { target: 'alone_required', kind: 'basic' },
  alone_required_wsse: { target: 'alone_required', kind: 'wsse' },
  alone_required_oauth: { target: 'alone_required', kind: 'oauth' },
  alone_required_oauth2: { target: 'alone_required', kind: 'oauth2' },
  core_anchor_show: { target: 'anchor', kind: 'anonymous' },
  core_required_show: { target: 'anchor_required', kind: 'anonymous' },
  core_required_show_identified: { target: 'anchor_required', kind: 'identified' },
  core_show: { target: 'core', kind: 'anonymous' },
  core_show_identified: { target: 'core', kind: 'identified' },
  latency_bare_proxy: { target: 'alone_bare', kind: 'anonymous' },
  latency_anonymous: { target: 'alone_gateway', kind: 'anonymous' },
  latency_basic: { target: 'alone_gateway', kind: 'basic' },
  latency_wsse: { target: 'alone_gateway', kind: 'wsse' },
  latency_oauth: { target: 'alone_gateway', kind: 'oauth' },
  latency_required_oauth: { target: 'alone_required', kind: 'oauth' },
}

/** What the load generator needs to build requests: the seeded identities and entries. */
export interface Fixture {
  /** `localhost:<gateway port>`: the Host of every request, whichever process it reaches. */
  host: string
  /** The user; `password` is the login password of the account area (an OpenID Connect sign-in). */
  user: { id: string; apiPassword: string; password?: string }
  tokens: OAuthCredentials[]
  /** The OAuth 2.0 access tokens of the same user and application (`oauth2` requests). */
  bearer?: BearerFixture
  entryIds: string[]
  /**
   * For requests sent to the core directly as the gateway would forward them (
   * docs/gateway.md#forwarding): the deployment's KIGO_SECRET_KEY and the user's display name.
   */
  identity?: { secretKey: string; userName: string }
}

/** OAuth 2.0 access tokens (JWTs for `{issuer}/api`), with the issuer and its public keys (JWK) that verify them. */
export interface BearerFixture {
  accessTokens: string[]
  issuer: string
  keys: Array<Record<string, unknown>>
}

export interface PreparedRequest {
  method: 'GET' | 'POST'
  path: string
  headers: Record<string, string>
  body?: string
}

/** A source of requests of one kind; each call returns a new one (fresh nonce, fresh time). */
export function requestSource(kind: RequestKind, fixture: Fixture): () => PreparedRequest {
  const ids = fixture.entryIds
  if (ids.length === 0) throw new Error('the fixture has no entries to read')
  let n = 0
  // A stride coprime with the number of entries walks every ID in a scattered order.
  const stride = coprimeStride(ids.length)
  const showPath = () => `/api/statuses/show/${ids[(n * stride) % ids.length]}.json`
  const baseUri = (path: string) => `http://${fixture.host.toLowerCase()}${path}`
  const token = () => fixture.tokens[n % fixture.tokens.length]!
  const host = fixture.host
  switch (kind) {
    case 'anonymous':
      return () => {
        const path = showPath()
        n++
        return { method: 'GET', path, headers: { host } }
      }
    case 'identified': {
      if (!fixture.identity) throw new Error('identified requests need the identity secret in the fixture')
      const key = identityKey(fixture.identity.secretKey)
      const identity: Identity = { user: fixture.user.id, userName: fixture.identity.userName, authMethod: 'basic', consumer: '', scopes: [] }
      // The core runs a signed request once only: request IDs unique across every source
      // (each load worker makes its own), not only within one.
      const source = randomBytes(6).toString('hex')
      return () => {
        const path = showPath()
        n++
        const signed = signIdentity(key, { method: 'GET', url: path, host, requestId: `bench-${source}-${n}`, operation: 'statuses/show', bodySha256: '' }, identity)
        return { method: 'GET', path, headers: { host, ...signed } }
      }
    }
    case 'basic': {
      const authorization = basicAuthorization(fixture.user.id, fixture.user.apiPassword)
      return () => {
        const path = showPath()
        n++
        return { method: 'GET', path, headers: { host, authorization } }
      }
    }
    case 'wsse':
      return () => {
        const path = showPath()
        n++
        return {
          method: 'GET',
          path,
          headers: { host, 'x-wsse': wsseHeader(fixture.user.id, fixture.user.apiPassword), authorization: 'WSSE profile="UsernameToken"' },
        }
      }
    case 'oauth':
      return () => {
        const path = showPath()
        const authorization = oauthAuthorization(token(), { method: 'GET', baseUri: baseUri(path) })
        n++
        return { method: 'GET', path, headers: { host, authorization } }
      }
    case 'oauth2': {
      const tokens = fixture.bearer?.accessTokens ?? []
      if (tokens.length === 0) throw new Error('oauth2 requests need the fixture\'s OAuth 2.0 access tokens')
      return () => {
        const path = showPath()
        const authorization = `Bearer ${tokens[n % tokens.length]!}`
        n++
        return { method: 'GET', path, headers: { host, authorization } }
      }
    }
    case 'update_oauth':
      return () => {
        const path = '/api/statuses/update.json'
        const params: Array<[string, string]> = [
          ['keyword', 'bench'],
          ['status', `benchmark entry ${n} at ${Date.now()}`],
        ]
        const authorization = oauthAuthorization(token(), { method: 'POST', baseUri: baseUri(path), params })
        n++
        return {
          method: 'POST',
          path,
          headers: { host, authorization, 'content-type': 'application/x-www-form-urlencoded' },
          body: params.map(([k, v]) => `${percentEncode(k)}=${percentEncode(v)}`).join('&'),
        }
      }
    case 'timeline_anonymous':
      return () => {
        n++
        return { method: 'GET', path: `${publicTimelinePath}?count=${publicTimelineCount}`, headers: { host } }
      }
    case 'timeline_oauth':
      return () => {
        // The query's count is signed with the rest (RFC 5849 §3.4.1.3.1).
        const params: Array<[string, string]> = [['count', String(publicTimelineCount)]]
        const authorization = oauthAuthorization(token(), { method: 'GET', baseUri: baseUri(publicTimelinePath), params })
        n++
        return { method: 'GET', path: `${publicTimelinePath}?count=${publicTimelineCount}`, headers: { host, authorization } }
      }
  }
}

/** The timeline scenarios' page: the public timeline's first 20 entries (docs/api.md#timelines). */
export const publicTimelinePath = '/api/statuses/public_timeline.json'
export const publicTimelineCount = 20

function coprimeStride(length: number): number {
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b))
  for (const candidate of [7919, 104729, 1299709, 1]) if (gcd(candidate, length) === 1) return candidate % length || 1
  return 1
}
