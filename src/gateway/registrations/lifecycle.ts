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
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { AuditActor, Audited } from '../audit/audited.js'
import type { AuditKind } from '../audit/store.js'
import { overlapFromBody, postedOverlap, rotationAudit, type OverlapSeconds } from '../domain/secret-rotation.js'
import { ApiError } from '../../common/errors.js'
import { operatorActor } from '../audit/audited.js'
import { field } from '../account-area/form.js'
import { overlapChoice } from '../account-area/pages.js'
import type { Confirmation } from '../account-area/confirm.js'
import type { SignedInSession } from '../account-area/posted-form.js'
import type { AccountArea } from '../account-area/index.js'
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
  /** The path parameter naming one registration on its account pages (`key`, `id`). */
  param: string
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
export function formerRotatePath(app: FastifyInstance, kind: RegistrationKind): void {
  app.post(`${kind.accountBase}/:${kind.param}/rotate`, async (request, reply) => {
    request.routeName = 'account'
    const id = (request.params as Record<string, string>)[kind.param] ?? ''
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

/** The confirmation page's words for a new secret of one registration (the overlap choice is added). */
export type RotationWords = Omit<Confirmation, 'action' | 'choice'>

/** What a kind's account pages give for the rotation route of one registration `T`. */
export interface AccountRotationRoute<T> {
  kind: RegistrationKind
  /** The signed-in owner's post about their own registration (CSRF-checked), or null after answering. */
  owned(request: FastifyRequest, reply: FastifyReply): Promise<{ session: SignedInSession; form: URLSearchParams; item: T } | null>
  idOf(item: T): string
  /** Before asking: true when this registration has no secret to rotate (a public client). */
  secretless?(item: T): boolean
  words(item: T): RotationWords
  confirmFirst(reply: FastifyReply, session: SignedInSession, form: URLSearchParams, o: Confirmation): FastifyReply | null
  actor(request: FastifyRequest, session: SignedInSession): AuditActor
  audited: Audited
  /** Whether the audit rows name the owner in before and after (the applications' do). */
  auditUser?: boolean
  hold(session: SignedInSession, slot: string, shown: { secret: string; previousUntil: Date | null }): Promise<void>
  rotate(item: T, overlapSeconds: OverlapSeconds): Promise<Rotated>
  refuse(reply: FastifyReply, session: SignedInSession, item: T, why: 'overlap' | 'not_found' | 'no_secret'): unknown
}

/**
 * The owner's rotation on the account pages, `<base>/:param/rotate-secret`: asks first (with
 * the overlap choice), then rotates (rotateOnAccount); and the older `/rotate` address, 308.
 */
export function registerAccountRotation<T>(app: FastifyInstance, r: AccountRotationRoute<T>): void {
  const paths = accountPaths(r.kind)
  app.post(`${r.kind.accountBase}/:${r.kind.param}/rotate-secret`, async (request, reply) => {
    const owned = await r.owned(request, reply)
    if (!owned) return reply
    const { session, form, item } = owned
    const id = r.idOf(item)
    if (r.secretless?.(item)) return r.refuse(reply, session, item, 'no_secret')
    const asked = r.confirmFirst(reply, session, form, { ...r.words(item), action: paths.rotateSecret(id), choice: overlapChoice })
    if (asked) return asked
    return rotateOnAccount({
      kind: r.kind,
      reply,
      form,
      id,
      actor: r.actor(request, session),
      audited: r.audited,
      ...(r.auditUser ? { user: session.user.id } : {}),
      rotate: (overlapSeconds) => r.rotate(item, overlapSeconds),
      hold: (slot, shown) => r.hold(session, slot, shown),
      refuse: (why) => r.refuse(reply, session, item, why),
    })
  })
  formerRotatePath(app, r.kind)
}

/** The parts of a rotation route the account area gives a kind whose pages are registered on it (sites, OpenID Connect clients). */
export function areaRotation<T>(area: AccountArea, audited: Audited, own: (request: FastifyRequest, reply: FastifyReply, session: SignedInSession) => Promise<T | null>) {
  return {
    owned: async (request: FastifyRequest, reply: FastifyReply) => {
      const owned = await area.ownedPost(request, reply, own)
      return owned && { session: owned.posted.session, form: owned.posted.form, item: owned.item }
    },
    confirmFirst: area.confirmFirst,
    actor: (request: FastifyRequest, session: SignedInSession) => area.actor(request, session),
    audited,
    hold: (session: SignedInSession, slot: string, shown: { secret: string; previousUntil: Date | null }) => area.holdNewSecret(session, slot, shown),
  } satisfies Partial<AccountRotationRoute<T>>
}

/** What a kind's operator API gives for `POST <collection>/:id/rotate-secret`. */
export interface OperatorRotation {
  kind: RegistrationKind
  request: FastifyRequest
  id: string
  audited: Audited
  rotate(overlapSeconds: OverlapSeconds): Promise<Rotated>
  /** The answer when there is no such registration (404 in the kind's words). */
  notFound(): ApiError
  /** The answer's id and secret fields (`{ api_key, secret }`). */
  answer(secret: string): Record<string, string>
}

/**
 * The operator's rotation: the optional body `{"overlap_seconds": N}` (a day without it; anything
 * else 400), the new secret made, audited (`<kind>.rotate_secret` by the operator), and
 * answered once with the overlap and until when the old secret works.
 */
export async function rotateOnOperator(o: OperatorRotation): Promise<Record<string, unknown>> {
  const overlapSeconds = overlapFromBody(o.request.body)
  const rotated = await o.rotate(overlapSeconds)
  if (rotated === 'not_found') throw o.notFound()
  if (rotated === 'no_secret') throw new ApiError(409, 'conflict', 'This is a public client: it has no secret to rotate')
  const overlap = rotationAudit(overlapSeconds, rotated.previousUntil)
  await o.audited(operatorActor(o.request), { kind: o.kind.auditKind, action: auditAction(o.kind, 'rotate_secret'), target: o.id, before: null, after: overlap })
  return { ...o.answer(rotated.secret), ...overlap }
}
