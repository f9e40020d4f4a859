// oauth_callback (RFC 5849 §2.1, docs/security.md#oauth-callbacks): `oob` or an absolute
// http/https URL; when the application registered a callback, a URL must share its
// origin (scheme, host and port), so that a stolen consumer key cannot send verifiers
// elsewhere.
//
// The callback is read by the WHATWG URL parser (the one browsers follow the redirect
// with), and what kigo stores and redirects to is that parser's serialisation, so the
// origin compared is the origin the browser goes to. Spellings that parsers disagree on
// are refused rather than normalised: a backslash (WHATWG reads it as `/` in http URLs,
// RFC 3986 parsers as data, so `https://good.example\@evil.example/` names two different
// hosts), user-info (`user@host`), and control or white-space characters, raw or
// percent-encoded in the authority (WHATWG drops a raw tab or newline silently).
import { percentEncode } from '../auth/oauth/percent-encode.js'
import { checkCallbackUrl, InvalidInput, urlAmbiguity } from '../store/validation.js'

export const outOfBand = 'oob'

export type CallbackCheck = { ok: true; callback: string } | { ok: false; message: string }

export { urlAmbiguity, type UrlAmbiguity } from '../store/validation.js'

const ambiguity = (value: string): string | null => urlAmbiguity(value)?.message ?? null

export function checkOAuthCallback(value: string, registered: string | null): CallbackCheck {
  if (value === outOfBand) return { ok: true, callback: value }
  const why = ambiguity(value)
  if (why !== null) return { ok: false, message: `oauth_callback is refused: ${why}` }
  try {
    checkCallbackUrl(value)
  } catch (err) {
    if (err instanceof InvalidInput) return { ok: false, message: `oauth_callback must be "oob" or an absolute http or https URL (${err.message})` }
    throw err
  }
  const url = new URL(value)
  if (registered !== null) {
    let origin: string
    try {
      origin = new URL(registered).origin
    } catch {
      return { ok: false, message: 'the application\'s registered callback cannot be read; ask its owner to register it again' }
    }
    if (url.origin !== origin) {
      return { ok: false, message: `oauth_callback must be "oob" or share the scheme, host and port of the registered callback (${origin})` }
    }
  }
  return { ok: true, callback: url.href }
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
