// Every registered user in the core (docs/gateway.md#registered-users-in-the-core): the gateway
// sends the core the users it lacks, on the signed identity channel (src/common/user-provisioning.ts).
// Which users those are is kept in the identity store (core_version below name_version), in
// the same row as the user, so a registration the operator was told of is never lost: what
// a send did not reach is sent again, after a failure (1 s, doubling to a minute), every
// minute, and at start-up (users made before this rule, a store moved by `kigo import`).
// Sends run one at a time in this process; several gateways may send the same user, and
// the core keeps the highest version it was sent.
import { randomUUID } from 'node:crypto'
import { request } from 'undici'
import { isConnectionFailure } from '../../common/errors.js'
import { identityKey, signIdentity } from '../../common/identity.js'
import { bodyDigest, provisionBatch, provisionBody, provisionOperation, provisionPath, type ProvisionedUser } from '../../common/user-provisioning.js'

export interface CoreUserSource {
  usersForCore(limit: number): Promise<ProvisionedUser[]>
  coreHasUsers(users: readonly ProvisionedUser[]): Promise<void>
}

export interface CoreUserSyncOptions {
  coreUrl: string
  secretKey: string
  /** How long one request to the core may take (ms). */
  timeoutMs?: number
  /** How long a registration waits for its send before it is answered (ms). */
  waitMs?: number
  /** Every so often a send runs whatever happened (ms). */
  everyMs?: number
  log?: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void }
}

/** A failure of the identity store's, not of the core's. */
class StoreFailed extends Error {
  constructor(override readonly cause: unknown) {
    super((cause as Error)?.message ?? String(cause))
  }
}

const firstRetryMs = 1000
const lastRetryMs = 60_000

export class CoreUserSync {
  private readonly key
  private readonly url: URL
  /** The send not started yet, which every caller until it starts shares. */
  private queued: Promise<boolean> | null = null
  private tail: Promise<unknown> = Promise.resolve()
  private retryMs = firstRetryMs
  private retry: NodeJS.Timeout | undefined
  private readonly every: NodeJS.Timeout
  /** A failure was logged: its end is logged too. */
  private announced = false
  private closed = false

  constructor(private readonly source: CoreUserSource, private readonly options: CoreUserSyncOptions) {
    this.key = identityKey(options.secretKey)
    this.url = new URL(provisionPath, options.coreUrl)
    this.every = setInterval(() => void this.send(), options.everyMs ?? lastRetryMs)
    this.every.unref()
  }

  /** A send that starts after every change committed so far; true when the core has every user. */
  send(): Promise<boolean> {
    if (this.closed) return Promise.resolve(false)
    if (this.queued) return this.queued
    const run = this.tail.then(() => {
      this.queued = null
      return this.once()
    })
    this.queued = run
    this.tail = run
    return run
  }

  /** `send`, waited for at most `waitMs`: what a registration waits for before it is answered. */
  async sendAndWait(): Promise<void> {
    let timer: NodeJS.Timeout | undefined
    await Promise.race([this.send(), new Promise((resolve) => (timer = setTimeout(resolve, this.options.waitMs ?? 3000)))])
    clearTimeout(timer)
  }

  private async once(): Promise<boolean> {
    if (this.closed) return false
    try {
      let sent = 0
      for (;;) {
        const users = await this.source.usersForCore(provisionBatch).catch((err: unknown) => Promise.reject(new StoreFailed(err)))
        if (users.length === 0) break
        await this.post(users)
        await this.source.coreHasUsers(users).catch((err: unknown) => Promise.reject(new StoreFailed(err)))
        sent += users.length
        if (users.length < provisionBatch) break
      }
      if (this.announced || sent > provisionBatch) this.options.log?.info({ users: sent }, 'registered users sent to the core')
      this.announced = false
      this.retryMs = firstRetryMs
      return true
    } catch (err) {
      // The store's outage has its own lines (dependency-watch.ts); the core's is said here, once.
      const quiet = err instanceof StoreFailed && isConnectionFailure(err.cause)
      if (!this.announced && !quiet) {
        this.announced = true
        this.options.log?.warn({ error: (err as Error).message }, err instanceof StoreFailed ? 'registered users could not be read or marked in the store; trying again' : 'registered users could not be sent to the core; trying again')
      }
      clearTimeout(this.retry)
      if (!this.closed) {
        this.retry = setTimeout(() => void this.send(), this.retryMs)
        this.retry.unref()
      }
      this.retryMs = Math.min(this.retryMs * 2, lastRetryMs)
      return false
    }
  }

  private async post(users: readonly ProvisionedUser[]): Promise<void> {
    const body = provisionBody(users)
    const host = this.url.host
    const headers = signIdentity(this.key, { method: 'POST', url: provisionPath, host, requestId: randomUUID(), operation: provisionOperation, bodySha256: bodyDigest(body) }, null)
    const res = await request(this.url, {
      method: 'POST',
      headers: { ...headers, host, 'content-type': 'application/x-www-form-urlencoded' },
      body,
      signal: AbortSignal.timeout(this.options.timeoutMs ?? 10_000),
    })
    const text = await res.body.text()
    if (res.statusCode !== 200) throw new Error(`the core answered ${res.statusCode}: ${text.slice(0, 200)}`)
  }

  /** Stops the timers and waits for a send under way (the store closes after this). */
  async close(): Promise<void> {
    this.closed = true
    clearInterval(this.every)
    clearTimeout(this.retry)
    await this.tail.catch(() => undefined)
  }
}
