// Which credentials each public route accepts (SPEC §4.1), and the OAuth scopes it needs.
// The table is data: a deployment may narrow a route's methods with config.auth.routeMethods.
import type { AuthMethod } from '../common/identity.js'
import type { Scope } from './store/types.js'

export interface RoutePolicy {
  /** Bounded name, used as the metrics label and the key for configuration. */
  name: string
  /** Anonymous requests pass; credentials that are present are still verified. */
  anonymous: boolean
  methods: AuthMethod[]
  /** An OAuth token must hold at least one of these; empty: any scope. */
  scopes: Scope[]
}

interface RouteEntry extends RoutePolicy {
  method: string
  pattern: RegExp
}

const legacyAndOAuth: AuthMethod[] = ['oauth', 'basic', 'wsse']

const table: RouteEntry[] = [
  { name: 'statuses/update', method: 'POST', pattern: /^\/api\/statuses\/update(\.[^/]*)?$/, anonymous: false, methods: legacyAndOAuth, scopes: ['write_public'] },
  { name: 'statuses/destroy', method: 'POST', pattern: /^\/api\/statuses\/destroy\/[^/]+$/, anonymous: false, methods: legacyAndOAuth, scopes: ['write_public'] },
  { name: 'favorites/create', method: 'POST', pattern: /^\/api\/favorites\/create\/[^/]+$/, anonymous: false, methods: legacyAndOAuth, scopes: ['write_public'] },
  { name: 'favorites/destroy', method: 'POST', pattern: /^\/api\/favorites\/destroy\/[^/]+$/, anonymous: false, methods: legacyAndOAuth, scopes: ['write_public'] },
  { name: 'statuses/show', method: 'GET', pattern: /^\/api\/statuses\/show\/[^/]+$/, anonymous: true, methods: legacyAndOAuth, scopes: ['read_public', 'write_public'] },
  { name: 'photos/create', method: 'POST', pattern: /^\/api\/photos\/create(\.[^/]*)?$/, anonymous: false, methods: legacyAndOAuth, scopes: ['write_private'] },
  { name: 'applications/my', method: 'GET', pattern: /^\/applications\/my(\.[^/]*)?$/, anonymous: false, methods: ['oauth'], scopes: [] },
]

/** Everything else the gateway forwards: anonymous, any valid credential, no scope. */
const fallback: RoutePolicy = { name: 'other', anonymous: true, methods: legacyAndOAuth, scopes: [] }

export type RouteResolver = (method: string, path: string) => RoutePolicy

export function routeResolver(overrides: Record<string, AuthMethod[]> = {}): RouteResolver {
  const entries = table.map((r) => (overrides[r.name] ? { ...r, methods: overrides[r.name]! } : r))
  return (method, path) => {
    const m = method === 'HEAD' ? 'GET' : method
    for (const r of entries) if (r.method === m && r.pattern.test(path)) return r
    return fallback
  }
}

export const routeNames = [...table.map((r) => r.name), fallback.name]
