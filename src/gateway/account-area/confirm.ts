// What cannot be undone asks first (docs/gateway.md#the-oauth-provider-and-the-account-pages):
// the button posts without `confirm=yes` and gets a confirmation page, whose button posts
// the same form again with it (no script), with a choice the page asks for if any. A post
// without it changes nothing.
import type { FastifyReply } from 'fastify'
import { field } from './form.js'
import { sendPage } from './html.js'
import { confirmPage, type FormChoice } from './pages.js'
import type { SignedInSession } from './posted-form.js'

export interface Confirmation {
  /** Where the confirmed form posts (the same path). */
  action: string
  title: string
  message: string
  button: string
  /** The form's other fields, posted again. */
  fields?: Record<string, string>
  /** A choice the confirmation asks for (a select), posted with it: e.g. how long a replaced secret keeps working. */
  choice?: FormChoice
  /** Where "Cancel" goes (default: the account page). */
  cancel?: string
}

/** Null when the form says confirm=yes; otherwise the confirmation page, answered. */
export function confirmFirst(reply: FastifyReply, session: SignedInSession, form: URLSearchParams, o: Confirmation): FastifyReply | null {
  if (field(form, 'confirm') === 'yes') return null
  return sendPage(reply, 200, confirmPage({ user: session.user, csrfToken: session.csrfToken, ...o }))
}
