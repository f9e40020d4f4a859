// The migration policy in the gateway's store (table kigo_gateway.auth_policy, migration
// 10), so that every gateway of a deployment applies the same one (docs/gateway.md#the-migration-policy).
import type { Db } from '../../common/sql.js'
import { Compile } from '../../common/typebox.js'
import { MethodPolicySchema, defaultMethodPolicy, isLegacyMethod, type LegacyMethod, type MethodPolicy } from './types.js'

const checkStored = Compile(MethodPolicySchema)

export class PolicyStore {
  constructor(private readonly db: Db) {}

  /** The stored policies; a method without a row (or with an unreadable one) is absent. */
  async load(): Promise<Partial<Record<LegacyMethod, MethodPolicy>>> {
    const rows = await this.db.query<{ method: string; policy: unknown }>('SELECT method, policy FROM kigo_gateway.auth_policy')
    const out: Partial<Record<LegacyMethod, MethodPolicy>> = {}
    for (const row of rows) {
      if (!isLegacyMethod(row.method)) continue
      const value = typeof row.policy === 'string' ? JSON.parse(row.policy) as unknown : row.policy
      if (!checkStored.Check(value)) continue
      // Rows were normalized when written; absent optional fields take their defaults.
      // jsonb keeps an object's keys in its own order (shorter first), so each object is
      // rebuilt in the order normalizePolicy writes: a policy read back then compares
      // equal, as JSON, to the one written (an unchanged policy is seen as unchanged).
      out[row.method] = {
        state: value.state,
        since: value.since ?? defaultMethodPolicy().since,
        deprecated_since: value.state === 'allow' ? null : value.deprecated_since ?? value.since ?? null,
        sunset: value.sunset ?? null,
        windows: (value.windows ?? []).map((w) => ({ start: w.start, end: w.end })),
        schedule: (value.schedule ?? []).map((e) => ({ state: e.state, from: e.from })),
        exceptions: (value.exceptions ?? []).map((e) => ({ ...(e.user !== undefined ? { user: e.user } : {}), ...(e.client !== undefined ? { client: e.client } : {}), until: e.until })),
      }
    }
    return out
  }

  /** Stores the given methods' policies in one transaction. */
  async save(policies: Partial<Record<LegacyMethod, MethodPolicy>>): Promise<void> {
    await this.db.transaction(async (tx) => {
      for (const [method, policy] of Object.entries(policies)) {
        await tx.query(
          `INSERT INTO kigo_gateway.auth_policy (method, policy, updated_at) VALUES ($1, $2::jsonb, now())
           ON CONFLICT (method) DO UPDATE SET policy = EXCLUDED.policy, updated_at = EXCLUDED.updated_at`,
          [method, JSON.stringify(policy)],
        )
      }
    })
  }
}
