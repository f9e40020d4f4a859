// The gateway's schema `kigo_gateway` (docs/operations.md#stored-data): the host's
// migrations and every feature's (features.ts), each list kept in the folder that owns its
// tables. Each owner has its own range of versions; the lists are applied in the order of
// their first version (then each in its own order), which puts a list after the lists
// whose tables it refers to (the login API's changes the policy table's check, the
// notices' name the outbox's messages). Versions are unique across the lists and are what
// a database records as applied, so a version never changes owner or number once shipped.
import type { Migration } from '../common/sql.js'
import { auditMigrations } from './audit/migrations.js'
import { gatewayFeatures } from './features.js'
import type { GatewayFeature } from './host/feature.js'
import { mailMigrations } from './mail/migrations.js'
import { operatorMigrations } from './operator/migrations.js'
import { policyMethodMigrations, policyMigrations } from './policy/migrations.js'
import { providerMigrations } from './account-area/migrations.js'
import { identityMigrations, webSessionMigrations } from './store/migrations.js'
import { throttleMigrations } from './throttle/migrations.js'
import { usageMigrations } from './usage/migrations.js'

/** The host's own lists: the identity store, the policy, usage, audit, operator sessions, locks, the account area, the outbox. */
const hostMigrations: ReadonlyArray<readonly Migration[]> = [
  // One list: the users' and web sessions' tables.
  [...identityMigrations, ...webSessionMigrations],
  policyMigrations,
  usageMigrations,
  auditMigrations,
  operatorMigrations,
  throttleMigrations,
  providerMigrations,
  mailMigrations,
  // The policy's methods widened (oauth1): after the login API's change to the same check.
  policyMethodMigrations,
]

/** The host's lists and the features', in the order of their first version. */
export function schemaMigrations(features: readonly GatewayFeature[]): readonly Migration[] {
  const lists = [...hostMigrations, ...features.map((f) => f.migrations)].filter((list) => list.length > 0)
  return [...lists].sort((a, b) => a[0]!.version - b[0]!.version).flat()
}

export const gatewayMigrations: readonly Migration[] = schemaMigrations(gatewayFeatures)
