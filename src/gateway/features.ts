// The gateway's features (docs/development.md#adding-a-feature): each a folder whose
// feature.ts keeps the contract of host/feature.ts. They are opened in this order, each
// after the ones it reads from `shared.provided` (the OpenID Connect provider takes
// OAuth 2.0's extension, the migration screens read the notices' plan), and their
// account-page sections, guide sections and dashboard panels appear in this order.
// Adding a feature: its folder, and one line here.
import { basicFeature } from './basic/feature.js'
import type { GatewayFeature } from './host/feature.js'
import { loginApiFeature } from './login-api/feature.js'
import { migrationFeature } from './migration/feature.js'
import { noticesFeature } from './notices/feature.js'
import { oauth1Feature } from './oauth1/feature.js'
import { oauth2Feature } from './oauth2/feature.js'
import { oidcFeature } from './oidc/feature.js'
import { wsseFeature } from './wsse/feature.js'

export const gatewayFeatures: readonly GatewayFeature[] = [
  basicFeature,
  wsseFeature,
  oauth1Feature,
  loginApiFeature,
  oauth2Feature,
  oidcFeature,
  noticesFeature,
  migrationFeature,
]
