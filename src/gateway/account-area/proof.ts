// Proof of the person rather than of the session, for the changes that would hand the
// account, or the sign-ins of others, to whoever holds a stolen session cookie: the
// sign-in password, the contact e-mail (where reset links go), and where a registration
// sends people's browsers back with codes (an application's or a login site's callback,
// an OpenID Connect client's redirect URIs). One check for all of them: the current login
// password, with wrong ones counted against the sign-in throttle so that a stolen session
// cannot guess it; for the registrations, a sign-in in the last few minutes is proof too.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { html, type SafeHtml } from '../../common/html.js'
import type { CredentialRepository } from '../store/types.js'
import type { AttemptThrottle } from '../throttle/attempts.js'

/** What the proof reads of a signed-in session (a structural type: the session's module imports the pages that ask for proof). */
type SignedInSession = { signedInAt: number; user: { id: string } }

/** How recent a sign-in proves the person for a registration's change, seconds. */
export const recentSignInSeconds = 5 * 60

/** Sends the form again with `error` and the status. */
export type Refuse = (status: number, error: string) => unknown

export interface PersonProof {
  /** Whether the session was signed in (its password typed) within `recentSignInSeconds`. */
  recent(session: SignedInSession): boolean
  /**
   * False when `current` is the user's login password (or, with `orRecentSignIn`, when the
   * session is recent); else true once `refuse`'s page is sent (`empty` says what to type).
   */
  unproven(request: FastifyRequest, reply: FastifyReply, session: SignedInSession, current: string, refuse: Refuse, empty: string, o?: { orRecentSignIn?: boolean }): Promise<boolean>
}

export function personProof(d: { store: Pick<CredentialRepository, 'verifyLoginPassword'>; throttle: AttemptThrottle; now: () => number; ipOf: (request: FastifyRequest) => string }): PersonProof {
  const recent = (session: SignedInSession) => d.now() - session.signedInAt < recentSignInSeconds * 1000
  return {
    recent,
    async unproven(request, reply, session, current, refuse, empty, o = {}) {
      if (o.orRecentSignIn === true && recent(session)) return false
      const no = async (status: number, error: string) => {
        await refuse(status, error)
        return true
      }
      const keys = { realm: 'web' as const, user: session.user.id, ip: d.ipOf(request) }
      if (d.throttle.locked?.(keys) === true) return no(403, 'This account is locked by the operator. Ask them to unlock it.')
      const wait = await d.throttle.check(keys)
      if (wait > 0) {
        void reply.header('retry-after', String(wait))
        return no(429, `Too many wrong passwords. Try again in ${Math.ceil(wait / 60)} minute${wait > 60 ? 's' : ''}.`)
      }
      if (current === '') return no(400, empty)
      if (!(await d.store.verifyLoginPassword(session.user.id, current))) {
        await d.throttle.failed(keys)
        return no(403, 'Your current password is not right.')
      }
      return false
    },
  }
}

/**
 * The edit form's current-password field, shown only when the session's sign-in is not
 * recent: `id` makes its label unique on the page, `what` names what it guards.
 */
export function currentPasswordField(o: { id: string; what: string; needed: boolean }): SafeHtml {
  if (!o.needed) return html``
  return html`<label for="${o.id}">Current password <span class="muted">(needed to change the ${o.what}; not needed to change anything else)</span></label>
<input type="password" id="${o.id}" name="current_password" autocomplete="current-password">`
}
