// The host's own pages and API beside the features' routes, as one plugin of the
// gateway's public app: the developer guide (`/developers`, where features add sections)
// and the migration guide (`/migration`), and the user-information API
// (`/applications/my`, for OAuth 1.0a and OAuth 2.0 access tokens alike, which the guides
// tell login-API sites to call). Registered beside the catch-all forwarding route, whose
// more specific paths it takes over; its failures are answered in the request's format.
import type { FastifyInstance } from 'fastify'
import type { ErrorArea } from '../../common/error-answers.js'
import { pageErrors } from '../account-area/host.js'
import { sendError } from '../../common/api-errors.js'
import type { GuidesContext, GuidesOptions } from './context.js'
import { registerMigrationGuide } from './migration-guide.js'
import { registerDeveloperGuide } from './developer-guide.js'
import { registerUserInfo } from './user-info.js'

export type { GuidesOptions } from './context.js'

/**
 * In the account pages' words (the identity store away: 503 so clients retry,
 * docs/operations.md#dependability), in the request's format.
 */
const guideErrors: ErrorArea = {
  wording: pageErrors.wording,
  logMessage: 'provider request failed',
  render: (request, reply, answer) => sendError(request, reply, answer),
}

export async function guidePages(app: FastifyInstance, options: GuidesOptions): Promise<void> {
  // The account area in this scope: the session cookie (a guide names its signed-in
  // reader) and the deployment check (docs/gateway.md#deployments).
  await options.account.mount(app)
  const ctx: GuidesContext = { ...options.account.context, guideSections: options.guideSections ?? [] }
  app.answerErrorsAs(guideErrors)
  registerUserInfo(app, ctx)
  registerMigrationGuide(app, ctx)
  registerDeveloperGuide(app, ctx)
}
