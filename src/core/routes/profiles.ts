// The core's public copy of a user: made from the signed identity when the gateway has not
// sent the user yet, named by it until then (docs/gateway.md#registered-users-in-the-core).
// A short-lived memory of what was last seen saves a store round trip per request; the
// store's own copy is refreshed whenever the name differs from it.
import type { Identity } from '../../common/identity.js'
import type { ContentStore } from '../store/types.js'

const rememberMs = 60_000
const maxRemembered = 10_000

export class ProfileRefresher {
  private readonly seen = new Map<string, { name: string; at: number }>()

  constructor(private readonly store: ContentStore) {}

  /** The display name shown for an identity (the user ID when the gateway sent none). */
  static displayName(identity: Identity): string {
    return identity.userName.trim() === '' ? identity.user : identity.userName
  }

  /**
   * Brings the stored copy up to date with `identity`. Returns undefined when the copy is
   * known to be current (most requests: no promise, no store round trip), else the
   * promise of the check.
   */
  refresh(identity: Identity, now = Date.now()): Promise<void> | undefined {
    const name = ProfileRefresher.displayName(identity)
    const known = this.seen.get(identity.user)
    if (known && known.name === name && now - known.at < rememberMs) return undefined
    return this.load(identity.user, name, now)
  }

  private async load(user: string, name: string, now: number): Promise<void> {
    const stored = await this.store.getUser(user)
    // A user the gateway has not sent yet (docs/gateway.md#registered-users-in-the-core) gets
    // a copy from the identity; the store keeps a name the gateway sent.
    if (!stored || stored.name !== name) await this.store.upsertUser({ id: user, name })
    this.remember(user, name, now)
  }

  /** Called after a write that stored the name itself. */
  remember(user: string, name: string, now = Date.now()): void {
    this.seen.delete(user)
    this.seen.set(user, { name, at: now })
    if (this.seen.size > maxRemembered) this.seen.delete(this.seen.keys().next().value!)
  }
}
