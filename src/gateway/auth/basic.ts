// HTTP Basic (RFC 7617, docs/gateway.md#http-basic): `Authorization: Basic base64(user-id ":" api-password)`,
// UTF-8. The password is the user's API password, never the login password.
//
// A malformed credential (bad Base64, not UTF-8, no colon) is a 401 with the challenge,
// like a wrong password: RFC 7617 §2 has the server answer any credential it cannot
// accept with a fresh challenge, and that is what Basic clients are built to handle.
import { randomToken, safeEqual } from '../../common/secrets.js'
import { userIdPattern } from '../domain/identifiers.js'
import { failure, type AuthFailure } from '../domain/auth-results.js'
import type { AuthRequest, AuthResult, CredentialLookup, CredentialVerifier } from '../domain/auth.js'

/** Compared against when the user does not exist, so that the answer costs the same work. */
const dummyPassword = randomToken(24)
const utf8 = new TextDecoder('utf-8', { fatal: true })
const maxCredentialLength = 4096

function malformed(message: string): AuthFailure {
  return failure('basic', 401, 'malformed_credentials', message, 'malformed')
}

/** The user id and password of a Basic credential, or a reason it is malformed. */
export function parseBasic(authorization: string): { userId: string; password: string } | string {
  if (authorization.length < 6 || authorization.slice(0, 6).toLowerCase() !== 'basic ') return 'Not a Basic credential'
  let i = 6
  while (authorization.charCodeAt(i) === 32) i++
  const token = authorization.slice(i).trimEnd()
  if (token.length === 0 || token.length > maxCredentialLength) return 'The Basic credential is empty or too long'
  // token68 restricted to the standard Base64 alphabet (RFC 4648 §4); padding optional.
  let end = token.length
  while (end > 0 && token.charCodeAt(end - 1) === 61) end--
  if (token.length - end > 2) return 'The Basic credential is not Base64'
  for (let j = 0; j < end; j++) {
    const c = token.charCodeAt(j)
    const ok = (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 47
    if (!ok) return 'The Basic credential is not Base64'
  }
  let decoded: string
  try {
    decoded = utf8.decode(Buffer.from(token, 'base64'))
  } catch {
    return 'The Basic credential is not UTF-8'
  }
  const colon = decoded.indexOf(':')
  if (colon === -1) return 'The Basic credential has no colon between user id and password'
  return { userId: decoded.slice(0, colon), password: decoded.slice(colon + 1) }
}

export interface BasicCredential {
  userId: string
  password: string
}

/** The request's Basic credential, or the 401 a missing or malformed one gets. */
export function readBasic(req: AuthRequest): BasicCredential | AuthFailure {
  const header = req.headers['authorization']
  if (typeof header !== 'string') return malformed('Send one Authorization: Basic header')
  const parsed = parseBasic(header)
  return typeof parsed === 'string' ? malformed(parsed) : parsed
}

export async function verifyBasicCredential({ userId, password }: BasicCredential, lookup: CredentialLookup): Promise<AuthResult> {
  // An id that cannot exist is not looked up.
  const wellFormed = userIdPattern.test(userId)
  const record = wellFormed ? await lookup.apiPassword(userId) : null
  // The comparison happens even when there is no such user, so that the answer costs the same work.
  const matches = safeEqual(password, record?.apiPassword ?? dummyPassword)
  if (record === null || !matches) {
    return failure('basic', 401, 'bad_credentials', 'Wrong user id or API password', 'bad_credentials', wellFormed ? { attemptedUser: userId } : {})
  }
  return {
    kind: 'ok',
    principal: { userId: record.userId, userName: record.userName, method: 'basic', consumerKey: '', scopes: [] },
  }
}

/** HTTP Basic as a CredentialVerifier: the Authorization header read, the API password loaded through `lookup`. */
export function basicVerifier(lookup: CredentialLookup): CredentialVerifier {
  return {
    method: 'basic',
    guessable: true,
    read(req) {
      const credential = readBasic(req)
      if ('kind' in credential) return credential
      return { claimedUser: credential.userId, verify: () => verifyBasicCredential(credential, lookup) }
    },
  }
}
