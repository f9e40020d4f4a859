// The dashboard's sign-in cookie (docs/security.md#operator-sessions): a browser cannot
// send the admin bearer token, so a form takes it once and the dashboard sets a session
// cookie. The cookie never holds the token: it holds a random session token whose record
// is in the gateway's store (session-store.ts), ended by sign-out, by `kigo admin sessions
// revoke` and by a change of KIGO_ADMIN_TOKEN. HttpOnly, SameSite=Strict, path /admin.

export const sessionCookie = 'kigo_admin_session'
export const sessionSeconds = 12 * 3600

/** The cookie's attributes (@fastify/cookie's reply.setCookie; clearing uses the same with Max-Age=0). */
export const sessionCookieOptions = { path: '/admin', httpOnly: true, sameSite: 'strict' } as const
