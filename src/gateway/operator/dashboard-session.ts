// The dashboard's sign-in (SPEC §6.4): a browser cannot send the admin bearer token, so a
// form takes it once and the dashboard sets a session cookie. The cookie never holds the
// token: it is `v1.<expiry>.<HMAC>` under a key derived from the token, so rotating
// KIGO_ADMIN_TOKEN ends every session. HttpOnly, SameSite=Strict, path /admin.
import { createHmac } from 'node:crypto'
import { safeEqual } from '../../common/secrets.js'

export const sessionCookie = 'kigo_admin_session'
export const sessionSeconds = 12 * 3600

function sessionKey(adminToken: string): Buffer {
  return createHmac('sha256', adminToken).update('kigo dashboard session v1').digest()
}

function mac(adminToken: string, payload: string): string {
  return createHmac('sha256', sessionKey(adminToken)).update(payload).digest('base64url')
}

/** A session value valid until `now` + 12 h. */
export function issueSession(adminToken: string, now: number): string {
  const payload = `v1.${Math.floor(now / 1000) + sessionSeconds}`
  return `${payload}.${mac(adminToken, payload)}`
}

export function validSession(adminToken: string, value: string | undefined, now: number): boolean {
  if (value === undefined || adminToken === '') return false
  const m = /^(v1\.([0-9]{1,12}))\.([A-Za-z0-9_-]{43})$/.exec(value)
  if (!m) return false
  if (!safeEqual(m[3]!, mac(adminToken, m[1]!))) return false
  return Number(m[2]) > now / 1000
}

export function sessionSetCookie(value: string): string {
  return `${sessionCookie}=${value}; Path=/admin; Max-Age=${sessionSeconds}; HttpOnly; SameSite=Strict`
}

export const sessionClearCookie = `${sessionCookie}=; Path=/admin; Max-Age=0; HttpOnly; SameSite=Strict`
