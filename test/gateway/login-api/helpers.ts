// A login-API site as the tests drive it: URLs signed by this file's own MD5 signer
// (written from docs/login-api.md, not taken from the gateway), and the browser side of
// a sign-in through the account area's login form and the consent page.
import { createHash } from 'node:crypto'
import { expect } from 'vitest'
import { WebClient, codeOf, csrfOf, hiddenField } from '../provider/helpers.js'

export { WebClient, codeOf, csrfOf, hiddenField }

export interface Site {
  api_key: string
  secret: string
  name: string
  callback: string
}

/** md5(secret + name1 + value1 + …), names sorted, api_sig left out. */
export function sign(secret: string, params: Record<string, string>): string {
  const names = Object.keys(params).filter((n) => n !== 'api_sig').sort()
  return createHash('md5').update(secret + names.map((n) => n + params[n]).join('')).digest('hex')
}

/** `/auth?api_key=…&extra…&api_sig=…` for `site`. */
export function signInPath(site: Pick<Site, 'api_key' | 'secret'>, extra: Record<string, string> = {}): string {
  const params = { api_key: site.api_key, ...extra }
  return `/auth?${new URLSearchParams({ ...params, api_sig: sign(site.secret, params) })}`
}

/** `/api/auth.{format}?api_key=…&cert=…&api_sig=…` for `site`. */
export function exchangePath(site: Pick<Site, 'api_key' | 'secret'>, cert: string, format: 'json' | 'xml' = 'json'): string {
  const params = { api_key: site.api_key, cert }
  return `/api/auth.${format}?${new URLSearchParams({ ...params, api_sig: sign(site.secret, params) })}`
}

/**
 * Goes through the sign-in at `path` as the browser `web` (signing in with the login form
 * when it is shown) and answers the consent page with `decision`; returns the last answer.
 */
export async function signInThrough(web: WebClient, path: string, user: { id: string; password: string }, decision: 'allow' | 'deny' = 'allow') {
  let page = await web.get(path)
  if (hiddenField(page.text, 'next') !== null) {
    expect(page.text).toContain('name="username"')
    const login = await web.post('/account/login', { csrf_token: csrfOf(page.text), next: hiddenField(page.text, 'next')!, username: user.id, password: user.password })
    expect(login.status).toBe(303)
    expect(login.headers.get('location')).toBe(path)
    page = await web.get(login.headers.get('location')!)
  }
  expect(page.status).toBe(200)
  return { consent: page, answer: await web.post('/auth', { csrf_token: csrfOf(page.text), request: hiddenField(page.text, 'request')!, decision }) }
}

/** The cert and the other parameters of a 302 to the site's callback. */
export function callbackOf(location: string | null, callback: string): URLSearchParams {
  expect(location).not.toBeNull()
  expect(location!.startsWith(callback)).toBe(true)
  return new URL(location!).searchParams
}
