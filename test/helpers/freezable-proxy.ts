// A TCP relay in front of PostgreSQL or Redis that can be frozen: while frozen it still
// accepts connections and reads what is sent, and answers nothing, on new and existing
// connections alike, like a server stopped with SIGSTOP or cut off by a partition. Thawed,
// it relays again (bytes held meanwhile are dropped, so the frozen requests never run,
// and the connections that carried them are closed).
import { createConnection, createServer, type Server, type Socket } from 'node:net'

export class FreezableProxy {
  frozen = false
  private readonly pairs = new Set<{ client: Socket; upstream: Socket | null; stalled: boolean }>()

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(target: { host: string; port: number }): Promise<FreezableProxy> {
    const server = createServer((client) => proxy.accept(client, target))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const address = server.address()
    const proxy = new FreezableProxy(server, typeof address === 'object' && address ? address.port : 0)
    return proxy
  }

  /** `url` with its host and port replaced by the proxy's. */
  urlFor(url: string): string {
    const u = new URL(url)
    u.hostname = '127.0.0.1'
    u.port = String(this.port)
    return u.toString()
  }

  private accept(client: Socket, target: { host: string; port: number }): void {
    const pair = { client, upstream: null as Socket | null, stalled: this.frozen }
    this.pairs.add(pair)
    client.on('error', () => undefined)
    client.on('close', () => {
      pair.upstream?.destroy()
      this.pairs.delete(pair)
    })
    if (pair.stalled) {
      // Accepted, read, never answered.
      client.on('data', () => undefined)
      return
    }
    const upstream = createConnection(target)
    pair.upstream = upstream
    upstream.on('error', () => client.destroy())
    upstream.on('close', () => client.destroy())
    client.on('data', (d) => {
      if (pair.stalled) return
      upstream.write(d)
    })
    upstream.on('data', (d) => {
      if (pair.stalled) return
      client.write(d)
    })
  }

  freeze(): void {
    this.frozen = true
    for (const p of this.pairs) p.stalled = true
  }

  /** Relays again; connections that were frozen mid-conversation are closed (their state is lost). */
  thaw(): void {
    this.frozen = false
    for (const p of this.pairs) {
      if (!p.stalled) continue
      p.client.destroy()
      p.upstream?.destroy()
    }
  }

  async close(): Promise<void> {
    for (const p of this.pairs) {
      p.client.destroy()
      p.upstream?.destroy()
    }
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }
}
