// Registered users in the core (docs/gateway.md#registered-users-in-the-core): the gateway
// sends the core each user it registers or renames, on the signed identity channel. This is
// the one description of that request both apps read: its path, the operation name it is
// signed for (no route-table operation has it, so no forwarded request can carry it), and
// its body, one urlencoded field `users` holding a JSON array of [id, name, version].
import { createHash } from 'node:crypto'

/** Where the core takes the request: `users` cannot be a user ID, so no page has the path. */
export const provisionPath = '/users'

/** The operation the request is signed for. */
export const provisionOperation = 'kigo/users.provision'

/** Users per request. */
export const provisionBatch = 200

export interface ProvisionedUser {
  id: string
  name: string
  /** Raised by every change of the name: the core keeps the highest it was sent. */
  version: number
}

/** The urlencoded body of one request. */
export function provisionBody(users: readonly ProvisionedUser[]): string {
  return `users=${encodeURIComponent(JSON.stringify(users.map((u) => [u.id, u.name, u.version])))}`
}

/** The digest the gateway signs for a body (X-Kigo-Body-Sha256, docs/gateway.md#the-signed-identity). */
export function bodyDigest(body: string): string {
  return createHash('sha256').update(body).digest('base64url')
}

/**
 * The users of a body's `users` value, or the reason it is not one: an array of at most
 * `provisionBatch` [id, name, version] triples, each ID given once, each ID passing `isUserId`,
 * each name 1 to 100 characters, each version a positive whole number.
 */
export function readProvisionedUsers(value: string | undefined, isUserId: (id: string) => boolean): ProvisionedUser[] | string {
  if (value === undefined) return 'users is required'
  let parsed: unknown
  try {
    parsed = JSON.parse(value)
  } catch {
    return 'users must be JSON'
  }
  if (!Array.isArray(parsed) || parsed.length > provisionBatch) return `users must be an array of at most ${provisionBatch} users`
  const seen = new Set<string>()
  const users: ProvisionedUser[] = []
  for (const item of parsed as unknown[]) {
    if (!Array.isArray(item) || item.length !== 3) return 'each user must be [id, name, version]'
    const [id, name, version] = item as unknown[]
    if (typeof id !== 'string' || !isUserId(id) || seen.has(id)) return 'each user needs a valid user ID, given once'
    if (typeof name !== 'string' || name.trim() === '' || [...name].length > 100) return 'each user needs a name of 1 to 100 characters'
    if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 1) return 'each user needs a positive whole version'
    seen.add(id)
    users.push({ id, name, version })
  }
  return users
}
