// The one check every form of the account area passes (the account page's own forms and
// those of the features built on the account area): a readable form, posted by a session
// whose CSRF token it carries (docs/gateway.md#the-oauth-provider-and-the-account-pages),
// by a signed-in user.
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { User } from '../store/types.js'
import { field, readForm } from './form.js'
import { sendPage } from './html.js'
import { messagePage } from './pages.js'
import { csrfMatches, type Session, type Sessions } from './session.js'

export type SignedInSession = Session & { user: User }

/**
 * The post's session and form, or null after answering: 400/415 for an unreadable form,
 * 403 "Form expired" for a missing or wrong CSRF token, 403 "Not signed in" (with a link
 * to sign in) for a signed-out session.
 */
export async function signedInPost(sessions: Sessions, request: FastifyRequest, reply: FastifyReply): Promise<{ session: SignedInSession; form: URLSearchParams } | null> {
  const read = readForm(request)
  if (!read.ok) {
    await sendPage(reply, read.status, messagePage({ title: 'Bad form', message: read.message }))
    return null
  }
  const session = await sessions.current(request)
  if (!csrfMatches(session, field(read.form, 'csrf_token'))) {
    await sendPage(reply, 403, messagePage({ title: 'Form expired', message: 'This form is out of date or did not come from kigo. Go back, reload the page and try again.', link: { href: '/account', text: 'Your account' } }))
    return null
  }
  if (!session!.user) {
    await sendPage(reply, 403, messagePage({ title: 'Not signed in', message: 'Sign in before you answer this request.', link: { href: '/account/login', text: 'Sign in' } }))
    return null
  }
  return { session: session as SignedInSession, form: read.form }
}
