// The one opening every posted form of the account area passes (the sign-in, forgot,
// reset and sign-out forms, the account page's own forms and those of the features built
// on the account area): a readable form, posted by a session whose CSRF token it carries
// (docs/gateway.md#the-oauth-provider-and-the-account-pages); and, for what only a
// signed-in user may do, by a signed-in user.
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { User } from '../store/types.js'
import { field, readForm } from './form.js'
import { sendPage } from './html.js'
import { messagePage } from './pages.js'
import { csrfMatches, type Session, type Sessions } from './session.js'

export type SignedInSession = Session & { user: User }

/** What a form whose CSRF token does not match says, and where it sends the visitor. */
export interface Expired {
  message: string
  link: { href: string; text: string }
}

const formExpired: Expired = {
  message: 'This form is out of date or did not come from kigo. Go back, reload the page and try again.',
  link: { href: '/account', text: 'Your account' },
}

/**
 * The post's session (signed in or not) and form, or null after answering: 400/415 for
 * an unreadable form, 403 "Form expired" (`expired`'s words) for a missing or wrong CSRF token.
 */
export async function postedForm(sessions: Sessions, request: FastifyRequest, reply: FastifyReply, expired: Expired = formExpired): Promise<{ session: Session; form: URLSearchParams } | null> {
  const read = readForm(request)
  if (!read.ok) {
    await sendPage(reply, read.status, messagePage({ title: 'Bad form', message: read.message }))
    return null
  }
  const session = await sessions.current(request)
  if (!csrfMatches(session, field(read.form, 'csrf_token'))) {
    await sendPage(reply, 403, messagePage({ title: 'Form expired', ...expired }))
    return null
  }
  return { session: session!, form: read.form }
}

/**
 * The post's signed-in session and form, or null after answering as `postedForm` does,
 * or 403 "Not signed in" (with a link to sign in) for a signed-out session.
 */
export async function signedInPost(sessions: Sessions, request: FastifyRequest, reply: FastifyReply): Promise<{ session: SignedInSession; form: URLSearchParams } | null> {
  const posted = await postedForm(sessions, request, reply)
  if (!posted) return null
  if (!posted.session.user) {
    await sendPage(reply, 403, messagePage({ title: 'Not signed in', message: 'Sign in before you answer this request.', link: { href: '/account/login', text: 'Sign in' } }))
    return null
  }
  return { session: posted.session as SignedInSession, form: posted.form }
}
