// Revoked OAuth 2.0 grants, known to every gateway within seconds (docs/oauth2.md#revocation).
//
// An access token for the API is a signed JWT that each gateway verifies on its own, so a
// revocation cannot be a deleted row: it is a grant id on a list that every gateway holds
// in memory and checks on every Bearer request (`isRevoked`, no I/O). A grant stays on
// the list until every access token issued under it has expired (`tokenLifetimeSeconds`
// after the revocation), then drops off.
//
// Semantics:
// - `revoke` adds the grant to this gateway's memory (effective here at once), writes it to
//   the shared database (durable: a gateway started later loads it), then, when Redis is
//   configured, to a Redis sorted set scored by the time of revocation.
//   A revocation the database did not take throws: the caller answers an error and the
//   revocation can be retried; one Redis did not take is still read from the database by
//   the other gateways' backstop poll.
// - Each gateway polls for revocations newer than its last look, with a look-back that
//   covers clocks a few seconds apart: Redis every `pollMs` (default 1 s) when configured,
//   the database every `pollMs` otherwise (and while Redis does not answer) and every
//   `backstopMs` (default 30 s) as well.
//   A poll that fails keeps what is known; the list never forgets a grant before its expiry
//   because a poll failed. A database that does not answer is in its own outage lines
//   (dependency-watch.ts); any other failure is logged once, until a poll works again.
import { isConnectionFailure } from '../../common/errors.js'
import type { Db } from '../../common/sql.js'
import type { RedisClient } from '../../common/redis.js'

export interface RevocationListOptions {
  db: Db
  redis?: RedisClient | undefined
  /** How long an access token lives at most, seconds: how long a revoked grant is remembered. */
  tokenLifetimeSeconds: number
  pollMs?: number
  backstopMs?: number
  now?: () => number
  /** Told once when polling starts failing (and the error), and once when it works again. */
  log?: (message: string, err?: Error) => void
}

/** The Redis sorted set of revoked grants: member grant id, score the revocation's time (ms). */
export const revokedGrantsKey = 'kigo:oauth2:revoked-grants'

/** How far back each poll looks beyond its previous one: clocks of gateways and database apart. */
const lookBackMs = 15_000

export class RevocationList {
  /** Grant id → when the last access token issued under it expires (ms). */
  private readonly revoked = new Map<string, number>()
  private lastPoll = 0
  private lastBackstop = 0
  private timer: NodeJS.Timeout | undefined
  private failing = false
  private polling: Promise<void> | null = null
  private polls = 0
  private readonly now: () => number

  constructor(private readonly options: RevocationListOptions) {
    this.now = options.now ?? Date.now
  }

  /** True while `grantId` is revoked and tokens issued under it may still be unexpired. */
  isRevoked(grantId: string): boolean {
    const until = this.revoked.get(grantId)
    if (until === undefined) return false
    if (until > this.now()) return true
    this.revoked.delete(grantId)
    return false
  }

  /** Revokes grants on every gateway (see the header for what is written where). */
  async revoke(grantIds: readonly string[]): Promise<void> {
    const ids = [...new Set(grantIds.filter((g) => g !== ''))]
    if (ids.length === 0) return
    const at = this.now()
    const until = at + this.options.tokenLifetimeSeconds * 1000
    // Already known as revoked just now (the library revokes a grant model by model).
    const fresh = ids.filter((id) => (this.revoked.get(id) ?? 0) < until - 5000)
    if (fresh.length === 0) return
    for (const id of fresh) this.remember(id, until)
    await this.options.db.query(
      `INSERT INTO kigo_gateway.oauth2_revocations (grant_id, revoked_at, expires_at)
       SELECT unnest($1::text[]), $2, $3
       ON CONFLICT (grant_id) DO UPDATE SET revoked_at = EXCLUDED.revoked_at, expires_at = EXCLUDED.expires_at`,
      [fresh, new Date(at), new Date(until)],
    )
    const redis = this.options.redis
    if (redis) await redis.zadd(revokedGrantsKey, ...fresh.flatMap((id) => [at, id])).catch(() => undefined)
  }

  /** Loads every unexpired revocation from the database, then polls until `close`. */
  async start(): Promise<void> {
    await this.pollDatabase(0)
    this.lastBackstop = this.now()
    const pollMs = this.options.pollMs ?? 1000
    this.timer = setInterval(() => void this.poll(), pollMs)
    this.timer.unref()
  }

  close(): void {
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
  }

  /** One poll (see the header); the tests call it to avoid waiting. */
  poll(): Promise<void> {
    if (this.polling) return this.polling
    this.polling = (async () => {
      const started = this.now()
      try {
        const redis = this.options.redis
        const backstopDue = started - this.lastBackstop >= (this.options.backstopMs ?? 30_000)
        // Redis away: the database is read instead, every time, until Redis answers again.
        const fromRedis = redis ? await this.pollRedis(redis, this.lastPoll - lookBackMs).then(() => true, () => false) : false
        if (!fromRedis || backstopDue) {
          await this.pollDatabase(backstopDue && fromRedis ? this.lastBackstop - lookBackMs : this.lastPoll - lookBackMs)
          if (backstopDue) this.lastBackstop = started
        }
        this.lastPoll = started
        this.prune()
        if (this.failing) this.options.log?.('OAuth 2.0 revocations are read again')
        this.failing = false
      } catch (err) {
        if (!isConnectionFailure(err)) {
          if (!this.failing) this.options.log?.('OAuth 2.0 revocations cannot be read; keeping the ones known', err as Error)
          this.failing = true
        }
      } finally {
        this.polling = null
      }
    })()
    return this.polling
  }

  private remember(grantId: string, until: number): void {
    if (until <= this.now()) return
    if ((this.revoked.get(grantId) ?? 0) < until) this.revoked.set(grantId, until)
  }

  private async pollDatabase(sinceMs: number): Promise<void> {
    const rows = await this.options.db.query<{ grant_id: string; expires_at: Date | string }>(
      'SELECT grant_id, expires_at FROM kigo_gateway.oauth2_revocations WHERE revoked_at > $1 AND expires_at > $2',
      [new Date(Math.max(0, sinceMs)), new Date(this.now())],
    )
    for (const r of rows) this.remember(r.grant_id, new Date(r.expires_at).getTime())
  }

  private async pollRedis(redis: RedisClient, sinceMs: number): Promise<void> {
    const lifetimeMs = this.options.tokenLifetimeSeconds * 1000
    const found = await redis.zrangebyscore(revokedGrantsKey, `(${Math.max(0, sinceMs)}`, '+inf', 'WITHSCORES')
    for (let i = 0; i + 1 < found.length; i += 2) this.remember(found[i]!, Number(found[i + 1]) + lifetimeMs)
  }

  private prune(): void {
    const now = this.now()
    for (const [id, until] of this.revoked) if (until <= now) this.revoked.delete(id)
    // Rows nobody needs any more; each gateway does it now and then, cheaply.
    if (++this.polls % 100 === 0) {
      void this.options.db.query('DELETE FROM kigo_gateway.oauth2_revocations WHERE expires_at <= $1', [new Date(now)]).catch(() => undefined)
      void this.options.redis?.zremrangebyscore(revokedGrantsKey, '-inf', now - this.options.tokenLifetimeSeconds * 1000).catch(() => undefined)
    }
  }
}
