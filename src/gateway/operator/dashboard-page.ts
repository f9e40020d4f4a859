// The dashboard's HTML (SPEC §6.4): plain server-rendered pages with inline CSS, no
// script and nothing fetched at run time. Every value is escaped.
import esc from 'escape-html'
import { isoSeconds } from '../policy/time.js'
import { legacyMethods, type LegacyMethod } from '../policy/types.js'
import { chartMethods, chartRanges, methodColors, methodLabels, type Bucket, type ChartRange, renderChart, totals } from './dashboard-chart.js'
import type { methodPolicyView } from './policy-api.js'
import type { AuditEvent } from '../audit/store.js'
import { usageColumns, type UsageColumn, type UsageQuery, type UsageReportRow, type UsageSortKey } from './usage-report.js'

const css = `
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;background:#f6f7f9}
header{background:#1f2a37;color:#fff;padding:12px 24px;display:flex;align-items:center;gap:16px}
header h1{font-size:18px;margin:0;font-weight:600;flex:1}
header .meta{color:#c9d1d9;font-size:12px}
header button{background:transparent;color:#fff;border:1px solid #8b949e;border-radius:4px;padding:4px 10px;cursor:pointer}
main{max-width:1120px;margin:0 auto;padding:16px 24px 48px}
section{background:#fff;border:1px solid #d8dee4;border-radius:6px;padding:16px 20px;margin-top:16px;overflow-x:auto}
h2{font-size:16px;margin:0 0 10px}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:6px 8px;border-bottom:1px solid #eaeef2;vertical-align:top}
thead th{font-size:12px;text-transform:uppercase;letter-spacing:.03em;color:#57606a}
tbody th{font-weight:600}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.legend{display:flex;gap:18px;flex-wrap:wrap;margin:8px 0 0;padding:0;list-style:none}
.legend li{display:flex;align-items:center;gap:6px}
.swatch{width:12px;height:12px;border-radius:2px;display:inline-block}
.ranges a{margin-right:10px}
.ranges a.current{font-weight:600;color:#1f2328;text-decoration:none}
.state{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600}
.state-allow{background:#dafbe1;color:#1a7f37}.state-deprecate{background:#fff8c5;color:#7d4e00}
.state-brownout{background:#ffe2cc;color:#953800}.state-deny{background:#ffebe9;color:#cf222e}
.refusing{color:#cf222e;font-weight:600}
.muted{color:#6e7781}
time{white-space:nowrap}
.next{margin:0 0 10px}
code{font:12px ui-monospace,SFMono-Regular,Menlo,monospace;background:#f6f8fa;padding:1px 4px;border-radius:3px}
form.login{max-width:380px;margin:80px auto;background:#fff;border:1px solid #d8dee4;border-radius:6px;padding:24px}
form.login label{display:block;margin:12px 0 4px;font-weight:600}
form.login input{width:100%;padding:8px;border:1px solid #d0d7de;border-radius:4px;font:inherit}
form.filters{display:flex;flex-wrap:wrap;gap:8px 12px;align-items:flex-end;margin:0 0 12px}
form.filters label{display:flex;flex-direction:column;font-size:12px;color:#57606a;gap:2px}
form.filters input,form.filters select{font:inherit;padding:4px 6px;border:1px solid #d0d7de;border-radius:4px;min-width:0}
form.filters button{padding:5px 12px;border:1px solid #1f883d;background:#1f883d;color:#fff;border-radius:4px;font-weight:600}
.moved-yes{color:#1a7f37;font-weight:600}.moved-no{color:#953800}
pre.change{margin:0;white-space:pre-wrap;word-break:break-word;font:12px ui-monospace,SFMono-Regular,Menlo,monospace}
/* A phone: the tables become one card per row (label beside value), nothing scrolls
   sideways; the chart keeps its own width inside its section, labels readable. */
@media (max-width: 700px){
  header{padding:10px 12px;flex-wrap:wrap}
  main{padding:8px 8px 32px}
  section{padding:12px;overflow-x:visible}
  table.cards,table.cards tbody,table.cards tr,table.cards td,table.cards th{display:block;width:100%}
  table.cards thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
  table.cards tr{border:1px solid #d8dee4;border-radius:6px;margin:0 0 10px;padding:6px 8px}
  table.cards td,table.cards tbody th{border:0;padding:3px 0;display:flex;gap:10px;text-align:left;overflow-wrap:anywhere}
  table.cards td[data-label]::before,table.cards tbody th[data-label]::before{content:attr(data-label);flex:0 0 38%;font-size:12px;color:#57606a;font-weight:600;text-transform:uppercase}
  table.cards td.num{text-align:left}
  #chart .chart-frame{overflow-x:auto}
  #chart svg{min-width:640px}
  form.filters label{flex:1 1 40%}
}
form.login button{margin-top:16px;padding:8px 16px;background:#1f883d;color:#fff;border:0;border-radius:4px;font-weight:600;cursor:pointer}
.error{color:#cf222e}
`

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title><style>${css}</style></head>
<body>${body}</body></html>
`
}

export function loginPage(error?: string): string {
  return page('kigo operator dashboard: sign in', `
<form class="login" method="post" action="/admin/login">
  <h1 style="font-size:18px;margin:0">kigo operator dashboard</h1>
  <p class="muted">Sign in with the gateway's admin token (<code>KIGO_ADMIN_TOKEN</code>, or the <code>admin-token</code> file in the data directory).</p>
  ${error ? `<p class="error" role="alert">${esc(error)}</p>` : ''}
  <label for="token">Admin token</label>
  <input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
  <button type="submit">Sign in</button>
</form>`)
}

type PolicyView = ReturnType<typeof methodPolicyView>

export interface DashboardData {
  now: number
  range: ChartRange
  buckets: Bucket[]
  policies: Record<LegacyMethod, PolicyView>
  guideUrl: string
  /** Legacy (Basic, WSSE) usage records, filtered and sorted as asked. */
  legacy: UsageReportRow[]
  legacyTotal: number
  usageQuery: UsageQuery & { sort: UsageSortKey }
  /** The newest audit events, when the trail is available. */
  audit?: AuditEvent[]
  /** The session can sign out (it came from the login form, not a bearer header). */
  signedInWithCookie: boolean
  /** The bound of distinct clients per user in the report. */
  maxClientsPerUser?: number
}

// In tables, shown to the minute on two lines (date, time) so the tables fit a page;
// the datetime attribute keeps the second.
const when = (ms: number | null | undefined, compact = false) => {
  if (ms == null) return '<span class="muted">–</span>'
  const iso = isoSeconds(ms)
  const text = compact ? `${iso.slice(0, 10)}<br>${iso.slice(11, 16)} UTC` : iso.replace('T', ' ').replace('Z', ' UTC')
  return `<time datetime="${iso}" title="${iso}">${text}</time>`
}
const whenText = (s: string | null) => when(s === null ? null : Date.parse(s), true)
const stateBadge = (s: string) => `<span class="state state-${esc(s)}">${esc(s)}</span>`

function chartSection(d: DashboardData): string {
  const t = totals(d.buckets)
  const share = (n: number) => (t.all === 0 ? '0' : ((100 * n) / t.all).toFixed(1))
  const ranges = chartRanges.map((r) => `<a href="?range=${r.name}"${r.name === d.range.name ? ' class="current" aria-current="page"' : ''}>${esc(r.label)}</a>`).join('')
  return `<section id="chart">
<h2>Requests per auth method</h2>
<p class="ranges">${ranges}</p>
<div class="chart-frame">${renderChart(d.buckets, d.range)}</div>
<ul class="legend">${chartMethods.map((m) => `<li data-method="${m}"><span class="swatch" style="background:${methodColors[m]}"></span>${esc(methodLabels[m])}: <strong>${t[m]}</strong> (${share(t[m])}%)</li>`).join('')}<li class="muted">${t.all} requests, ${esc(d.range.label)}, all gateways</li></ul>
</section>`
}

function policySection(d: DashboardData): string {
  const changes = legacyMethods
    .map((m) => ({ m, c: d.policies[m].effective.next_change }))
    .filter((x) => x.c !== null)
    .sort((a, b) => Date.parse(a.c!.at) - Date.parse(b.c!.at))
  const next = changes[0]
  const nextLine = next
    ? `<p class="next" id="next-change">Next scheduled change: <strong>${esc(methodLabels[next.m])}</strong> becomes ${stateBadge(next.c!.state)} at ${when(Date.parse(next.c!.at))}</p>`
    : `<p class="next muted" id="next-change">No scheduled change.</p>`
  const rows = legacyMethods.map((m) => {
    const p = d.policies[m]
    const e = p.effective
    const now = (e.refusing
      ? `${stateBadge(e.state)} <span class="refusing">refusing${e.brownout_until ? ` until ${whenText(e.brownout_until)}` : ''}</span>`
      : `${stateBadge(e.state)}${e.next_window ? `<br><span class="muted">next brownout ${whenText(e.next_window.start)}</span>` : ''}`)
      + `<p class="outlook">${esc(e.summary)}</p>`
    const windows = p.windows.length === 0 ? '<span class="muted">–</span>' : p.windows.map((w) => `${esc(w.start)}–${esc(w.end)}`).join(', ')
    const active = p.exceptions.filter((x) => Date.parse(x.until) > d.now)
    const exceptions = active.length === 0
      ? '<span class="muted">none</span>'
      : active.slice(0, 5).map((x) => `${x.user === undefined ? `client <code>${esc(x.client ?? '')}</code> alone <span class="muted">(matches nobody)</span>` : `user <code>${esc(x.user)}</code>${x.client !== undefined ? ` with client <code>${esc(x.client)}</code> <span class="muted">(self-declared)</span>` : ''}`} until ${whenText(x.until)}`).join('<br>') + (active.length > 5 ? `<br><span class="muted">and ${active.length - 5} more</span>` : '')
    const schedule = p.schedule.filter((s) => Date.parse(s.from) > d.now)
    // Settings that no longer act are not shown as active: windows outside brownout,
    // exceptions outside brownout and deny.
    const brownoutAhead = e.state === 'brownout' || schedule.some((s) => s.state === 'brownout')
    const refusingAhead = e.state === 'brownout' || e.state === 'deny' || schedule.some((s) => s.state === 'brownout' || s.state === 'deny')
    const windowsCell = brownoutAhead ? windows : p.windows.length === 0 ? windows : `<span class="muted">not in brownout (kept: ${windows})</span>`
    const exceptionsCell = refusingAhead ? exceptions : '<span class="muted">not refusing</span>'
    // The end every client is told (the Sunset header): once denied, when it ended.
    const sunsetCell = e.ended_at !== null ? `ended ${whenText(e.ended_at)}` : whenText(e.ends_at)
    return `<tr data-method="${m}"><th scope="row" data-label="Method">${esc(methodLabels[m])}</th><td data-label="In effect now">${now}</td><td data-label="Set to">${stateBadge(p.state)} since ${whenText(p.since)}</td><td data-label="Deprecated since">${whenText(e.deprecated_since)}</td><td data-label="Sunset">${sunsetCell}</td><td data-label="Brownout windows">${windowsCell}</td><td data-label="Exceptions">${exceptionsCell}</td><td data-label="Scheduled">${schedule.length === 0 ? '<span class="muted">–</span>' : schedule.map((s) => `${stateBadge(s.state)} at ${whenText(s.from)}`).join('<br>')}</td></tr>`
  })
  rows.push(`<tr data-method="oauth"><th scope="row" data-label="Method">OAuth</th><td data-label="In effect now">${stateBadge('allow')}</td><td class="muted" colspan="6">always allowed</td></tr>`)
  return `<section id="policy">
<h2>Migration policy</h2>
${nextLine}
<table class="cards"><thead><tr><th>Method</th><th>In effect now</th><th>Set to</th><th>Deprecated since</th><th>Sunset</th><th>Brownout windows (UTC)</th><th>Exceptions</th><th>Scheduled</th></tr></thead>
<tbody>${rows.join('\n')}</tbody></table>
<p class="muted">Migration guide: <a href="${esc(d.guideUrl)}" rel="noreferrer">${esc(d.guideUrl)}</a>. Change the policy with <code>kigo policy set</code> or <code>PUT /admin/policy</code>.</p>
</section>`
}

const sortLabels: Record<UsageSortKey, string> = { last_seen: 'last seen', first_seen: 'first seen', count: 'requests', user: 'user', client: 'client', method: 'method' }

function filterForm(q: UsageQuery & { sort: UsageSortKey }): string {
  const option = (value: string, label: string, current: string | undefined) => `<option value="${esc(value)}"${value === (current ?? '') ? ' selected' : ''}>${esc(label)}</option>`
  const moved = q.moved === undefined ? '' : q.moved ? 'yes' : 'no'
  return `<form class="filters" method="get" action="/admin/#usage" role="search" aria-label="Filter the legacy usage">
<label>Method<select name="method">${option('legacy', 'Basic and WSSE', q.method)}${option('basic', 'Basic', q.method)}${option('wsse', 'WSSE', q.method)}</select></label>
<label>User<input name="user" value="${esc(q.user ?? '')}" size="12" autocomplete="off"></label>
<label>Client contains<input name="client" value="${esc(q.client ?? '')}" size="14" autocomplete="off"></label>
<label>Moved to OAuth<select name="moved">${option('', 'any', moved)}${option('no', 'not moved', moved)}${option('yes', 'moved', moved)}</select></label>
<label>Sort by<select name="sort">${Object.entries(sortLabels).map(([v, l]) => option(v, l, q.sort)).join('')}</select></label>
<label>Order<select name="order">${option('', 'default', q.order)}${option('desc', 'descending', q.order)}${option('asc', 'ascending', q.order)}</select></label>
<button type="submit">Apply</button>
</form>`
}

function csvLink(q: UsageQuery): string {
  const params = new URLSearchParams()
  if (q.method) params.set('method', q.method)
  if (q.user) params.set('user', q.user)
  if (q.client) params.set('client', q.client)
  if (q.moved !== undefined) params.set('moved', String(q.moved))
  if (q.sort) params.set('sort', q.sort)
  if (q.order) params.set('order', q.order)
  return `/admin/usage.csv${params.size > 0 ? `?${params.toString()}` : ''}`
}

/** One cell per column of the report (usage-report.ts), so the table has the CSV's columns. */
const usageCells: Record<UsageColumn, (r: UsageReportRow) => string> = {
  method: (r) => esc(methodLabels[r.method as LegacyMethod] ?? r.method),
  user: (r) => `<code>${esc(r.user)}</code>`,
  email: (r) => (r.email === null ? '<span class="muted">–</span>' : `<a href="mailto:${esc(encodeURIComponent(r.email).replace(/%40/g, '@'))}">${esc(r.email)}</a>`),
  client: (r) => (r.client === '' ? '<span class="muted">(none)</span>' : esc(r.client)),
  accepted: (r) => String(r.accepted),
  refused_by_policy: (r) => String(r.refusedByPolicy),
  failed_credentials: (r) => String(r.failedCredentials),
  throttled: (r) => String(r.throttled),
  count: (r) => String(r.count),
  first_seen: (r) => when(r.firstSeen, true),
  last_seen: (r) => when(r.lastSeen, true),
  moved: (r) => (r.moved ? '<span class="moved-yes">moved</span>' : '<span class="moved-no">not moved</span>'),
  oauth_client: (r) => (r.oauthClient === null ? '<span class="muted">–</span>' : esc(r.oauthClient)),
  oauth_last_seen: (r) => when(r.oauthLastSeen, true),
}
const numericColumns = new Set<UsageColumn>(['accepted', 'refused_by_policy', 'failed_credentials', 'throttled', 'count'])

function usageSection(d: DashboardData): string {
  const rows = d.legacy.map((r) => `<tr>${usageColumns.map((c) => `<td${numericColumns.has(c.name) ? ' class="num"' : ''} data-label="${esc(c.label)}">${usageCells[c.name](r)}</td>`).join('')}</tr>`)
  const more = d.legacyTotal > d.legacy.length ? `<p class="muted">Showing ${d.legacy.length} of ${d.legacyTotal}; the full report: <code>kigo usage</code>, <code>GET /admin/usage</code> or the CSV.</p>` : ''
  return `<section id="usage">
<h2>Legacy usage: who still has to migrate</h2>
${filterForm(d.usageQuery)}
<p><a href="${esc(csvLink(d.usageQuery))}" download>Download as CSV</a> <span class="muted">(the rows and columns of this table; <code>kigo usage --csv</code> gives the same)</span></p>
${rows.length === 0 ? '<p class="muted">No Basic or WSSE use recorded.</p>' : `<table id="usage-table" class="cards"><thead><tr>${usageColumns.map((c) => `<th>${esc(c.label)}</th>`).join('')}</tr></thead>
<tbody>${rows.join('\n')}</tbody></table>`}
${more}
<p class="muted">The client is what the request says it is (the <code>source</code> parameter or the User-Agent): self-declared, never proof. Clients beyond ${d.maxClientsPerUser ?? 20} per user are counted together as “(other clients)”.</p>
</section>`
}

function auditSection(d: DashboardData): string {
  if (!d.audit) return ''
  const rows = d.audit.map((e) => `<tr><td data-label="When">${when(e.at.getTime(), true)}</td><td data-label="Change"><code>${esc(e.action)}</code></td><td data-label="Target"><code>${esc(e.target)}</code></td><td data-label="From">${esc(e.address)}</td><td data-label="Before"><pre class="change">${esc(JSON.stringify(e.before, null, 1) ?? 'null')}</pre></td><td data-label="After"><pre class="change">${esc(JSON.stringify(e.after, null, 1) ?? 'null')}</pre></td></tr>`)
  return `<section id="audit">
<h2>Recent changes (audit trail)</h2>
${rows.length === 0 ? '<p class="muted">No changes recorded through the operator API.</p>' : `<table id="audit-table" class="cards"><thead><tr><th>When</th><th>Change</th><th>Target</th><th>From</th><th>Before</th><th>After</th></tr></thead>
<tbody>${rows.join('\n')}</tbody></table>`}
<p class="muted">The newest ${rows.length}; all of them: <code>kigo audit</code>, <code>kigo policy history</code> or <code>GET /admin/audit</code>.</p>
</section>`
}

export function dashboardPage(d: DashboardData): string {
  const signOut = d.signedInWithCookie ? `<form method="post" action="/admin/logout"><button type="submit">Sign out</button></form>` : ''
  return page('kigo operator dashboard', `
<header><h1>kigo gateway: migration dashboard</h1><span class="meta">as of ${when(d.now)}</span>${signOut}</header>
<main>
${chartSection(d)}
${policySection(d)}
${usageSection(d)}
${auditSection(d)}
</main>`)
}
