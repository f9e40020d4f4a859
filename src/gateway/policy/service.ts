// The policy a gateway applies: read from the shared store at start-up and polled every
// few seconds (default 5 s), so that a change made at any gateway reaches all of them well
// within 15 s (docs/gateway.md#the-migration-policy). Requests are evaluated against the copy in memory; a store
// outage keeps the last policy read.
import type { AuthRequest } from '../domain/auth.js'
import { clientName } from '../usage/client-name.js'
import { evaluatePolicy, type PolicyVerdict } from './evaluate.js'
import { normalizeChange } from './normalize.js'
import { policyVersion, withDefaults, type PolicyStore } from './store.js'
import { defaultPolicies, legacyMethods, type LegacyMethod, type MethodPolicy, type Policies, type PolicyState, type PolicyUpdate } from './types.js'

/** A write named a version of the policy that is no longer the stored one; nothing was written. */
export class StalePolicy extends Error {
  override name = 'StalePolicy'
}

/** A scheduled entry a change replaced (policy/schedule.ts). */
export interface ReplacedEntry {
  method: LegacyMethod
  state: PolicyState
  from: string
}

/** What a change makes of the policy (previewed, or written). */
export interface PolicyChange {
  before: Policies
  /** The methods the update names, in their stored form. */
  changed: Partial<Policies>
  /** The scheduled entries it replaces, method by method, in time order. */
  replaced: ReplacedEntry[]
}

/** A change written: the policy before and after, and the version it now has. */
export interface PolicyWrite extends PolicyChange {
  after: Policies
  version: string
}

/** What authentication asks after a legacy credential verified (src/gateway/authenticate.ts). */
export interface LegacyPolicyCheck {
  /** `application`: for oauth1, the consumer key the request was signed by (an exception may name it). */
  check(method: LegacyMethod, user: string, req: AuthRequest, application?: string): PolicyVerdict
}

/** The headers of a method plainly allowed: none (one object, so a caller can tell it without counting keys). */
export const noPolicyHeaders: Record<string, string> = Object.freeze({})

/** The verdict of a method plainly allowed (no state but allow, nothing scheduled): one object, no headers. */
const plainlyAllowed: PolicyVerdict = Object.freeze({ allowed: true, state: 'allow', headers: noPolicyHeaders, exception: false })

/** Allowed now and with nothing scheduled: a request of the method needs no evaluation at all. */
const isPlain = (p: MethodPolicy): boolean => p.state === 'allow' && p.schedule.length === 0

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
  private storedVersion = policyVersion(this.policies)
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
    this.hold(withDefaults(await this.store.load()))
  }

  private hold(policies: Policies): void {
    this.policies = policies
    this.storedVersion = policyVersion(policies)
    this.plain = new Set(legacyMethods.filter((m) => isPlain(policies[m])))
  }

  /** The methods plainly allowed in the copy held (see isPlain). */
  private plain = new Set<LegacyMethod>(legacyMethods)

  current(): Policies {
    return this.policies
  }

  /** The version of the copy held (`current`): what a compare-and-set names. */
  version(): string {
    return this.storedVersion
  }

  check(method: LegacyMethod, user: string, req: AuthRequest, application?: string): PolicyVerdict {
    if (this.plain.has(method)) return plainlyAllowed
    const subject = application === undefined ? { user, client: () => clientName(req) } : { user, application, client: () => clientName(req) }
    return evaluatePolicy(method, this.policies[method], subject, req.now, this.guideUrl)
  }

  /**
   * Whether registering a new application of `method` is closed (`kigo policy set oauth1 …
   * --close-registration`): only OAuth 1.0a applications have registrations to close.
   */
  registrationClosed(method: LegacyMethod): boolean {
    return this.policies[method].registration_closed === true
  }

  /**
   * What `update` would make of the policy, storing nothing: the policy as stored now (read
   * again first, so that `since` is kept from the latest stored state, not a stale copy)
   * and the methods it changes in their stored form (validated, all or nothing), with the
   * scheduled entries it would replace. Throws InvalidPolicy for input the schema lets
   * through but that makes no sense.
   */
  async preview(update: PolicyUpdate): Promise<PolicyChange> {
    await this.refresh()
    return this.changeOf(this.policies, update)
  }

  private changeOf(before: Policies, update: PolicyUpdate): PolicyChange {
    const now = this.now()
    const changed: Partial<Policies> = {}
    const replaced: ReplacedEntry[] = []
    for (const method of legacyMethods) {
      const input = update[method]
      if (input === undefined) continue
      const made = normalizeChange(method, input, now, before[method])
      changed[method] = made.policy
      replaced.push(...made.replaced.map((e) => ({ method, ...e })))
    }
    return { before, changed, replaced }
  }

  /**
   * One compare-and-set of the shared store: `make` gets the policy as stored and its
   * version (in the write's transaction, whatever this gateway holds) and answers the
   * update, or throws (StalePolicy, InvalidPolicy) and nothing is written. The methods it
   * changes are stored as `preview` computes them and applied here at once; other gateways
   * follow on their next poll.
   */
  async change(make: (before: Policies, version: string) => PolicyUpdate): Promise<PolicyWrite> {
    const made = await this.store.change((before, version) => {
      const change = this.changeOf(before, make(before, version))
      // A method left as it was is not written (nor recorded).
      const written = Object.fromEntries(Object.entries(change.changed).filter(([m, p]) => JSON.stringify(p) !== JSON.stringify(before[m as LegacyMethod])))
      return { ...change, changed: written }
    })
    const after = { ...made.before, ...made.changed }
    this.hold(after)
    return { ...made, after, version: this.storedVersion }
  }

  /** Writes `update` whatever the stored version (no compare). */
  async update(update: PolicyUpdate): Promise<PolicyWrite> {
    return this.change(() => update)
  }

  close(): void {
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
  }
}
