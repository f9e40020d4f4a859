// The dashboard's HTML (docs/gateway.md#the-operator-api-and-dashboard): plain server-rendered pages with inline CSS, no
// script and nothing fetched at run time. Written with `html`, which escapes every value.
import { html, joinHtml, timeHtml, type SafeHtml } from '../../common/html.js'
import { siteHeader, sitePage } from '../../common/site-page.js'
import { eventVerb, fieldChanges } from '../../common/audit-diff.js'
import { actorName } from '../audit/audited.js'
import { legacyMethods, type LegacyMethod } from '../policy/types.js'
import { chartMethods, chartRanges, methodColors, methodLabels, type Bucket, type ChartRange, renderChart, totals } from './dashboard-chart.js'
import type { methodPolicyView } from './policy-api.js'
import type { AuditEvent } from '../audit/store.js'
import { usageColumns, type UsageColumn, type UsageQuery, type UsageReportRow, type UsageSortKey } from './usage-report.js'

/** A dashboard page: the site's header (titled "operator dashboard") and stylesheet around `body`. */
export function page(title: string, body: SafeHtml, right?: SafeHtml): string {
  return sitePage({ title, header: siteHeader({ home: '/admin/', links: [], signIn: false, title: 'operator dashboard', ...(right ? { right } : {}) }), bodyClass: 'dash', mainClass: 'full', body })
}

export function loginPage(error?: string): string {
  return page('kigo operator dashboard: sign in', html`
<form class="login" method="post" action="/admin/login">
  <h1>kigo operator dashboard</h1>
  <p class="muted">Sign in with the gateway's admin token (<code>KIGO_ADMIN_TOKEN</code>, or the <code>admin-token</code> file in the data directory).</p>
  ${error ? html`<p class="error" role="alert">${error}</p>` : ''}
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
  /** Sections other features add below the policy (the migration notices). */
  sections?: SafeHtml[]
  /** The session can sign out (it came from the login form, not a bearer header). */
  signedInWithCookie: boolean
  /** The bound of distinct clients per user in the report. */
  maxClientsPerUser?: number
  /** Each method's change form (policy-form.ts), filled with its stored policy. */
  policyForms: Record<LegacyMethod, SafeHtml>
  /** The method whose policy the dashboard has just changed. */
  applied?: LegacyMethod
}

// Readable ("27 Nov 2026, 02:10 UTC"); the datetime attribute keeps the second.
const none = html`<span class="muted">–</span>`
const when = (ms: number | null | undefined): SafeHtml => (ms == null ? none : timeHtml(ms))
const whenText = (s: string | null) => when(s === null ? null : Date.parse(s))
const stateBadge = (s: string) => html`<span class="state state-${s}">${s}</span>`

function chartSection(d: DashboardData): SafeHtml {
  const t = totals(d.buckets)
  const share = (n: number) => (t.all === 0 ? '0' : ((100 * n) / t.all).toFixed(1))
  const ranges = chartRanges.map((r) => html`<a href="?range=${r.name}"${r.name === d.range.name ? html` class="current" aria-current="page"` : ''}>${r.label}</a>`)
  return html`<section id="chart">
<h2>Requests per auth method</h2>
<p class="ranges">${ranges}</p>
<div class="chart-frame">${renderChart(d.buckets, d.range)}</div>
<ul class="legend">${chartMethods.map((m) => html`<li data-method="${m}"><span class="swatch" style="background:${methodColors[m]}"></span>${methodLabels[m]}: <strong>${t[m]}</strong> (${share(t[m])}%)</li>`)}<li class="muted">${t.all} requests, ${d.range.label}, all gateways</li></ul>
</section>`
}

function exceptionText(x: { user?: string; client?: string; until: string }): SafeHtml {
  const who = x.user === undefined
    ? html`client <code>${x.client ?? ''}</code> alone <span class="muted">(matches nobody)</span>`
    : html`user <code>${x.user}</code>${x.client !== undefined ? html` with client <code>${x.client}</code> <span class="muted">(self-declared)</span>` : ''}`
  return html`${who} until ${whenText(x.until)}`
}

function policySection(d: DashboardData): SafeHtml {
  const changes = legacyMethods
    .map((m) => ({ m, c: d.policies[m].effective.next_change }))
    .filter((x) => x.c !== null)
    .sort((a, b) => Date.parse(a.c!.at) - Date.parse(b.c!.at))
  const next = changes[0]
  const nextLine = next
    ? html`<p class="next" id="next-change">Next scheduled change: <strong>${methodLabels[next.m]}</strong> becomes ${stateBadge(next.c!.state)} at ${when(Date.parse(next.c!.at))}</p>`
    : html`<p class="next muted" id="next-change">No scheduled change.</p>`
  const rows = legacyMethods.map((m) => {
    const p = d.policies[m]
    const e = p.effective
    const now = html`${e.refusing
      ? html`${stateBadge(e.state)} <span class="refusing">refusing${e.brownout_until ? html` until ${whenText(e.brownout_until)}` : ''}</span>`
      : html`${stateBadge(e.state)}${e.next_window ? html`<br><span class="muted">next brownout ${whenText(e.next_window.start)}</span>` : ''}`}<p class="outlook">${e.summary}</p>`
    const windows = p.windows.length === 0 ? none : joinHtml(p.windows.map((w) => `${w.start}–${w.end}`), ', ')
    const active = p.exceptions.filter((x) => Date.parse(x.until) > d.now)
    const exceptions = active.length === 0
      ? html`<span class="muted">none</span>`
      : html`${joinHtml(active.slice(0, 5).map(exceptionText), html`<br>`)}${active.length > 5 ? html`<br><span class="muted">and ${active.length - 5} more</span>` : ''}`
    const schedule = p.schedule.filter((s) => Date.parse(s.from) > d.now)
    // Settings that no longer act are not shown as active: windows outside brownout,
    // exceptions outside brownout and deny.
    const brownoutAhead = e.state === 'brownout' || schedule.some((s) => s.state === 'brownout')
    const refusingAhead = e.state === 'brownout' || e.state === 'deny' || schedule.some((s) => s.state === 'brownout' || s.state === 'deny')
    const windowsCell = brownoutAhead ? windows : p.windows.length === 0 ? windows : html`<span class="muted">not in brownout (kept: ${windows})</span>`
    const exceptionsCell = refusingAhead ? exceptions : html`<span class="muted">not refusing</span>`
    // The end every client is told (the Sunset header): once denied, when it ended.
    const sunsetCell = e.ended_at !== null ? html`ended ${whenText(e.ended_at)}` : whenText(e.ends_at)
    const scheduled = schedule.length === 0 ? none : joinHtml(schedule.map((s) => html`${stateBadge(s.state)} at ${whenText(s.from)}`), html`<br>`)
    return html`<tr data-method="${m}"><th scope="row" data-label="Method">${methodLabels[m]}</th><td data-label="In effect now">${now}</td><td data-label="Set to">${stateBadge(p.state)}${Date.parse(p.since) > 0 ? html` since ${whenText(p.since)}` : ''}</td><td data-label="Deprecated since">${whenText(e.deprecated_since)}</td><td data-label="Sunset">${sunsetCell}</td><td data-label="Brownout windows">${windowsCell}</td><td data-label="Exceptions">${exceptionsCell}</td><td data-label="Scheduled">${scheduled}</td></tr>`
  })
  rows.push(html`<tr data-method="oauth2"><th scope="row" data-label="Method">OAuth 2.0, OpenID Connect</th><td data-label="In effect now">${stateBadge('allow')}</td><td class="muted" colspan="6">always allowed</td></tr>`)
  return html`<section id="policy">
<h2>Migration policy</h2>
${nextLine}
<table class="cards"><thead><tr><th>Method</th><th>In effect now</th><th>Set to</th><th>Deprecated since</th><th>Sunset</th><th>Brownout windows (UTC)</th><th>Exceptions</th><th>Scheduled</th></tr></thead>
<tbody>${joinHtml(rows, '\n')}</tbody></table>
${d.applied ? html`<p class="notice" role="status" id="policy-applied">The ${methodLabels[d.applied]} policy was changed; the audit trail below has the change.</p>` : ''}
<details id="policy-forms"><summary>Change the policy</summary>
${legacyMethods.map((m) => html`<h3>${methodLabels[m]}</h3>${d.policyForms[m]}`)}
<p class="muted">Each change is shown first, with whom it touches; only its Apply changes the policy. Windows are UTC; dates without a time are midnight UTC. Exceptions: <code>kigo policy set</code>.</p>
</details>
<p class="muted">Migration guide: <a href="${d.guideUrl}" rel="noreferrer">${d.guideUrl}</a>. <code>kigo policy set</code> and <code>PUT /admin/policy</code> change the policy too.</p>
</section>`
}

const sortLabels: Record<UsageSortKey, string> = { last_seen: 'last seen', first_seen: 'first seen', count: 'requests', user: 'user', client: 'client', method: 'method' }

function filterForm(q: UsageQuery & { sort: UsageSortKey }): SafeHtml {
  const option = (value: string, label: string, current: string | undefined) => html`<option value="${value}"${value === (current ?? '') ? html` selected` : ''}>${label}</option>`
  const moved = q.moved === undefined ? '' : q.moved ? 'yes' : 'no'
  return html`<form class="filters" method="get" action="/admin/#usage" role="search" aria-label="Filter the legacy usage">
<label>Method<select name="method">${usageMethodOptions.map(([v, l]) => option(v, l, q.method))}</select></label>
<label>User<input name="user" value="${q.user ?? ''}" size="12" autocomplete="off"></label>
<label>Client contains<input name="client" value="${q.client ?? ''}" size="14" autocomplete="off"></label>
<label>Moved to OAuth<select name="moved">${option('', 'any', moved)}${option('no', 'not moved', moved)}${option('yes', 'moved', moved)}</select></label>
<label>Sort by<select name="sort">${Object.entries(sortLabels).map(([v, l]) => option(v, l, q.sort))}</select></label>
<label>Order<select name="order">${option('', 'default', q.order)}${option('desc', 'descending', q.order)}${option('asc', 'ascending', q.order)}</select></label>
<button type="submit">Apply</button>
</form>`
}

/** The table's method filter: every legacy method (the default), each one, and where clients move to. */
const usageMethodOptions: Array<[string, string]> = [
  ['legacy', 'every legacy method'],
  ['basic', 'Basic'],
  ['wsse', 'WSSE'],
  ['login_api', 'login API'],
  ['oauth', 'OAuth 1.0a (its policy: oauth1)'],
  ['oauth2', 'OAuth 2.0 (moved)'],
  ['oidc', 'OpenID Connect (moved)'],
]

/** The `kigo usage` command line that prints this table's CSV (the same filters, sort and order). */
export function usageCommand(q: UsageQuery): string {
  const words = ['kigo', 'usage']
  const add = (name: string, value: string) => words.push(`--${name}`, /^[\w:.@-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`)
  if (q.method) add('method', q.method)
  if (q.user) add('user', q.user)
  if (q.client) add('client', q.client)
  if (q.moved !== undefined) add('moved', q.moved ? 'yes' : 'no')
  if (q.sort) add('sort', q.sort)
  if (q.order) add('order', q.order)
  words.push('--csv')
  return words.join(' ')
}

/** Where the usage table's CSV link points: the dashboard's own, which takes its sign-in. */
export const dashboardCsvPath = '/admin/usage-table.csv'

/** The CSV of the table as shown: the page's own filters, as its form sends them. */
function csvLink(q: UsageQuery & { sort: UsageSortKey }): string {
  const params = new URLSearchParams()
  if (q.method) params.set('method', q.method)
  if (q.user) params.set('user', q.user)
  if (q.client) params.set('client', q.client)
  if (q.moved !== undefined) params.set('moved', q.moved ? 'yes' : 'no')
  params.set('sort', q.sort)
  if (q.order) params.set('order', q.order)
  return `${dashboardCsvPath}?${params.toString()}`
}

/** One cell per column of the report (usage-report.ts), so the table has the CSV's columns. */
const usageCells: Record<UsageColumn, (r: UsageReportRow) => SafeHtml | string | number> = {
  method: (r) => methodLabels[r.method as LegacyMethod] ?? r.method,
  user: (r) => html`<code class="id">${r.user}</code>`,
  // A line may break before the @ (a <wbr>), so a long address takes two lines, not the table's width.
  email: (r) => (r.email === null ? none : html`<a href="mailto:${encodeURIComponent(r.email).replace(/%40/g, '@')}">${joinHtml(r.email.split('@').map((part) => html`${part}`), html`<wbr>@`)}</a>`),
  client: (r) => (r.client === '' ? html`<span class="muted">(none)</span>` : r.client),
  accepted: (r) => r.accepted,
  refused_by_policy: (r) => r.refusedByPolicy,
  failed_credentials: (r) => r.failedCredentials,
  throttled: (r) => r.throttled,
  count: (r) => r.count,
  first_seen: (r) => when(r.firstSeen),
  last_seen: (r) => when(r.lastSeen),
  moved: (r) => (r.moved ? html`<span class="moved-yes">moved</span>` : html`<span class="moved-no">not moved</span>`),
  oauth_client: (r) => (r.oauthClient === null ? none : r.oauthClient),
  oauth_last_seen: (r) => when(r.oauthLastSeen),
}
const numericColumns = new Set<UsageColumn>(['accepted', 'refused_by_policy', 'failed_credentials', 'throttled', 'count'])

function usageSection(d: DashboardData): SafeHtml {
  const rows = d.legacy.map((r) => html`<tr>${usageColumns.map((c) => html`<td${numericColumns.has(c.name) ? html` class="num"` : ''} data-label="${c.label}">${usageCells[c.name](r)}</td>`)}</tr>`)
  const more = d.legacyTotal > d.legacy.length ? html`<p class="muted">Showing ${d.legacy.length} of ${d.legacyTotal}; the full report: <code>kigo usage</code>, <code>GET /admin/usage</code> or the CSV.</p>` : ''
  return html`<section id="usage">
<h2>Legacy usage: who still has to migrate</h2>
${filterForm(d.usageQuery)}
<p><a href="${csvLink(d.usageQuery)}" download>Download as CSV</a> <span class="muted">(the rows and columns of this table; <code>${usageCommand(d.usageQuery)}</code> prints the same)</span></p>
${rows.length === 0 ? html`<p class="muted">No use recorded for these filters.</p>` : html`<table id="usage-table" class="cards"><thead><tr>${usageColumns.map((c) => html`<th>${c.label}</th>`)}</tr></thead>
<tbody>${joinHtml(rows, '\n')}</tbody></table>`}
${more}
<p class="muted">The client is what the request says it is (the <code>source</code> parameter or the User-Agent): self-declared, never proof. Clients beyond ${d.maxClientsPerUser ?? 20} per user are counted together as “(other clients)”.</p>
</section>`
}

/** The fields that changed, old struck through and new beside it; a reset or a creation says so. */
function changeCell(e: AuditEvent): SafeHtml {
  const verb = eventVerb(e.action, e.before, e.after)
  const changes = verb === 'deleted' ? [] : fieldChanges(e.before, e.after)
  const lines = changes.map((c) => html`<li><strong>${c.field}</strong>: ${c.before === '(none)' ? '' : html`<del>${c.before}</del> → `}<ins>${c.after}</ins></li>`)
  return html`${verb !== null ? html`<p class="verb">${verb}</p>` : ''}${lines.length > 0 ? html`<ul class="diff">${lines}</ul>` : verb === null ? html`<span class="muted">unchanged</span>` : ''}`
}

function auditSection(d: DashboardData): SafeHtml | '' {
  if (!d.audit) return ''
  const rows = d.audit.map((e) => html`<tr><td data-label="When">${when(e.at.getTime())}</td><td data-label="Change"><code>${e.action}</code></td><td data-label="Target"><code>${e.target}</code></td><td data-label="By">${actorOf(e)}</td><td data-label="What changed">${changeCell(e)}</td></tr>`)
  return html`<section id="audit">
<h2>Recent changes (audit trail)</h2>
${rows.length === 0 ? html`<p class="muted">No changes recorded.</p>` : html`<table id="audit-table" class="cards"><thead><tr><th>When</th><th>Change</th><th>Target</th><th>By</th><th>What changed</th></tr></thead>
<tbody>${joinHtml(rows, '\n')}</tbody></table>`}
<p class="muted">The newest ${rows.length}; all of them: <code>kigo audit</code>, <code>kigo policy history</code> or <code>GET /admin/audit</code>.</p>
</section>`
}

/** Who made the change: the operator, or the user on their own account pages; and from where. */
const actorOf = (e: AuditEvent) => `${actorName(e.actor)} (from ${e.address})`

/** The header's sign-out button, for an operator signed in with the form (a bearer header cannot sign out). */
export const signOutForm = (signedInWithCookie: boolean): SafeHtml | '' =>
  signedInWithCookie ? html`<form method="post" action="/admin/logout"><button type="submit">Sign out</button></form>` : ''

export function dashboardPage(d: DashboardData): string {
  const signOut = signOutForm(d.signedInWithCookie)
  return page('kigo operator dashboard', html`
<h1 class="dash-title">kigo gateway: migration dashboard</h1>
${chartSection(d)}
${policySection(d)}
${d.sections ?? ''}
${usageSection(d)}
${auditSection(d)}`, html`<div class="who"><span class="meta">as of ${when(d.now)}</span>${signOut}</div>`)
}
