// The legacy-usage report as an outreach list (docs/gateway.md#the-usage-report), shared by GET /admin/usage,
// GET /admin/usage.csv, `kigo usage` and the dashboard: the store's rows, filtered,
// sorted, and for each legacy row whether that user's same client has been seen with
// OAuth since (moved), with the user's contact e-mail. Built over UsageStore.list, so a
// change of the stored rows' shape stays in the store.
//
// Choices: "moved" is usage/moved.ts's rule (the same user's same client family seen with
// OAuth, OAuth 2.0 or OpenID Connect after this row's last legacy request; a login-API
// site through its owner's own OpenID Connect clients); modern rows have no "moved", except
// OAuth 1.0a's (method oauth, itself retired by the policy method oauth1): a row naming its
// application moved once that user's token of it was exchanged for OAuth 2.0, or the user
// authorized the application again with OAuth 2.0 (usage/moved.ts oauth1Rule). The client
// filter is a case-insensitive substring (client names are User-Agent strings that carry
// versions). The report lists use by default: rows with requests accepted or refused by
// the policy (a real user's real credentials); `all` adds rows of failed or throttled
// attempts only, and the "(unknown users)" row, which name nobody to write to. Every
// surface shows the same columns (usageColumns), in the same order.
import { isoSeconds } from '../../common/time.js'
import { hasMoved, modernMethods, oauth1Rule, oauthUseByFamily } from '../usage/moved.js'
import type { UsageRow, UsageStore } from '../usage/store.js'

export const usageSortKeys = ['last_seen', 'first_seen', 'count', 'user', 'client', 'method'] as const
export type UsageSortKey = (typeof usageSortKeys)[number]

export interface UsageQuery {
  /** basic, wsse or oauth; `legacy` is basic and wsse. */
  method?: string
  user?: string
  client?: string
  since?: number
  /** Only legacy rows whose client has (true) or has not (false) moved to OAuth. */
  moved?: boolean
  sort?: UsageSortKey
  order?: 'asc' | 'desc'
  limit?: number
  /** Also rows with no request accepted or refused by the policy (failed or throttled attempts only). */
  all?: boolean
}

export interface UsageReportRow extends UsageRow {
  /** Legacy rows: whether the same user's same client was seen with OAuth since; null for OAuth rows. */
  moved: boolean | null
  /** When that client was last seen with OAuth; null when never. */
  oauthLastSeen: number | null
  /** The OAuth client of the same family last seen (the version that moved); null when none. */
  oauthClient: string | null
  /** The user's contact e-mail, when the operator or the user set one. */
  email: string | null
}

/** Rows read from the store per report: the report is for people, not bulk export of millions. */
const maxRows = 100_000

function compare(sort: UsageSortKey, a: UsageReportRow, b: UsageReportRow): number {
  switch (sort) {
    case 'last_seen':
      return a.lastSeen - b.lastSeen
    case 'first_seen':
      return a.firstSeen - b.firstSeen
    case 'count':
      return a.count - b.count
    case 'user':
      return a.user.localeCompare(b.user)
    case 'client':
      return a.client.localeCompare(b.client)
    case 'method':
      return a.method.localeCompare(b.method)
  }
}

export async function usageReport(
  store: Pick<UsageStore, 'list'> & Partial<Pick<UsageStore, 'oauth1Exchanges'>>,
  emails: (() => Promise<Map<string, string | null>>) | undefined,
  query: UsageQuery,
): Promise<UsageReportRow[]> {
  const base = { ...(query.user !== undefined ? { user: query.user } : {}), ...(query.since !== undefined ? { since: query.since } : {}), limit: maxRows }
  const stored = query.method === undefined || query.method === 'legacy' ? {} : { method: query.method }
  const [rows, oauth, contacts] = await Promise.all([
    store.list({ ...base, ...stored }),
    // Modern use of the same clients, whenever it was (a since filter must not hide a move);
    // OpenID Connect sign-ins count as a move too (where a login-API site goes, docs/oidc.md),
    // by whoever signs in: a site moves through its owner's clients, whatever the user filter.
    Promise.all(modernMethods.map((method) => store.list({ method, ...(query.user !== undefined && method !== 'oidc' ? { user: query.user } : {}), limit: maxRows }))).then((lists) => lists.flat()),
    emails ? emails() : Promise.resolve(new Map<string, string | null>()),
  ])
  const oauthUse = oauthUseByFamily(oauth)
  // OAuth 1.0a rows that name their application, judged by the oauth1 rule.
  const apps = [...new Set(rows.filter((r) => r.method === 'oauth' && (r.clientId ?? '') !== '').map((r) => r.clientId))]
  const exchanges = apps.length === 0 || store.oauth1Exchanges === undefined ? [] : await store.oauth1Exchanges(apps)
  const oauth1 = oauth1Rule({
    oauth2: oauth.filter((r) => r.method === 'oauth2' && (r.clientId ?? '') !== '' && r.accepted > 0).map((r) => ({ application: r.clientId, user: r.user, lastSeen: r.lastSeen })),
    exchanges: exchanges.map((e) => ({ application: e.consumerKey, user: e.userId, exchangedAt: e.exchangedAt })),
  })
  const oauth1Moved = (r: UsageRow): boolean | null => (r.method === 'oauth' && (r.clientId ?? '') !== '' ? oauth1.token({ application: r.clientId!, user: r.user, lastSeen: r.lastSeen }) !== 'on_oauth1' : null)
  const needle = query.client?.toLowerCase()
  let report: UsageReportRow[] = rows
    .filter((r) => query.method !== 'legacy' || !modernMethods.includes(r.method))
    .filter((r) => query.all === true || r.accepted > 0 || r.refusedByPolicy > 0)
    .filter((r) => needle === undefined || r.client.toLowerCase().includes(needle))
    .map((r) => {
      const legacy = !modernMethods.includes(r.method)
      const use = legacy ? oauthUse(r) : null
      return { ...r, moved: legacy ? hasMoved(r, use) : oauth1Moved(r), oauthLastSeen: use?.lastSeen ?? null, oauthClient: use?.client ?? null, email: contacts.get(r.user) ?? null }
    })
  if (query.moved !== undefined) report = report.filter((r) => r.moved === query.moved)
  const sort = query.sort ?? 'last_seen'
  const direction = (query.order ?? (sort === 'user' || sort === 'client' || sort === 'method' ? 'asc' : 'desc')) === 'asc' ? 1 : -1
  // Ties in a stable order, so that pages and exports do not shuffle.
  report.sort((a, b) => direction * compare(sort, a, b) || a.method.localeCompare(b.method) || a.user.localeCompare(b.user) || a.client.localeCompare(b.client))
  return query.limit === undefined ? report : report.slice(0, query.limit)
}

/** RFC 4180 field: quoted when it holds a comma, quote or line break; a leading =, +, - or @ is prefixed with ' so spreadsheets do not run it. */
export function csvField(value: string | number | boolean | null): string {
  if (value === null) return ''
  let text = String(value)
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text
}

/**
 * The report's columns, in order, for every surface: the dashboard's table (its headings
 * are the labels), the CSV (its header is the names), GET /admin/usage (the names are the
 * fields) and `kigo usage`.
 */
export const usageColumns = [
  { name: 'method', label: 'Method' },
  { name: 'user', label: 'User' },
  { name: 'email', label: 'Contact' },
  { name: 'client', label: 'Client' },
  { name: 'accepted', label: 'Accepted' },
  { name: 'refused_by_policy', label: 'Refused by policy' },
  { name: 'failed_credentials', label: 'Failed credentials' },
  { name: 'throttled', label: 'Throttled' },
  { name: 'count', label: 'All attempts' },
  { name: 'first_seen', label: 'First seen' },
  { name: 'last_seen', label: 'Last seen' },
  { name: 'moved', label: 'Moved to OAuth' },
  { name: 'oauth_client', label: 'OAuth client' },
  { name: 'oauth_last_seen', label: 'OAuth last seen' },
] as const

export type UsageColumn = (typeof usageColumns)[number]['name']

/** One report row as the named fields of usageColumns (GET /admin/usage's record, a CSV line). */
export function usageReportFields(r: UsageReportRow): Record<UsageColumn, string | number | boolean | null> {
  return {
    method: r.method,
    user: r.user,
    email: r.email,
    client: r.client,
    accepted: r.accepted,
    refused_by_policy: r.refusedByPolicy,
    failed_credentials: r.failedCredentials,
    throttled: r.throttled,
    count: r.count,
    first_seen: isoSeconds(r.firstSeen),
    last_seen: isoSeconds(r.lastSeen),
    moved: r.moved,
    oauth_client: r.oauthClient,
    oauth_last_seen: r.oauthLastSeen === null ? null : isoSeconds(r.oauthLastSeen),
  }
}

/** The report as CSV (RFC 4180): a header of the column names, one line per row. */
export function usageCsv(rows: UsageReportRow[]): string {
  const lines = [usageColumns.map((c) => c.name).join(',')]
  for (const r of rows) {
    const f = usageReportFields(r)
    lines.push(usageColumns.map((c) => csvField(f[c.name])).join(','))
  }
  return lines.join('\r\n') + '\r\n'
}
