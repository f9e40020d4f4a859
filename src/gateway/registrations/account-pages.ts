// The account pages of one kind of registered client (docs/gateway.md#rotating-a-secret),
// written once for every kind: register (the secret shown once, on the page the post
// redirects to, docs/gateway.md#a-new-secret-is-shown-once), edit, rotate the secret with
// an overlap (lifecycle.ts) and delete, each post CSRF-checked by the account area and
// made only by the registration's owner, each change audited as `<kind>.<action>`.
//
// A kind gives a descriptor (`RegistrationPages`): its store calls, how its forms are read
// and checked, and its pages and their words; the routes, the owner check, the order of
// the steps (read, check, prove the person, store, audit, hold the secret, 303) and the
// addresses are this module's:
// - `POST <base>` registers, then 303 to `<base>/<id>/new-secret`;
// - `GET <base>/<id>/new-secret` shows the new secret the first time the session that
//   made it opens it (a reload shows it no more);
// - `POST <base>/<id>/edit` changes what the form gives, refused whole when one value is
//   wrong (the form again, as typed, with why and "Nothing was changed."); a change that
//   sends people somewhere new asks for the current password unless the sign-in is recent;
// - `POST <base>/<id>/rotate-secret` and `POST <base>/<id>/delete` ask first (a
//   confirmation page whose button posts again with `confirm=yes`); with `confirmLinks`,
//   a link (GET) to either shows that confirmation too.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Audited } from '../audit/audited.js'
import type { AccountArea } from '../account-area/index.js'
import type { Confirmation } from '../account-area/confirm.js'
import { field } from '../account-area/form.js'
import { seeOther } from '../account-area/html.js'
import { overlapChoice, type ShownSecret } from '../account-area/pages.js'
import type { SignedInSession } from '../account-area/posted-form.js'
import { InvalidInput, refused } from '../store/validation.js'
import { accountPaths, areaRotation, auditAction, registerAccountRotation, type AccountRotationRoute, type RegistrationKind } from './lifecycle.js'

/** Why a posted form was refused before the store was asked: shown with the form as typed (400 unless said). */
export class FormRefusal {
  constructor(
    readonly error: string,
    readonly status = 400,
  ) {}
}

/** A registration as the store made it: the registration, and its secret (none for a public client). */
export interface Created<T> {
  item: T
  secret: string | null
}

/** How a kind registers one (`POST <base>`), with the form as typed `I` and what its store is given `D`. */
export interface Registering<T, I, D> {
  read(form: URLSearchParams): I
  /** When true, no registration is taken (a policy closed them): `refuse` answers 403 with no error. */
  closed?(): boolean
  /** What the store is given, or why not. */
  check(input: I, session: SignedInSession): D | FormRefusal
  /** The store's registration; an `InvalidInput` it throws is refused with `refusal`'s words. */
  create(details: D, session: SignedInSession): Promise<Created<T>>
  refusal(err: InvalidInput): string
  /** The registration form again, as typed, with why (none when it is closed). */
  refuse(reply: FastifyReply, session: SignedInSession, input: I, status: number, error?: string): unknown
  /** The registration as the audit trail records it (`after`). */
  auditView(item: T, session: SignedInSession): unknown
}

/** How a kind edits one (`POST <base>/<id>/edit`). */
export interface Editing<T, I, D> {
  read(form: URLSearchParams): I
  /** What the store is given, or why not. */
  check(input: I, item: T): D | FormRefusal
  /** What to ask for when the change needs the current password (it sends people somewhere new), or null. */
  proofAsked(details: D, item: T): string | null
  /** The store's edit: the registration before and after, or null when it is gone. */
  update(item: T, details: D): Promise<{ before: T; after: T } | null>
  refusal(err: InvalidInput): string
  /** The edit form again, as typed, with why (its words end with "Nothing was changed."). */
  refuse(reply: FastifyReply, session: SignedInSession, item: T, input: I, status: number, error: string): unknown
  /** The registration as the audit trail records it (`before` and `after`). */
  auditView(item: T): unknown
  /** Where a saved edit leads (default `<base>?notice=edited`). */
  done?(item: T): string
}

/** How a kind deletes one (`POST <base>/<id>/delete`, confirmed first). */
export interface Deleting<T> {
  /** The confirmation page's words. */
  words(item: T): Omit<Confirmation, 'action'>
  /** The store's deletion: what the audit trail records as `before`, or null when nothing was left to delete (nothing is recorded). */
  remove(item: T): Promise<unknown>
  /** Where a deletion leads (default `<base>?notice=deleted`). */
  done?: string
}

/** A registration as the pages need it: whose it is. */
export interface Owned {
  ownerId: string
}

/** One kind's account pages: registrations `T`, registered with `RI`/`RD`, edited with `EI`/`ED`. */
export interface RegistrationPages<T extends Owned, RI, RD, EI, ED> {
  kind: RegistrationKind
  audited: Audited
  /** The registration named `id`, whoever owns it, or null. */
  find(id: string): Promise<T | null>
  idOf: (item: T) => string
  /** The 404 page for a registration the signed-in user does not own (or that is gone). */
  notOwned(reply: FastifyReply, session: SignedInSession): unknown
  /** A page's answer to a signed-out visitor (default: the area's sign-in form, back to `next`). */
  signIn?: (request: FastifyRequest, reply: FastifyReply, next: string) => Promise<SignedInSession | null>
  /** The list (`GET <base>`), with the notice a redirect named, if the kind has one. */
  list?: {
    notices: { edited: string; deleted: string }
    show(reply: FastifyReply, session: SignedInSession, notice: string | undefined): unknown
  }
  register: Registering<T, RI, RD>
  edit: Editing<T, EI, ED>
  rotation: Pick<AccountRotationRoute<T>, 'words' | 'secretless' | 'rotate' | 'refuse' | 'auditUser'>
  deletion: Deleting<T>
  /** The page a registration or rotation redirects to: the new secret the first time, null after (and always for a secretless one). */
  showSecret(request: FastifyRequest, reply: FastifyReply, session: SignedInSession, item: T, shown: ShownSecret | null): unknown
  /** A link (GET) to the rotation or deletion shows its confirmation page (for pages without forms in their rows). */
  confirmLinks?: boolean
}

/** What the routes give back for a kind's other pages: the owner's registration named in the path. */
export interface OwnedPages<T> {
  /** The signed-in user's own registration, or null after answering 404. */
  own: (request: FastifyRequest, reply: FastifyReply, session: SignedInSession) => Promise<T | null>
  /** A page's signed-in owner and registration, or null after answering (the sign-in, back to `next`, or 404). */
  ownedPage: (request: FastifyRequest, reply: FastifyReply, next: string) => Promise<{ session: SignedInSession; item: T } | null>
}

/**
 * After a registration: its new secret held for the page that shows it once (none for a
 * public client), and 303 to that page, so that a reload re-reads and never registers again.
 */
export async function showSecretOnce(area: Pick<AccountArea, 'holdNewSecret'>, reply: FastifyReply, session: SignedInSession, kind: RegistrationKind, id: string, secret: string | null): Promise<FastifyReply> {
  const paths = accountPaths(kind)
  if (secret !== null) await area.holdNewSecret(session, paths.slot(id), { secret })
  return seeOther(reply, paths.newSecret(id))
}

// IDs and keys are base64url: anything else is not sent back to after signing in.
const plainId = /^[A-Za-z0-9_-]{1,128}$/

/** Registers a kind's account pages on the account area (see the header); gives what its other pages need. */
export function registerRegistrationPages<T extends Owned, RI, RD, EI, ED>(app: FastifyInstance, area: AccountArea, d: RegistrationPages<T, RI, RD, EI, ED>): OwnedPages<T> {
  const { kind } = d
  const param = kind.param
  const base = kind.accountBase
  const paths = accountPaths(kind)
  const signIn = d.signIn ?? ((request: FastifyRequest, reply: FastifyReply, next: string) => area.requireSignIn(request, reply, { next }))
  const audit = (request: FastifyRequest, session: SignedInSession, action: 'create' | 'edit' | 'delete', target: string, before: unknown, after: unknown) =>
    d.audited(area.actor(request, session), { kind: kind.auditKind, action: auditAction(kind, action), target, before, after })

  const idParam = (request: FastifyRequest) => (request.params as Record<string, string>)[param] ?? ''
  const own = async (request: FastifyRequest, reply: FastifyReply, session: SignedInSession): Promise<T | null> => {
    const found = await d.find(idParam(request))
    if (found !== null && found.ownerId === session.user.id) return found
    await d.notOwned(reply, session)
    return null
  }
  const ownedPage = async (request: FastifyRequest, reply: FastifyReply, next: string) => {
    request.routeName = 'account'
    const session = await signIn(request, reply, next)
    const item = session && (await own(request, reply, session))
    return session && item !== null ? { session, item } : null
  }

  if (d.list) {
    const list = d.list
    app.get(base, async (request, reply) => {
      request.routeName = 'account'
      const session = await area.requireSignIn(request, reply, { next: base })
      if (!session) return reply
      const n = (request.query as Record<string, unknown>).notice
      return list.show(reply, session, n === 'deleted' ? list.notices.deleted : n === 'edited' ? list.notices.edited : undefined)
    })
  }

  const r = d.register
  app.post(base, async (request, reply) => {
    request.routeName = 'account'
    const posted = await area.signedInPost(request, reply)
    if (!posted) return reply
    const { session, form } = posted
    const input = r.read(form)
    if (r.closed?.() === true) return r.refuse(reply, session, input, 403)
    const details = r.check(input, session)
    if (details instanceof FormRefusal) return r.refuse(reply, session, input, details.status, details.error)
    let created: Created<T>
    try {
      created = await r.create(details, session)
    } catch (err) {
      if (err instanceof InvalidInput) return r.refuse(reply, session, input, 400, r.refusal(err))
      throw err
    }
    const id = d.idOf(created.item)
    await audit(request, session, 'create', id, null, r.auditView(created.item, session))
    return showSecretOnce(area, reply, session, kind, id, created.secret)
  })

  // The page a registration or rotation redirects to: the new secret, the first time the
  // session that made it opens it; opened again, the registration without it.
  app.get(`${base}/:${param}/new-secret`, async (request, reply) => {
    const owned = await ownedPage(request, reply, paths.newSecret(idParam(request)))
    if (!owned) return reply
    const { session, item } = owned
    const shown = d.rotation.secretless?.(item) === true ? null : await area.takeNewSecret(session, paths.slot(d.idOf(item)))
    return d.showSecret(request, reply, session, item, shown)
  })

  // Checked as a registration is, and refused whole. Every kind's store is read on each
  // request that uses the registration, so every gateway uses the change at once.
  const e = d.edit
  app.post(`${base}/:${param}/edit`, async (request, reply) => {
    const owned = await area.ownedPost(request, reply, own)
    if (!owned) return reply
    const { posted: { session, form }, item } = owned
    const input = e.read(form)
    const refuse = (status: number, error: string) => e.refuse(reply, session, item, input, status, `${error} Nothing was changed.`)
    const details = e.check(input, item)
    if (details instanceof FormRefusal) return refuse(details.status, details.error)
    // A new place to send people to needs proof of the owner, not only of the session.
    const asked = e.proofAsked(details, item)
    if (asked !== null && (await area.proof.unproven(request, reply, session, field(form, 'current_password') ?? '', refuse, asked, { orRecentSignIn: true }))) return reply
    const edited = await e.update(item, details).catch(refused)
    if (edited instanceof InvalidInput) return refuse(400, e.refusal(edited))
    if (!edited) return d.notOwned(reply, session)
    await audit(request, session, 'edit', d.idOf(item), e.auditView(edited.before), e.auditView(edited.after))
    return seeOther(reply, e.done?.(item) ?? `${base}?notice=edited`)
  })

  registerAccountRotation(app, { ...areaRotation(area, d.audited, own), ...d.rotation, kind, idOf: d.idOf })

  app.post(`${base}/:${param}/delete`, async (request, reply) => {
    const owned = await area.ownedPost(request, reply, own)
    if (!owned) return reply
    const { posted: { session, form }, item } = owned
    const id = d.idOf(item)
    const asked = area.confirmFirst(reply, session, form, { ...d.deletion.words(item), action: paths.delete(id) })
    if (asked) return asked
    const before = await d.deletion.remove(item)
    if (before !== null) await audit(request, session, 'delete', id, before, null)
    return seeOther(reply, d.deletion.done ?? `${base}?notice=deleted`)
  })

  if (d.confirmLinks === true) {
    // The link's page: the confirmation, whose button posts confirmed.
    for (const action of ['rotate-secret', 'delete'] as const) {
      app.get(`${base}/:${param}/${action}`, async (request, reply) => {
        const id = idParam(request)
        const owned = await ownedPage(request, reply, plainId.test(id) ? `${paths.item(id)}/${action}` : base)
        if (!owned) return reply
        const { session, item } = owned
        if (action === 'rotate-secret' && d.rotation.secretless?.(item) === true) return d.rotation.refuse(reply, session, item, 'no_secret')
        const words = action === 'delete' ? d.deletion.words(item) : { ...d.rotation.words(item), choice: overlapChoice }
        return area.confirmFirst(reply, session, new URLSearchParams(), { ...words, action: `${paths.item(d.idOf(item))}/${action}` })
      })
    }
  }

  return { own, ownedPage }
}
