// Which operation a request is, and what it needs (docs/gateway.md#which-credentials-each-operation-accepts), from the shared route
// table (src/common/route-table.ts) that the core registers its routes from. The gateway
// matches the canonical path only: see canonicalPath there.
import type { AuthMethod } from '../../common/identity.js'
import { operationMatcher, withIdParameter, withRouteMethods, type Operation, type Scope } from '../../common/route-table.js'

export interface RoutePolicy {
  /** Bounded name, used as the metrics label and the key for configuration. */
  name: string
  /** Anonymous requests pass; credentials that are present are still verified. */
  anonymous: boolean
  methods: AuthMethod[]
  /** An OAuth token must hold at least one of these; empty: any scope. */
  scopes: Scope[]
  /** The route-table operation; absent for the catch-all. */
  operation?: Operation
}

const legacyAndOAuth: AuthMethod[] = ['oauth', 'basic', 'wsse']

/**
 * Everything outside the table that the gateway forwards (pages, icons, photo bytes):
 * anonymous, any valid credential, no scope. Only GET and HEAD carry an identity there.
 */
export const fallback: RoutePolicy = { name: 'other', anonymous: true, methods: legacyAndOAuth, scopes: [] }

export type Resolution =
  | { kind: 'operation'; route: RoutePolicy }
  /** The path names an operation, but not for this method. */
  | { kind: 'method_not_allowed'; allow: string[] }
  | { kind: 'other'; route: RoutePolicy }

/**
 * The operation of `method` on `canonicalPath`. `namesAnId` tells, when asked, whether the
 * query or urlencoded body names a non-empty `id` (route-table.ts `namesId`): a form of
 * "the authenticated user" then runs its `/{id}` form, as the core decides too.
 */
export type RouteResolver = (method: string, canonicalPath: string, namesAnId?: () => boolean) => Resolution

export function routeResolver(overrides: Record<string, AuthMethod[]> = {}): RouteResolver {
  const table = withRouteMethods(overrides)
  const match = operationMatcher(table)
  const policies = new Map<Operation, RoutePolicy>()
  const policyOf = (o: Operation): RoutePolicy => {
    let p = policies.get(o)
    if (!p) policies.set(o, (p = { name: o.name, anonymous: o.anonymous, methods: o.methods, scopes: o.scopes, operation: o }))
    return p
  }
  return (method, path, namesAnId = () => false) => {
    const m = match(method, path)
    if (m === null) return { kind: 'other', route: fallback }
    if (m.operation === null) return { kind: 'method_not_allowed', allow: m.allow }
    return { kind: 'operation', route: policyOf(withIdParameter(table, m.operation, namesAnId)) }
  }
}

/** The policy of one named operation (for the gateway's own routes, such as applications/my). */
export function routePolicyOf(name: string, overrides: Record<string, AuthMethod[]> = {}): RoutePolicy {
  const o = withRouteMethods(overrides).find((op) => op.name === name)
  if (!o) throw new Error(`No operation ${name} in the route table`)
  return { name: o.name, anonymous: o.anonymous, methods: o.methods, scopes: o.scopes, operation: o }
}
