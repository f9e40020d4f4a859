// Test doubles for the verifiers' collaborators: an in-memory CredentialLookup and an
// in-memory replay cache with TTLs, plus a builder for AuthRequest.
import type { AuthRequest, CredentialLookup } from '../../../src/gateway/domain/auth.js'
import { ReplayCacheUnavailable, type ReplayCache } from '../../../src/gateway/replay/types.js'
import type { Scope } from '../../../src/gateway/domain/identifiers.js'

export interface Fixtures {
  users?: Array<{ id: string; name?: string; apiPassword: string }>
  consumers?: Array<{ key: string; secret: string; scopes?: Scope[] }>
  tokens?: Array<{ token: string; secret: string; consumerKey: string; userId: string; scopes?: Scope[]; revoked?: boolean }>
}

export function memoryLookup(f: Fixtures): CredentialLookup & { calls: string[] } {
  const calls: string[] = []
  return {
    calls,
    async apiPassword(userId) {
      calls.push(`apiPassword:${userId}`)
      const u = f.users?.find((x) => x.id === userId)
      return u ? { userId: u.id, userName: u.name ?? u.id, apiPassword: u.apiPassword } : null
    },
    async consumer(key) {
      calls.push(`consumer:${key}`)
      const c = f.consumers?.find((x) => x.key === key)
      return c ? { key: c.key, name: `app ${c.key}`, secret: c.secret, scopes: c.scopes ?? ['read_public', 'write_public'] } : null
    },
    async accessToken(token) {
      calls.push(`accessToken:${token}`)
      const t = f.tokens?.find((x) => x.token === token)
      if (!t) return null
      const userName = f.users?.find((u) => u.id === t.userId)?.name ?? t.userId
      return {
        token: t.token,
        secret: t.secret,
        consumerKey: t.consumerKey,
        userId: t.userId,
        userName,
        scopes: t.scopes ?? ['write_public'],
        revoked: t.revoked ?? false,
      }
    },
  }
}

/** A Map with expiry times on a clock the test controls. */
export class MemoryReplayCache implements ReplayCache {
  readonly entries = new Map<string, number>()
  readonly claims: Array<{ key: string; ttlSeconds: number }> = []
  constructor(private readonly clock: () => number = Date.now) {}
  async claim(key: string, ttlSeconds: number): Promise<boolean> {
    this.claims.push({ key, ttlSeconds })
    const now = this.clock()
    const until = this.entries.get(key)
    if (until !== undefined && until > now) return false
    this.entries.set(key, now + ttlSeconds * 1000)
    return true
  }
  async ping(): Promise<void> {}
  async close(): Promise<void> {}
}

/** A cache whose backend is down. */
export class DownReplayCache implements ReplayCache {
  async claim(): Promise<boolean> {
    throw new ReplayCacheUnavailable('connection refused')
  }
  async ping(): Promise<void> {
    throw new ReplayCacheUnavailable('connection refused')
  }
  async close(): Promise<void> {}
}

export function authRequest(r: Partial<Omit<AuthRequest, 'body'>> & { body?: Buffer | string }): AuthRequest {
  const headers = r.headers ?? {}
  return {
    method: r.method ?? 'GET',
    url: r.url ?? '/',
    host: r.host ?? 'example.com',
    scheme: r.scheme ?? 'http',
    headers,
    contentType: r.contentType ?? (headers['content-type'] as string | undefined),
    body: typeof r.body === 'string' ? Buffer.from(r.body, 'utf8') : r.body,
    now: r.now ?? Date.now(),
  }
}

export const form = 'application/x-www-form-urlencoded'

/** Twitter's "Creating a signature" example request, without its credentials. */
export const twitterExampleRequest = {
  method: 'POST',
  scheme: 'https',
  host: 'api.twitter.com',
  url: '/1.1/statuses/update.json?include_entities=true',
  contentType: form,
  body: 'status=Hello%20Ladies%20%2b%20Gentlemen%2c%20a%20signed%20OAuth%20request%21',
} as const
