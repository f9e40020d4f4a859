// The policy a gateway applies: read from the shared store at start-up and polled every
// few seconds (default 5 s), so that a change made at any gateway reaches all of them well
// within 15 s (docs/gateway.md#the-migration-policy). Requests are evaluated against the copy in memory; a store
// outage keeps the last policy read.
import type { AuthRequest } from '../domain/auth.js'
import { clientName } from '../usage/client-name.js'
import { evaluatePolicy, type PolicyVerdict } from './evaluate.js'
import { normalizePolicy } from './normalize.js'
import type { PolicyStore } from './store.js'
import { defaultPolicies, legacyMethods, type LegacyMethod, type Policies, type PolicyUpdate } from './types.js'

/** What authentication asks after a legacy credential verified (src/gateway/authenticate.ts). */
export interface LegacyPolicyCheck {
  check(method: LegacyMethod, user: string, req: AuthRequest): PolicyVerdict
}

export interface PolicyServiceOptions {
  /** The migration guide, linked from every deprecation header and refusal. */
  guideUrl: string
  /** How often the shared store is read again; default 5000 ms. */
  refreshMs?: number
  now?: () => number
  /** Told when a refresh fails (the last policy read stays in force). */
  onRefreshError?: (err: unknown) => void
}

export class PolicyService implements LegacyPolicyCheck {
  private policies: Policies = defaultPolicies()
  private timer: NodeJS.Timeout | undefined
  private readonly now: () => number
  readonly guideUrl: string

  constructor(private readonly store: PolicyStore, private readonly options: PolicyServiceOptions) {
    this.now = options.now ?? Date.now
    this.guideUrl = options.guideUrl
  }

  /** Reads the policy, then keeps polling. */
  async start(): Promise<void> {
    await this.refresh()
    this.timer = setInterval(() => {
      this.refresh().catch((err) => this.options.onRefreshError?.(err))
    }, this.options.refreshMs ?? 5000)
    this.timer.unref()
  }

  async refresh(): Promise<void> {
    const stored = await this.store.load()
    this.policies = { ...defaultPolicies(), ...stored }
  }

  current(): Policies {
    return this.policies
  }

  check(method: LegacyMethod, user: string, req: AuthRequest): PolicyVerdict {
    return evaluatePolicy(method, this.policies[method], { user, client: () => clientName(req) }, req.now, this.guideUrl)
  }

  /**
   * What `update` would make of the policy, storing nothing: the policy as stored now
   * (read again first, so that `since` is kept from the latest stored state, not a stale
   * copy) and the methods it changes in their stored form (validated, all or nothing).
   * Throws InvalidPolicy for input the schema lets through but that makes no sense.
   */
  async preview(update: PolicyUpdate): Promise<{ before: Policies; changed: Partial<Policies> }> {
    const now = this.now()
    await this.refresh()
    const before = this.policies
    const changed: Partial<Policies> = {}
    for (const method of legacyMethods) {
      const input = update[method]
      if (input !== undefined) changed[method] = normalizePolicy(method, input, now, before[method])
    }
    return { before, changed }
  }

  /**
   * Replaces the policies of the methods in `update` as `preview` computes them, stores
   * them and applies them here at once; other gateways follow on their next poll.
   */
  async update(update: PolicyUpdate): Promise<{ before: Policies; after: Policies }> {
    const { before, changed } = await this.preview(update)
    await this.store.save(changed)
    const after = { ...before, ...changed }
    this.policies = after
    return { before, after }
  }

  close(): void {
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
  }
}
