// Where the account login form may send a visitor on once they are signed in: a local
// page of one of the account area's users (the account pages, the OAuth authorize step,
// the login API's sign-in, …), never another origin. A feature whose pages need a
// signed-in visitor adds its path to `returnPaths`.

/** Local paths (and everything under them) a sign-in may return to. */
export const returnPaths: readonly string[] = ['/account', '/oauth/authorize', '/auth', '/oidc/interaction']

const escaped = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
const returnPattern = new RegExp(`^(${returnPaths.map(escaped).join('|')})(?=[/?]|$)`)

/** `value` when it is a local path a sign-in may return to, else null. */
export function safeNext(value: string | null | undefined): string | null {
  if (typeof value !== 'string' || value.length > 4096) return null
  if (!returnPattern.test(value)) return null
  if (/[\\\s\u0000-\u001f\u007f]/.test(value) || value.includes('/..') || value.startsWith('//')) return null
  return value
}
