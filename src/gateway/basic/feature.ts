// HTTP Basic as a gateway feature (docs/gateway.md#authentication): a legacy method under
// the migration policy (method `basic`). Its verifier stays in auth/basic.ts, where the
// authentication pipeline picks it from the request's header with no per-request lookup
// of features; its policy rows are the policy's own (policy/migrations.ts), and its
// requests are counted by the usage report like every method's. It adds nothing else yet:
// what it comes to own (a guide section, a panel) goes in this folder.
import type { GatewayFeature } from '../host/feature.js'

export const basicFeature: GatewayFeature = {
  name: 'basic',
  migrations: [],
  open: () => ({}),
}
