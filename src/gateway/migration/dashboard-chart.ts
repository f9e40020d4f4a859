// The dashboard chart (docs/gateway.md#the-operator-api-and-dashboard): the share of requests per auth method over time, as a
// server-rendered SVG of 100 % stacked columns. Built from the per-minute counts every
// gateway writes to the store; no script, no external asset.
import { html, type SafeHtml } from '../../common/html.js'
import { isoSeconds, utcClock } from '../../common/time.js'
import type { MinuteRow } from '../usage/store.js'

export const chartMethods = ['oauth', 'basic', 'wsse', 'login_api', 'none'] as const
export type ChartMethod = (typeof chartMethods)[number]

/** The chart's methods' names, and oauth1's (the policy of OAuth 1.0a, whose requests the chart counts as oauth). */
export const methodLabels: Record<ChartMethod | 'oauth1', string> = { oauth: 'OAuth', basic: 'Basic', wsse: 'WSSE', login_api: 'Login API', none: 'anonymous', oauth1: 'OAuth 1.0a' }
export const methodColors: Record<ChartMethod, string> = { oauth: '#2e7d32', basic: '#ef6c00', wsse: '#c62828', login_api: '#6a1b9a', none: '#9e9e9e' }

export interface ChartRange {
  name: string
  label: string
  bucketMs: number
  buckets: number
}

const minute = 60_000
export const chartRanges: ChartRange[] = [
  { name: '1h', label: 'last hour', bucketMs: minute, buckets: 60 },
  { name: '6h', label: 'last 6 hours', bucketMs: 5 * minute, buckets: 72 },
  { name: '24h', label: 'last 24 hours', bucketMs: 30 * minute, buckets: 48 },
  { name: '7d', label: 'last 7 days', bucketMs: 180 * minute, buckets: 56 },
]
export const defaultRange = chartRanges[1]!

export interface Bucket {
  start: number
  counts: Record<ChartMethod, number>
  total: number
}

/** The window [from, to) a range covers at `now`, aligned to whole buckets. */
export function rangeWindow(range: ChartRange, now: number): { from: number; to: number } {
  const to = Math.floor(now / range.bucketMs) * range.bucketMs + range.bucketMs
  return { from: to - range.buckets * range.bucketMs, to }
}

export function bucketize(rows: MinuteRow[], range: ChartRange, now: number): Bucket[] {
  const { from } = rangeWindow(range, now)
  const buckets: Bucket[] = Array.from({ length: range.buckets }, (_, i) => ({
    start: from + i * range.bucketMs,
    counts: { oauth: 0, basic: 0, wsse: 0, login_api: 0, none: 0 },
    total: 0,
  }))
  for (const r of rows) {
    const i = Math.floor((r.minute - from) / range.bucketMs)
    const b = buckets[i]
    if (!b || !(chartMethods as readonly string[]).includes(r.method)) continue
    // Accepted requests only: refused and throttled attempts are not use of a method.
    b.counts[r.method as ChartMethod] += r.accepted
    b.total += r.accepted
  }
  return buckets
}

export function totals(buckets: Bucket[]): Record<ChartMethod, number> & { all: number } {
  const t = { oauth: 0, basic: 0, wsse: 0, login_api: 0, none: 0, all: 0 }
  for (const b of buckets) {
    for (const m of chartMethods) t[m] += b.counts[m]
    t.all += b.total
  }
  return t
}

function timeLabel(ms: number, range: ChartRange): string {
  return range.bucketMs >= 180 * minute ? `${isoSeconds(ms).slice(5, 10)} ${utcClock(ms)}` : utcClock(ms)
}

const pct = (n: number, total: number) => (total === 0 ? 0 : (100 * n) / total)

/** The SVG element; each coloured rect carries data-method and data-count, and a title. */
export function renderChart(buckets: Bucket[], range: ChartRange): SafeHtml {
  const width = 760
  const height = 250
  const left = 76
  const top = 16
  const plotW = width - left - 10
  const plotH = 200
  const slot = plotW / buckets.length
  const barW = Math.max(1, slot - (slot > 4 ? 1.5 : 0.5))
  const parts: SafeHtml[] = []
  const all = totals(buckets)

  for (const p of [0, 25, 50, 75, 100]) {
    const y = top + plotH - (plotH * p) / 100
    parts.push(html`<line x1="${left}" x2="${left + plotW}" y1="${y}" y2="${y}" stroke="#e0e0e0" stroke-width="1"/>`)
    parts.push(html`<text x="${left - 6}" y="${y + 4}" text-anchor="end" font-size="11" fill="#555">${p}%</text>`)
  }
  buckets.forEach((b, i) => {
    const x = left + i * slot
    if (b.total === 0) return
    let y = top + plotH
    for (const m of chartMethods) {
      const n = b.counts[m]
      if (n === 0) continue
      const h = (plotH * n) / b.total
      y -= h
      const title = `${timeLabel(b.start, range)} UTC: ${methodLabels[m]} ${n} of ${b.total} (${pct(n, b.total).toFixed(0)}%)`
      parts.push(html`<rect class="bar" data-method="${m}" data-count="${n}" x="${x.toFixed(2)}" y="${y.toFixed(2)}" width="${barW.toFixed(2)}" height="${h.toFixed(2)}" fill="${methodColors[m]}"><title>${title}</title></rect>`)
    }
  })
  // Six labels at most; on a phone the page's stylesheet draws them larger (the SVG is scaled down to fit).
  const labelEvery = Math.ceil(buckets.length / 6)
  buckets.forEach((b, i) => {
    if (i % labelEvery !== 0) return
    const x = left + i * slot
    parts.push(html`<line x1="${x.toFixed(2)}" x2="${x.toFixed(2)}" y1="${top + plotH}" y2="${top + plotH + 4}" stroke="#999"/>`)
    parts.push(html`<text x="${x.toFixed(2)}" y="${top + plotH + 17}" font-size="11" fill="#555">${timeLabel(b.start, range)}</text>`)
  })
  if (all.all === 0) {
    parts.push(html`<text x="${left + plotW / 2}" y="${top + plotH / 2}" text-anchor="middle" font-size="14" fill="#777">No requests in the ${range.label}</text>`)
  }
  parts.push(html`<line x1="${left}" x2="${left + plotW}" y1="${top + plotH}" y2="${top + plotH}" stroke="#999"/>`)
  const summary = chartMethods.map((m) => `${methodLabels[m]} ${pct(all[m], all.all).toFixed(0)}%`).join(', ')
  return html`<svg xmlns="http://www.w3.org/2000/svg" id="method-chart" role="img" viewBox="0 0 ${width} ${height}" width="100%" data-total="${all.all}" aria-label="${`Share of requests per auth method, ${range.label} (UTC): ${summary}`}">${parts}</svg>`
}
