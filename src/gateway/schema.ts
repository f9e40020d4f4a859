// The gateway's schema `kigo_gateway` (docs/operations.md#stored-data): every feature's
// migrations, each list kept in the folder that owns its tables, in the order `migrate`
// of src/common/sql.ts applies them. A list comes after the lists whose tables it refers
// to (the login API's changes the policy table's check). Versions are unique across the
// lists and are what a database records as applied, so a version never changes owner or
// number once shipped.
import type { Migration } from '../common/sql.js'
import { auditMigrations } from './audit/migrations.js'
import { loginApiMigrations } from './login-api/migrations.js'
import { mailMigrations } from './mail/migrations.js'
import { oidcMigrations } from './oidc/migrations.js'
import { operatorMigrations } from './operator/migrations.js'
import { policyMethodMigrations, policyMigrations } from './policy/migrations.js'
import { providerMigrations } from './account-area/migrations.js'
import { identityMigrations } from './store/migrations.js'
import { throttleMigrations } from './throttle/migrations.js'
import { usageMigrations } from './usage/migrations.js'
import { noticeMigrations } from './notices/migrations.js'

export const gatewayMigrations: readonly Migration[] = [
  ...identityMigrations,
  ...policyMigrations,
  ...usageMigrations,
  ...auditMigrations,
  ...operatorMigrations,
  ...throttleMigrations,
  ...providerMigrations,
  ...loginApiMigrations,
  ...policyMethodMigrations,
  ...oidcMigrations,
  ...mailMigrations,
  ...noticeMigrations,
]
