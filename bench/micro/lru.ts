// Microbenchmark: the credential cache's hand-written expiring LRU against lru-cache, on
// the hot path of a verifying gateway (a hit for a known key) and on a fill (set).
// `node dist/bench/micro/lru.js [runs]`: 1e6 operations per run, median of the runs (default 5), ns per op.
import { LRUCache } from 'lru-cache'

class ExpiringLru<V> {
  private readonly map = new Map<string, { value: V; expiresAt: number }>()
  constructor(private readonly max: number) {}
  get(key: string, now: number): { value: V } | undefined {
    const hit = this.map.get(key)
    if (!hit) return undefined
    this.map.delete(key)
    if (hit.expiresAt <= now) return undefined
    this.map.set(key, hit)
    return { value: hit.value }
  }
  set(key: string, value: V, expiresAt: number): void {
    this.map.delete(key)
    this.map.set(key, { value, expiresAt })
    while (this.map.size > this.max) this.map.delete(this.map.keys().next().value!)
  }
}

const ops = 1_000_000
const max = 10_000
const keys = Array.from({ length: 20_000 }, (_, i) => `key-${i.toString(36)}-${'x'.repeat(20)}`)
const value = { userId: 'alice', userName: 'Alice', apiPassword: 'secret' }
let sink = 0

type Case = { name: string; run: () => void }

function handWritten(hot: number): Case[] {
  const c = new ExpiringLru<typeof value>(max)
  const now = Date.now()
  for (let i = 0; i < hot; i++) c.set(keys[i]!, value, now + 60_000)
  return [
    { name: `hand-written get (hit, ${hot} keys)`, run: () => { const t = Date.now(); for (let i = 0; i < ops; i++) if (c.get(keys[i % hot]!, t)) sink++ } },
    { name: `hand-written set (20,000 keys over 10,000; after ${hot})`, run: () => { for (let i = 0; i < ops; i++) c.set(keys[i % keys.length]!, value, Date.now() + 5000) } },
  ]
}

function library(hot: number): Case[] {
  // As src/gateway/store/credential-lookup.ts configures it: the caller's clock, read on each check.
  const options = { max, ttl: 60_000, ttlResolution: 0, perf: { now: Date.now } }
  const c = new LRUCache<string, typeof value>(options)
  for (let i = 0; i < hot; i++) c.set(keys[i]!, value)
  const d = new LRUCache<string, typeof value>(options)
  return [
    { name: `lru-cache get (hit, ${hot} keys)`, run: () => { for (let i = 0; i < ops; i++) if (c.get(keys[i % hot]!)) sink++ } },
    { name: `lru-cache set (20,000 keys over 10,000; after ${hot})`, run: () => { for (let i = 0; i < ops; i++) d.set(keys[i % keys.length]!, value, { ttl: 5000 }) } },
  ]
}

const runs = Number(process.argv[2] ?? 5)
const cases = [...handWritten(1000), ...library(1000), ...handWritten(10_000), ...library(10_000)]
const times = new Map<string, number[]>(cases.map((c) => [c.name, []]))
for (const c of cases) c.run() // warm-up
for (let r = 0; r < runs; r++) {
  for (const c of cases) {
    const t0 = process.hrtime.bigint()
    c.run()
    times.get(c.name)!.push(Number(process.hrtime.bigint() - t0) / ops)
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
for (const [name, xs] of times) console.log(`${name.padEnd(48)} ${median(xs).toFixed(1)} ns/op  (runs: ${xs.map((x) => x.toFixed(0)).join(' ')})`)
if (sink < 0) console.log(sink)
