// Scopes as the provider reads them from clients (docs/gateway.md#the-oauth-provider-and-the-account-pages: `scope`, comma-separated) and
// as the consent and account pages describe them to people.
import { scopes as allScopes, type Scope } from '../domain/identifiers.js'

/** What each scope lets an application do, in the words the consent page uses. */
export const scopeDescriptions: Record<Scope, string> = {
  read_public: 'See your public entries and stars',
  write_public: 'Post and delete entries and add or remove stars for you',
  read_private: 'See your private data, such as photo folders',
  write_private: 'Upload photos for you',
}

export type ParsedScopes = { ok: true; scopes: Scope[] } | { ok: false; message: string }

/**
 * A `scope` value: comma-separated names (white space around them ignored), each one of
 * docs/gateway.md#the-oauth-provider-and-the-account-pages's four, at least one. Returned in canonical order without duplicates.
 */
export function parseScopeParameter(value: string): ParsedScopes {
  const names = value.split(',').map((s) => s.trim()).filter((s) => s !== '')
  if (names.length === 0) return { ok: false, message: `scope lists no scope; use some of ${allScopes.join(', ')}` }
  const unknown = names.filter((n) => !(allScopes as readonly string[]).includes(n))
  if (unknown.length > 0) {
    return { ok: false, message: `Unknown scope ${unknown.map((u) => JSON.stringify(u.slice(0, 40))).join(', ')}; use some of ${allScopes.join(', ')}` }
  }
  return { ok: true, scopes: allScopes.filter((s) => names.includes(s)) }
}

/** Form checkboxes (`scope` repeated) on the registration page. */
export function scopesFromCheckboxes(values: string[]): Scope[] {
  return allScopes.filter((s) => values.includes(s))
}
