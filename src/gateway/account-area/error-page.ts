// An account page's failure as a page (docs/gateway.md#the-oauth-provider-and-the-account-pages),
// the renderer the provider's, the login API's and OpenID Connect's pages give the
// error-answers plugin (src/common/error-answers.ts).
import type { FastifyReply } from 'fastify'
import type { ApiError } from '../../common/errors.js'
import { sendPage } from './html.js'
import { messagePage } from './pages.js'

/**
 * A failure on an account page (docs/gateway.md#the-oauth-provider-and-the-account-pages),
 * as a page: a 4xx says what was wrong, a 5xx only to try again (its detail is in the log).
 */
export function sendErrorPage(reply: FastifyReply, answer: ApiError, page: (title: string, message: string) => string = (title, message) => messagePage({ title, message })): FastifyReply {
  for (const [k, v] of Object.entries(answer.headers)) void reply.header(k, v)
  const failed = answer.status >= 500
  return sendPage(reply, answer.status, page(failed ? 'Try again shortly' : 'Bad request', failed ? 'kigo cannot answer right now. Try again in a moment.' : answer.message))
}
