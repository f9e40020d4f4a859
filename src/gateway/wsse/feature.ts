// WSSE (X-WSSE UsernameToken) as a gateway feature (docs/gateway.md#authentication): a
// legacy method under the migration policy (method `wsse`). Its verifier stays in
// auth/wsse.ts, where the authentication pipeline picks it from the request's header with
// no per-request lookup of features, with its nonces in the host's replay cache; its policy
// rows are the policy's own (policy/migrations.ts), and its requests are counted by the
// usage report like every method's. It adds nothing else yet: what it comes to own goes in
// this folder.
import type { GatewayFeature } from '../host/feature.js'

export const wsseFeature: GatewayFeature = {
  name: 'wsse',
  migrations: [],
  open: () => ({}),
}
