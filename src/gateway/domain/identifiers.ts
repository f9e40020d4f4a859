// The gateway's vocabulary that every part of it shares (verifiers, provider, operator API,
// store): what a user ID may look like and which OAuth scopes exist. Here, so that the
// verifiers and the provider need not reach into the store for them.

/** OAuth scopes (docs/gateway.md#the-oauth-provider-and-the-account-pages): the route table (src/common/route-table.ts) owns the list. */
export { scopes, type Scope } from '../../common/route-table.js'

/** The longest user ID there can be (docs/gateway.md#the-oauth-provider-and-the-account-pages). */
export const maxUserIdLength = 32

/** A user ID (docs/gateway.md#the-oauth-provider-and-the-account-pages): a letter, then letters, digits, `_` or `-`; 3 to 32 characters. */
export const userIdPattern = new RegExp(`^[A-Za-z][A-Za-z0-9_-]{2,${maxUserIdLength - 1}}$`)
