// Account-area sessions (docs/gateway.md#the-oauth-provider-and-the-account-pages): the cookie holds only a random id (the store keeps its
// hash and an expiry); every form carries the session's synchronizer CSRF token. A
// visitor who is not signed in gets a short signed-out session, so that the login form
// is CSRF-protected too; signing in replaces it with a new id (no session fixation).
// The cookie is bound to the deployment it was issued at (docs/gateway.md#deployments): its value is the id
// followed by an HMAC of the deployment and the id, so a session of one deployment is no
// session at the other, whatever host names the browser shares them under.
import { createHmac } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { fastifyCookie } from '@fastify/cookie'
import type { Deployment } from '../../common/deployment.js'
import { deriveKey, safeEqual } from '../../common/secrets.js'
import type { ProviderRepository, User, WebSession } from '../store/types.js'
import type { ShownSecret } from './pages.js'

export const sessionCookie = 'kigo_session'

/** How long a new secret waits for the page that shows it (the redirect is followed at once). */
export const shownSecretTtlSeconds = 600

export interface Session {
  id: string
  user: User | null
  csrfToken: string
  /** When the session began, ms: a signed-in session begins at the sign-in (a new id each time). */
  signedInAt: number
}

export interface SessionSettings {
  /** Lifetime of a signed-in session (absolute), seconds. */
  ttlSeconds: number
  /** Lifetime of a signed-out session (it only protects the login form), seconds. */
  visitorTtlSeconds: number
}

// The cookie is parsed and written by @fastify/cookie (registered by the provider and
// account-area plugins): HttpOnly, SameSite=Lax, Path=/, Secure when the public scheme is https.
const cookieOptions = (secure: boolean) => ({ path: '/', httpOnly: true, sameSite: 'lax', secure }) as const

/** Length of the binding appended to the id (32 bytes, base64url). */
const bindingLength = 43

/** The cookie value of a session id at a deployment, and the id a cookie value holds there. */
export interface SessionBinding {
  seal(id: string, deployment: Deployment): string
  /** The session id, or null when the value was not issued at `deployment`. */
  open(value: string, deployment: Deployment): string | null
}

export function sessionBinding(secretKey: string): SessionBinding {
  const key = deriveKey(secretKey, 'account session deployment')
  const mac = (id: string, deployment: Deployment) => createHmac('sha256', key).update(`${deployment}\n${id}`).digest('base64url')
  return {
    seal: (id, deployment) => id + mac(id, deployment),
    open(value, deployment) {
      if (value.length <= bindingLength) return null
      const id = value.slice(0, -bindingLength)
      return safeEqual(value.slice(-bindingLength), mac(id, deployment)) ? id : null
    },
  }
}

/** The live session a cookie value holds at `deployment`, with its id, or null. */
async function openSession(store: Pick<ProviderRepository, 'getWebSession'>, binding: SessionBinding, now: number, value: string | undefined, deployment: Deployment | undefined): Promise<{ id: string; found: WebSession } | null> {
  if (value === undefined || value === '' || deployment === undefined) return null
  const id = binding.open(value, deployment)
  if (id === null) return null
  const found = await store.getWebSession(id, new Date(now))
  return found && { id, found }
}

/**
 * The signed-in user a request's Cookie header names at `deployment`, or null: for a
 * public page the gateway forwards to the core, whose header then names the reader (the
 * cookie itself never goes on). Read only when the header carries the session cookie.
 */
export function signedInReader(store: Pick<ProviderRepository, 'getWebSession'>, secretKey: string, now: () => number): (cookieHeader: string, deployment: Deployment) => Promise<User | null> {
  const binding = sessionBinding(secretKey)
  return async (cookieHeader, deployment) => {
    if (!cookieHeader.includes(`${sessionCookie}=`)) return null
    const opened = await openSession(store, binding, now(), fastifyCookie.parse(cookieHeader)[sessionCookie], deployment)
    return opened?.found.user ?? null
  }
}

export class Sessions {
  constructor(
    private readonly store: ProviderRepository,
    private readonly settings: SessionSettings,
    private readonly now: () => number,
    private readonly binding: SessionBinding,
  ) {}

  /** The request's live session at its deployment, or null. */
  async current(request: FastifyRequest): Promise<Session | null> {
    const opened = await openSession(this.store, this.binding, this.now(), request.cookies[sessionCookie], request.deployment?.name)
    return opened && { id: opened.id, user: opened.found.user, csrfToken: opened.found.csrfToken, signedInAt: opened.found.createdAt.getTime() }
  }

  /**
   * For a page anyone may read (the guides): the signed-in user and their session's CSRF
   * token, so that its header offers the account and "Sign out" rather than "Sign in";
   * nothing for a visitor (no session is started for them).
   */
  async viewer(request: FastifyRequest): Promise<{ user?: User; csrfToken?: string }> {
    const session = await this.current(request)
    return session?.user ? { user: session.user, csrfToken: session.csrfToken } : {}
  }

  /** The request's session, or a new signed-out one (its cookie set on `reply`). */
  async currentOrVisitor(request: FastifyRequest, reply: FastifyReply, secure: boolean): Promise<Session> {
    return (await this.current(request)) ?? this.start(request, reply, null, secure)
  }

  /** Starts a session (a new id) for `user` at the request's deployment, or a signed-out one for null. */
  async start(request: FastifyRequest, reply: FastifyReply, user: User | null, secure: boolean): Promise<Session> {
    const ttl = user ? this.settings.ttlSeconds : this.settings.visitorTtlSeconds
    const now = this.now()
    const { id, csrfToken } = await this.store.createWebSession({ userId: user?.id ?? null, now: new Date(now), expiresAt: new Date(now + ttl * 1000) })
    void reply.setCookie(sessionCookie, this.binding.seal(id, request.deployment!.name), { ...cookieOptions(secure), maxAge: ttl })
    return { id, user, csrfToken, signedInAt: now }
  }

  /**
   * Holds a new secret for the page a registration or rotation redirects to (303), which
   * shows it once: beside the session in the shared store, sealed, for `shownSecretTtlSeconds`.
   * Never in the URL or a cookie; a reload of that page finds nothing and shows no secret.
   * `slot` names what the secret is of (`app:<key>`), so that only that thing's page shows it.
   */
  async holdNewSecret(session: Session, slot: string, shown: ShownSecret): Promise<void> {
    const held = { secret: shown.secret, ...(shown.previousUntil === undefined ? {} : { previousUntil: shown.previousUntil?.getTime() ?? null }) }
    await this.store.holdShownSecret(session.id, slot, JSON.stringify(held), new Date(this.now() + shownSecretTtlSeconds * 1000))
  }

  /** The secret `holdNewSecret` held under `slot` for this session, once (it is cleared as it is read), or null. */
  async takeNewSecret(session: Session, slot: string): Promise<ShownSecret | null> {
    const held = await this.store.takeShownSecret(session.id, slot, new Date(this.now()))
    if (held === null) return null
    const { secret, previousUntil } = JSON.parse(held) as { secret: string; previousUntil?: number | null }
    return { secret, ...(previousUntil === undefined ? {} : { previousUntil: previousUntil === null ? null : new Date(previousUntil) }) }
  }

  async end(session: Session, reply: FastifyReply, secure: boolean): Promise<void> {
    await this.store.deleteWebSession(session.id)
    void reply.clearCookie(sessionCookie, cookieOptions(secure))
  }
}

/** Whether a posted form carries the session's CSRF token (constant-time comparison). */
export function csrfMatches(session: Session | null, posted: string | null): boolean {
  if (session === null || posted === null || posted === '') return false
  return safeEqual(posted, session.csrfToken)
}
