// The soak's load (docs/operations.md#reliability): a fixed rate of requests, spread over
// both gateways, both deployments and the three methods (Basic, WSSE, OAuth), mixing
// reads with writes of text and photos, stars, follows, deletes and keyword follows. Every
// write's answer goes into the ledger: acknowledged (200), refused (an answer that says
// nothing was done) or in doubt (no answer, or one that cannot say: 502, 504, the core's
// own 503), for the accounting that follows the run (check.ts).
import { createHash, randomBytes } from 'node:crypto'
import { Agent, request } from 'undici'
import { basicAuthorization, oauthAuthorization, percentEncode, wsseHeader, type OAuthCredentials } from '../signing.js'

export type Method = 'basic' | 'wsse' | 'oauth'
export type Outcome = 'acknowledged' | 'refused' | 'in_doubt'

export interface SoakUser {
  id: string
  apiPassword: string
  oauth: OAuthCredentials
}

export interface EntryWrite {
  kind: 'entry'
  /** The unique text (or, for a photo, the image's SHA-256) that finds it in the store. */
  marker: string
  photo: boolean
  author: string
  outcome: Outcome
  id?: string
  /** Kept, not a candidate for deletion: stars go to these. */
  keep: boolean
}
export interface PairWrite {
  kind: 'star' | 'follow' | 'keyword_follow'
  user: string
  target: string
  outcome: Outcome
}
export interface DeleteWrite {
  kind: 'delete'
  user: string
  entryId: string
  outcome: Outcome
}
export type Write = EntryWrite | PairWrite | DeleteWrite

/** One answered (or failed) request: when, how long, and whether it succeeded. */
export interface Sample {
  at: number
  ms: number
  ok: boolean
  status: number
}

export interface Gateway {
  /** http://127.0.0.1:<port> */
  url: string
  /** The Host names of the two deployments on this gateway's port. */
  hosts: [domestic: string, global: string]
}

export const keywords = ['soak', 'soak-a', 'soak-b', 'soak-c', 'soak-d']

/** A write's answer as the ledger counts it. */
export function outcomeOf(status: number, body: string): Outcome {
  if (status === 200) return 'acknowledged'
  // No answer, or the answer of a proxy that cannot know what the core did.
  if (status === 0 || status === 502 || status === 504) return 'in_doubt'
  // The core's own 503: the store failed mid-request (a commit may have gone through).
  if (status === 503 && /content store/i.test(body)) return 'in_doubt'
  return 'refused'
}

/** The smallest valid PNG header followed by random bytes: an image unique to one write. */
function uniqueImage(): Buffer {
  const header = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex')
  return Buffer.concat([header, randomBytes(48)])
}

export interface LoadOptions {
  gateways: Gateway[]
  users: SoakUser[]
  rate: number
  /** Seconds a request may take before it counts as failed (and a write as in doubt). */
  timeoutSeconds: number
}

export class SoakLoad {
  readonly writes: Write[] = []
  readonly samples: Sample[] = []
  private n = 0
  private inFlight = 0
  private timer: NodeJS.Timeout | null = null
  private readonly agent = new Agent({ connections: 64, keepAliveTimeout: 10_000 })
  /** Entries acknowledged, by whether they are kept. */
  private readonly kept: EntryWrite[] = []
  private readonly deletable: EntryWrite[] = []
  skipped = 0

  constructor(private readonly opts: LoadOptions, private readonly started = Date.now()) {}

  start(): void {
    const interval = 1000 / this.opts.rate
    let due = Date.now()
    const tick = () => {
      const now = Date.now()
      while (due <= now) {
        due += interval
        // A bound on what is outstanding: a hung dependency must not grow the harness without end.
        if (this.inFlight >= 400) this.skipped++
        else void this.one()
      }
      this.timer = setTimeout(tick, Math.max(1, due - Date.now()))
    }
    tick()
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer)
    const deadline = Date.now() + (this.opts.timeoutSeconds + 2) * 1000
    while (this.inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
    await this.agent.close()
  }

  private pick<T>(list: readonly T[]): T {
    return list[Math.floor(Math.random() * list.length)]!
  }

  /** The next request of the mix, sent and accounted for. */
  private async one(): Promise<void> {
    const i = this.n++
    const gateway = this.opts.gateways[i % this.opts.gateways.length]!
    const host = gateway.hosts[Math.floor(i / this.opts.gateways.length) % 2]!
    const method: Method = (['basic', 'wsse', 'oauth'] as const)[Math.floor(i / 4) % 3]!
    const user = this.pick(this.opts.users)
    const r = Math.random() * 100
    this.inFlight++
    try {
      if (r < 20) await this.send(gateway, host, method, user, 'GET', '/api/statuses/public_timeline.json', [['count', '20']])
      else if (r < 32) {
        const e = this.kept.length ? this.pick(this.kept) : null
        if (e) await this.send(gateway, host, method, user, 'GET', `/api/statuses/show/${e.id}.json`)
        else await this.send(gateway, host, method, user, 'GET', '/api/statuses/public_timeline.json', [['count', '20']])
      } else if (r < 60) await this.postText(gateway, host, method, user, r < 50)
      else if (r < 66) await this.postPhoto(gateway, host, method, user)
      else if (r < 76) await this.star(gateway, host, method, user)
      else if (r < 84) await this.follow(gateway, host, method, user)
      else if (r < 92) await this.destroy(gateway, host, method)
      else await this.keywordFollow(gateway, host, method, user)
    } finally {
      this.inFlight--
    }
  }

  private authorization(method: Method, user: SoakUser, httpMethod: string, host: string, path: string, params: Array<[string, string]>): Record<string, string> {
    if (method === 'basic') return { authorization: basicAuthorization(user.id, user.apiPassword) }
    if (method === 'wsse') return { 'x-wsse': wsseHeader(user.id, user.apiPassword), authorization: 'WSSE profile="UsernameToken"' }
    return { authorization: oauthAuthorization(user.oauth, { method: httpMethod, baseUri: `http://${host}${path}`, params }) }
  }

  /**
   * One request. `params` go in the query of a GET and in a form body otherwise (signed
   * either way); `multipart` is sent as it is (not part of an OAuth signature).
   */
  private async send(gateway: Gateway, host: string, method: Method, user: SoakUser, httpMethod: 'GET' | 'POST', path: string, params: Array<[string, string]> = [], multipart?: { type: string; body: Buffer }): Promise<{ status: number; body: string }> {
    const encoded = params.map(([k, v]) => `${percentEncode(k)}=${percentEncode(v)}`).join('&')
    const headers: Record<string, string> = { host, ...this.authorization(method, user, httpMethod, host, path, multipart ? [] : params) }
    let body: string | Buffer | undefined
    let url = `${gateway.url}${path}`
    if (httpMethod === 'GET') url += encoded ? `?${encoded}` : ''
    else if (multipart) {
      headers['content-type'] = multipart.type
      body = multipart.body
    } else {
      headers['content-type'] = 'application/x-www-form-urlencoded'
      body = encoded
    }
    const t0 = performance.now()
    let status: number
    let text = ''
    try {
      const res = await request(url, { method: httpMethod, headers, body, dispatcher: this.agent, headersTimeout: this.opts.timeoutSeconds * 1000, bodyTimeout: this.opts.timeoutSeconds * 1000 })
      status = res.statusCode
      text = await res.body.text()
    } catch {
      // No answer (refused, reset, timed out): status 0.
      status = 0
    }
    this.samples.push({ at: Date.now() - this.started, ms: performance.now() - t0, ok: status >= 200 && status < 300, status })
    return { status, body: text }
  }

  private async postText(gateway: Gateway, host: string, method: Method, user: SoakUser, keep: boolean): Promise<void> {
    const marker = `soak-${randomBytes(8).toString('hex')}`
    const write: EntryWrite = { kind: 'entry', marker, photo: false, author: user.id, outcome: 'in_doubt', keep }
    this.writes.push(write)
    const res = await this.send(gateway, host, method, user, 'POST', '/api/statuses/update.json', [['keyword', this.pick(keywords)], ['status', `entry ${marker}`]])
    this.settle(write, res)
  }

  private async postPhoto(gateway: Gateway, host: string, method: Method, user: SoakUser): Promise<void> {
    const image = uniqueImage()
    const marker = createHash('sha256').update(image).digest('hex')
    const write: EntryWrite = { kind: 'entry', marker, photo: true, author: user.id, outcome: 'in_doubt', keep: true }
    this.writes.push(write)
    const boundary = `soak${randomBytes(8).toString('hex')}`
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="keyword"\r\n\r\nsoak\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="p.png"\r\nContent-Type: image/png\r\n\r\n`),
      image,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ])
    const res = await this.send(gateway, host, method, user, 'POST', '/api/statuses/update.json', [], { type: `multipart/form-data; boundary=${boundary}`, body })
    this.settle(write, res)
  }

  private settle(write: EntryWrite, res: { status: number; body: string }): void {
    write.outcome = outcomeOf(res.status, res.body)
    if (write.outcome !== 'acknowledged') return
    write.id = String((JSON.parse(res.body) as { id: string | number }).id)
    ;(write.keep ? this.kept : this.deletable).push(write)
  }

  private async star(gateway: Gateway, host: string, method: Method, user: SoakUser): Promise<void> {
    if (this.kept.length === 0) return this.postText(gateway, host, method, user, true)
    const entry = this.pick(this.kept)
    const write: PairWrite = { kind: 'star', user: user.id, target: entry.id!, outcome: 'in_doubt' }
    this.writes.push(write)
    const res = await this.send(gateway, host, method, user, 'POST', `/api/favorites/create/${entry.id}.json`)
    write.outcome = outcomeOf(res.status, res.body)
  }

  private async follow(gateway: Gateway, host: string, method: Method, user: SoakUser): Promise<void> {
    const other = this.pick(this.opts.users.filter((u) => u.id !== user.id))
    const write: PairWrite = { kind: 'follow', user: user.id, target: other.id, outcome: 'in_doubt' }
    this.writes.push(write)
    const res = await this.send(gateway, host, method, user, 'POST', `/api/friendships/create/${other.id}.json`)
    write.outcome = outcomeOf(res.status, res.body)
  }

  private async keywordFollow(gateway: Gateway, host: string, method: Method, user: SoakUser): Promise<void> {
    const word = this.pick(keywords)
    const write: PairWrite = { kind: 'keyword_follow', user: user.id, target: word, outcome: 'in_doubt' }
    this.writes.push(write)
    const res = await this.send(gateway, host, method, user, 'POST', `/api/keywords/create/${word}.json`)
    write.outcome = outcomeOf(res.status, res.body)
  }

  /** Deletes an acknowledged entry made for it, signed by its author. */
  private async destroy(gateway: Gateway, host: string, method: Method): Promise<void> {
    const entry = this.deletable.shift()
    if (entry === undefined) return
    const author = this.opts.users.find((u) => u.id === entry.author)!
    const write: DeleteWrite = { kind: 'delete', user: author.id, entryId: entry.id!, outcome: 'in_doubt' }
    this.writes.push(write)
    const res = await this.send(gateway, host, method, author, 'POST', `/api/statuses/destroy/${entry.id}.json`)
    write.outcome = outcomeOf(res.status, res.body)
  }
}
