// A registered client with a rotating secret (docs/gateway.md#rotating-a-secret): the one
// lifecycle that OAuth applications, login sites and OpenID Connect clients share, on the
// account pages and the operator API. Create (the secret shown once, on the page the post
// redirects to), edit, rotate the secret with an overlap (a day unless chosen), delete;
// each checked against its owner and audited. A kind supplies its name, paths and wording
// (`RegistrationKind`) and its store's rotation; this module names the routes and the
// audit actions the same way for every kind:
// - the account pages' rotation is posted to `<base>/<id>/rotate-secret`; the older
//   `<base>/<id>/rotate` answers 308 to it, so a form or bookmark of before still works;
// - an audit action is `<kind>.<action>` (`app.rotate_secret`, `site.create`,
//   `oidc_client.delete`), whoever acted: the event's actor tells the operator from the
//   owner on the account pages. Rows written before under other names
//   (`account.app_rotate_secret`, …) stay as they are and read as before.
import type { FastifyInstance, FastifyReply } from 'fastify'
import type { AuditActor, Audited } from '../audit/audited.js'
import type { AuditKind } from '../audit/store.js'
import { postedOverlap, rotationAudit, type OverlapSeconds } from '../domain/secret-rotation.js'
import { field } from '../account-area/form.js'
import { seeOther } from '../account-area/html.js'

/** What is done to a registration, as its audit action names it. */
export type RegistrationAction = 'create' | 'edit' | 'rotate_secret' | 'delete'

/** One kind of registered client: what the lifecycle needs to know of it besides its store. */
export interface RegistrationKind {
  /** The first part of its audit actions (`app`, `site`, `oidc_client`). */
  name: string
  /** The kind its audit events are filed under. */
  auditKind: AuditKind
  /** Where its own registrations are on the account pages (`/account/sites`). */
  accountBase: string
  /** The prefix of the sealed slot its new secret waits in for the page that shows it (`site`). */
  slot: string
}

/** The audit action of `action` on a registration of `kind`. */
export const auditAction = (kind: RegistrationKind, action: RegistrationAction): string => `${kind.name}.${action}`

/**
 * The names an older release recorded for what is now `<kind>.<action>`: an owner's changes
 * to an OAuth application. Kept for readers of old rows (the audit summaries).
 */
export const formerAuditActions: Readonly<Record<string, string>> = {
  'account.app_create': 'app.create',
  'account.app_edit': 'app.edit',
  'account.app_rotate_secret': 'app.rotate_secret',
  'account.app_delete': 'app.delete',
}

/** The account pages' addresses of one registration. */
export function accountPaths(kind: RegistrationKind) {
  const item = (id: string) => `${kind.accountBase}/${encodeURIComponent(id)}`
  return {
    item,
    /** The page a registration or rotation redirects to: the new secret, once. */
    newSecret: (id: string) => `${item(id)}/new-secret`,
    rotateSecret: (id: string) => `${item(id)}/rotate-secret`,
    delete: (id: string) => `${item(id)}/delete`,
    /** The slot the new secret waits in, beside the session that made it. */
    slot: (id: string) => `${kind.slot}:${id}`,
  }
}

/**
 * The address an older release posted a rotation to (`<base>/:param/rotate`): 308 to
 * `rotate-secret`, which keeps the method and the form, so the post is made there.
 */
export function formerRotatePath(app: FastifyInstance, kind: RegistrationKind, param: string): void {
  app.post(`${kind.accountBase}/:${param}/rotate`, async (request, reply) => {
    request.routeName = 'account'
    const id = (request.params as Record<string, string>)[param] ?? ''
    const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : ''
    return reply.redirect(`${accountPaths(kind).rotateSecret(id)}${query}`, 308)
  })
}

/** A rotation's result as a kind's store gives it: the new secret and until when the old one works, or why none was made. */
export type Rotated = { secret: string; previousUntil: Date | null } | 'not_found' | 'no_secret'

/** What the owner's confirmed rotation on the account pages is given by its kind's page. */
export interface AccountRotation {
  kind: RegistrationKind
  reply: FastifyReply
  /** The posted form (its `overlap`: none posted is the default, a day). */
  form: URLSearchParams
  id: string
  actor: AuditActor
  audited: Audited
  /** The owner's user ID when the kind's audit rows carry it (the applications' do). */
  user?: string
  rotate(overlapSeconds: OverlapSeconds): Promise<Rotated>
  hold(slot: string, shown: { secret: string; previousUntil: Date | null }): Promise<void>
  /** The kind's page for a refusal: an overlap the page does not offer (400), a registration gone (404), a public client (409). */
  refuse(why: 'overlap' | 'not_found' | 'no_secret'): unknown
}

/**
 * The owner's rotation once confirmed: the overlap chosen, the new secret made, audited
 * (`<kind>.rotate_secret`), held for the page that shows it once, and 303 to that page.
 */
export async function rotateOnAccount(o: AccountRotation): Promise<unknown> {
  const overlapSeconds = postedOverlap(field(o.form, 'overlap'))
  if (overlapSeconds === null) return o.refuse('overlap')
  const rotated = await o.rotate(overlapSeconds)
  if (rotated === 'not_found' || rotated === 'no_secret') return o.refuse(rotated)
  const overlap = rotationAudit(overlapSeconds, rotated.previousUntil)
  const [before, after] = o.user === undefined ? [null, overlap] : [{ user: o.user }, { user: o.user, ...overlap }]
  await o.audited(o.actor, { kind: o.kind.auditKind, action: auditAction(o.kind, 'rotate_secret'), target: o.id, before, after })
  const paths = accountPaths(o.kind)
  await o.hold(paths.slot(o.id), { secret: rotated.secret, previousUntil: rotated.previousUntil })
  return seeOther(o.reply, paths.newSecret(o.id))
}
