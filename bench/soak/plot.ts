// The soak's plot (docs/operations.md#reliability): throughput, p99 and every process's RSS
// per second, one panel each over the same time axis, with each fault shaded and named.
import escapeHtml from 'escape-html'

export interface Second {
  t: number
  /** Successful answers in this second. */
  ok: number
  failed: number
  p99Ms: number | null
  rssMb: Record<string, number | null>
}

export interface FaultMark {
  target: string
  at_s: number
  until_s: number
}

const width = 1000
const panelHeight = 180
const left = 60
const right = 150
const colours = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2']

function panel(title: string, unit: string, top: number, seconds: Second[], series: Array<{ name: string; value: (s: Second) => number | null }>, faults: FaultMark[], end: number): string {
  const values = seconds.flatMap((s) => series.map((x) => x.value(s))).filter((v): v is number => v !== null && Number.isFinite(v))
  const max = Math.max(1, ...values) * 1.1
  const x = (t: number) => left + ((width - left - right) * t) / Math.max(1, end)
  const y = (v: number) => top + panelHeight - (panelHeight * v) / max
  const out: string[] = []
  out.push(`<text x="${left}" y="${top - 6}" font-size="13" font-weight="bold">${escapeHtml(title)} (${escapeHtml(unit)})</text>`)
  for (const f of faults) {
    out.push(`<rect x="${x(f.at_s).toFixed(1)}" y="${top}" width="${Math.max(1, x(f.until_s) - x(f.at_s)).toFixed(1)}" height="${panelHeight}" fill="#d62728" fill-opacity="0.12"/>`)
  }
  out.push(`<rect x="${left}" y="${top}" width="${width - left - right}" height="${panelHeight}" fill="none" stroke="#888"/>`)
  out.push(`<text x="${left - 4}" y="${top + 10}" font-size="10" text-anchor="end">${max.toFixed(0)}</text><text x="${left - 4}" y="${top + panelHeight}" font-size="10" text-anchor="end">0</text>`)
  series.forEach((s, i) => {
    const points: string[] = []
    for (const sec of seconds) {
      const v = s.value(sec)
      if (v === null || !Number.isFinite(v)) continue
      points.push(`${x(sec.t).toFixed(1)},${y(v).toFixed(1)}`)
    }
    const colour = colours[i % colours.length]!
    out.push(`<polyline fill="none" stroke="${colour}" stroke-width="1.2" points="${points.join(' ')}"/>`)
    out.push(`<text x="${width - right + 8}" y="${top + 14 + i * 14}" font-size="11" fill="${colour}">${escapeHtml(s.name)}</text>`)
  })
  return out.join('\n')
}

export function soakSvg(seconds: Second[], faults: FaultMark[], processes: string[], caption: string): string {
  const end = seconds.length ? seconds[seconds.length - 1]!.t + 1 : 1
  const top = 40
  const gap = 50
  const height = top + 3 * (panelHeight + gap) + 30
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${left}" y="20" font-size="14">${escapeHtml(caption)}</text>`,
    panel('Throughput', 'answers per second', top + 10, seconds, [{ name: 'succeeded', value: (s) => s.ok }, { name: 'failed', value: (s) => s.failed }], faults, end),
    panel('p99 latency', 'ms', top + 10 + panelHeight + gap, seconds, [{ name: 'p99', value: (s) => s.p99Ms }], faults, end),
    panel('RSS', 'MiB', top + 10 + 2 * (panelHeight + gap), seconds, processes.map((p) => ({ name: p, value: (s: Second) => s.rssMb[p] ?? null })), faults, end),
  ]
  // Each fault named once, under the last panel.
  const axisY = top + 10 + 3 * panelHeight + 2 * gap + 14
  const x = (t: number) => left + ((width - left - right) * t) / Math.max(1, end)
  faults.forEach((f, i) => parts.push(`<text x="${x(f.at_s).toFixed(1)}" y="${axisY + (i % 2) * 11}" font-size="9" fill="#d62728">${escapeHtml(f.target)}</text>`))
  parts.push(`<text x="${width - right}" y="${axisY}" font-size="10" text-anchor="end">${end.toFixed(0)} s</text>`)
  parts.push('</svg>')
  return `${parts.join('\n')}\n`
}
