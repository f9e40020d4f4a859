// The oauth_verifier a user may have to type (RFC 5849 §2.2, the oob flow): 8 characters
// from an alphabet without look-alikes (no 0/O, 1/I/L, no lower case), about 40 bits.
// Short is safe here because a verifier is useless alone: it is exchanged once, within
// the request token's 10 minutes, in a request signed with the request token's secret,
// which only the client holds. What the user types is read leniently (case, spaces, dashes).
import { randomInt } from 'node:crypto'

export const verifierAlphabet = '23456789ABCDEFGHJKMNPQRSTUVWXYZ'
export const verifierLength = 8

export function newVerifier(): string {
  let out = ''
  for (let i = 0; i < verifierLength; i++) out += verifierAlphabet[randomInt(verifierAlphabet.length)]
  return out
}

/** The verifier as typed, in its canonical form: upper case, without spaces or dashes. */
export function normalizeVerifier(typed: string): string {
  return typed.replace(/[\s-]+/g, '').toUpperCase()
}
