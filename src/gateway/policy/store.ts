// The migration policy in the gateway's store (table kigo_gateway.auth_policy, migration
// 10), so that every gateway of a deployment applies the same one (docs/gateway.md#the-migration-policy).
//
// Every write is a compare-and-set: `change` locks the table, reads the policy, lets the
// caller check the version it read against the one stored and say what to write, and writes
// it, all in one transaction. The version is a digest of the whole policy as stored, so every
// gateway (whatever copy it holds in memory) compares against the same thing; the lock
// (SHARE ROW EXCLUSIVE conflicts with itself, not with plain reads) makes two writes at
// once take turns, so the second sees the first's result. The same SQL on PGlite and on
// PostgreSQL.
import { createHash } from 'node:crypto'
import type { Db, Queryable } from '../../common/sql.js'
import { Compile } from '../../common/typebox.js'
import { MethodPolicySchema, defaultMethodPolicy, defaultPolicies, isLegacyMethod, legacyMethods, type LegacyMethod, type MethodPolicy, type Policies } from './types.js'

const checkStored = Compile(MethodPolicySchema)

/** A digest of one method's stored policy (the dashboard's preview names the one it began from). */
export const policyDigest = (p: MethodPolicy): string => createHash('sha256').update(JSON.stringify(p)).digest('base64url')

/** The policy's version: a digest of every method's stored policy, the `ETag` of GET /admin/policy. */
export const policyVersion = (p: Policies): string =>
  createHash('sha256').update(JSON.stringify(legacyMethods.map((m) => p[m]))).digest('base64url').slice(0, 27)

/** Whole policies: a method without a row is allowed (its default policy). */
export const withDefaults = (stored: Partial<Policies>): Policies => ({ ...defaultPolicies(), ...stored })

export class PolicyStore {
  constructor(private readonly db: Db) {}

  /** The stored policies; a method without a row (or with an unreadable one) is absent. */
  async load(q: Queryable = this.db): Promise<Partial<Record<LegacyMethod, MethodPolicy>>> {
    const rows = await q.query<{ method: string; policy: unknown }>('SELECT method, policy FROM kigo_gateway.auth_policy')
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
        exceptions: (value.exceptions ?? []).map((e) => ({ ...(e.user !== undefined ? { user: e.user } : {}), ...(e.client !== undefined ? { client: e.client } : {}), ...(e.application !== undefined ? { application: e.application } : {}), until: e.until })),
        ...(value.registration_closed === true ? { registration_closed: true as const } : {}),
      }
    }
    return out
  }

  /** Stores the given methods' policies in one transaction, whatever is stored. */
  async save(policies: Partial<Policies>): Promise<void> {
    await this.change(() => ({ changed: policies }))
  }

  /**
   * One compare-and-set: `make` gets the policy as stored and its version, and answers the
   * methods to store (or throws, and nothing is written); all in one transaction.
   */
  async change<T extends { changed: Partial<Policies> }>(make: (before: Policies, version: string) => T): Promise<T & { before: Policies }> {
    return this.db.transaction(async (tx) => {
      await tx.query('LOCK TABLE kigo_gateway.auth_policy IN SHARE ROW EXCLUSIVE MODE')
      const before = withDefaults(await this.load(tx))
      const made = make(before, policyVersion(before))
      for (const [method, policy] of Object.entries(made.changed)) {
        await tx.query(
          `INSERT INTO kigo_gateway.auth_policy (method, policy, updated_at) VALUES ($1, $2::jsonb, now())
           ON CONFLICT (method) DO UPDATE SET policy = EXCLUDED.policy, updated_at = EXCLUDED.updated_at`,
          [method, JSON.stringify(policy)],
        )
      }
      return { ...made, before }
    })
  }
}
