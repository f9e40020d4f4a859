// Account-area sessions (docs/gateway.md#the-oauth-provider-and-the-account-pages): the cookie holds only a random id (the store keeps its
// hash and an expiry); every form carries the session's synchronizer CSRF token. A
// visitor who is not signed in gets a short signed-out session, so that the login form
// is CSRF-protected too; signing in replaces it with a new id (no session fixation).
import type { FastifyReply, FastifyRequest } from 'fastify'
import { safeEqual } from '../../common/secrets.js'
import type { ProviderRepository, User } from '../store/types.js'

export const sessionCookie = 'kigo_session'

export interface Session {
  id: string
  user: User | null
  csrfToken: string
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

export class Sessions {
  constructor(
    private readonly store: ProviderRepository,
    private readonly settings: SessionSettings,
    private readonly now: () => number,
  ) {}

  /** The request's live session, or null. */
  async current(request: FastifyRequest): Promise<Session | null> {
    const id = request.cookies[sessionCookie]
    if (id === undefined || id === '') return null
    const found = await this.store.getWebSession(id, new Date(this.now()))
    return found && { id, user: found.user, csrfToken: found.csrfToken }
  }

  /** The request's session, or a new signed-out one (its cookie set on `reply`). */
  async currentOrVisitor(request: FastifyRequest, reply: FastifyReply, secure: boolean): Promise<Session> {
    return (await this.current(request)) ?? this.start(reply, null, secure)
  }

  /** Starts a session (a new id) for `user`, or a signed-out one for null. */
  async start(reply: FastifyReply, user: User | null, secure: boolean): Promise<Session> {
    const ttl = user ? this.settings.ttlSeconds : this.settings.visitorTtlSeconds
    const now = this.now()
    const { id, csrfToken } = await this.store.createWebSession({ userId: user?.id ?? null, now: new Date(now), expiresAt: new Date(now + ttl * 1000) })
    void reply.setCookie(sessionCookie, id, { ...cookieOptions(secure), maxAge: ttl })
    return { id, user, csrfToken }
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
