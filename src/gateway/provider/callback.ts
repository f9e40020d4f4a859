// oauth_callback (RFC 5849 §2.1, SPEC §5): `oob` or an absolute http/https URL; when the
// application registered a callback, a URL must share its scheme, host and port, so that
// a stolen consumer key cannot send verifiers elsewhere.
import { percentEncode } from '../auth/oauth/percent-encode.js'
import { checkCallbackUrl, InvalidInput } from '../store/validation.js'

export const outOfBand = 'oob'

export type CallbackCheck = { ok: true; callback: string } | { ok: false; message: string }

export function checkOAuthCallback(value: string, registered: string | null): CallbackCheck {
  if (value === outOfBand) return { ok: true, callback: value }
  try {
    checkCallbackUrl(value)
  } catch (err) {
    if (err instanceof InvalidInput) return { ok: false, message: `oauth_callback must be "oob" or an absolute http or https URL (${err.message})` }
    throw err
  }
  if (registered !== null && new URL(value).origin !== new URL(registered).origin) {
    return { ok: false, message: `oauth_callback must be "oob" or share the scheme, host and port of the registered callback (${new URL(registered).origin})` }
  }
  return { ok: true, callback: value }
}

/** The origin a redirect to `callback` goes to (for the page's form-action), or none for oob. */
export function callbackOrigins(callback: string): string[] {
  if (callback === outOfBand) return []
  try {
    return [new URL(callback).origin]
  } catch {
    return []
  }
}

/**
 * The callback with parameters appended to its query (RFC 5849 §2.2: "MUST retain the
 * existing query components"); the callback was checked to have no fragment.
 */
export function callbackWith(callback: string, params: Record<string, string>): string {
  const query = Object.entries(params).map(([k, v]) => `${percentEncode(k)}=${percentEncode(v)}`).join('&')
  const q = callback.indexOf('?')
  if (q === -1) return `${callback}?${query}`
  return q === callback.length - 1 || callback.endsWith('&') ? callback + query : `${callback}&${query}`
}
