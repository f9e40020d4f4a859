// Before the timeline scenarios are measured, one request of each through the gateway
// must answer what a user would see: 200 and a page of 20 entries, newest first, with
// the bulk-seeded entries and their replies in it. Otherwise the benchmark would time
// rejections or an empty page.
import { request } from 'undici'
import { requestSource, type Fixture } from './scenarios.js'

interface PageEntry {
  id: string | number
  user: { id: string }
  replies?: unknown[]
}

export async function checkPublicTimeline(gatewayUrl: string, fixture: Fixture): Promise<void> {
  for (const kind of ['timeline_anonymous', 'timeline_oauth'] as const) {
    const r = requestSource(kind, fixture)()
    const res = await request(`${gatewayUrl}${r.path}`, { method: r.method, headers: r.headers })
    const text = await res.body.text()
    if (res.statusCode !== 200) throw new Error(`${kind} ${r.path}: ${res.statusCode} ${text.slice(0, 300)}`)
    const page = JSON.parse(text) as PageEntry[]
    const ids = Array.isArray(page) ? page.map((e) => BigInt(e.id)) : []
    if (ids.length !== 20 || ids.some((id, i) => i > 0 && id >= ids[i - 1]!)) {
      throw new Error(`${kind} ${r.path}: expected 20 entries newest first, got ${text.slice(0, 300)}`)
    }
    if (new Set(page.map((e) => e.user.id)).size < 2 || !page.some((e) => (e.replies ?? []).length > 0)) {
      throw new Error(`${kind} ${r.path}: expected several authors and some replies on the page (the bulk-seeded entries)`)
    }
  }
}
