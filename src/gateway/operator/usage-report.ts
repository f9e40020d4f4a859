// The legacy-usage report as an outreach list (SPEC §6.3), shared by GET /admin/usage,
// GET /admin/usage.csv, `kigo usage` and the dashboard: the store's rows, filtered,
// sorted, and for each legacy row whether that user's same client has been seen with
// OAuth since (moved), with the user's contact e-mail. Built over UsageStore.list, so a
// change of the stored rows' shape stays in the store.
//
// Choices: "moved" means OAuth requests from the same user and the same client name were
// last seen after this row's last Basic or WSSE request (the client's newest requests are
// OAuth); OAuth rows themselves have no "moved". The client filter is a case-insensitive
// substring (client names are User-Agent strings that carry versions).
import type { UsageRow, UsageStore } from '../usage/store.js'

export const usageSortKeys = ['last_seen', 'first_seen', 'count', 'user', 'client', 'method'] as const
export type UsageSortKey = (typeof usageSortKeys)[number]

export interface UsageQuery {
  method?: string
  user?: string
  client?: string
  since?: number
  /** Only legacy rows whose client has (true) or has not (false) moved to OAuth. */
  moved?: boolean
  sort?: UsageSortKey
  order?: 'asc' | 'desc'
  limit?: number
}

export interface UsageReportRow extends UsageRow {
  /** Legacy rows: whether the same user's same client was seen with OAuth since; null for OAuth rows. */
  moved: boolean | null
  /** When that client was last seen with OAuth; null when never. */
  oauthLastSeen: number | null
  /** The user's contact e-mail, when the operator or the user set one. */
  email: string | null
}

/** Rows read from the store per report: the report is for people, not bulk export of millions. */
const maxRows = 100_000

const key = (user: string, client: string) => `${user}\u0000${client}`

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
  store: Pick<UsageStore, 'list'>,
  emails: (() => Promise<Map<string, string | null>>) | undefined,
  query: UsageQuery,
): Promise<UsageReportRow[]> {
  const base = { ...(query.user !== undefined ? { user: query.user } : {}), ...(query.since !== undefined ? { since: query.since } : {}), limit: maxRows }
  const [rows, oauth, contacts] = await Promise.all([
    store.list({ ...base, ...(query.method !== undefined ? { method: query.method } : {}) }),
    // OAuth use of the same clients, whenever it was (a since filter must not hide a move);
    // OpenID Connect sign-ins count as a move too (where a login-API site goes, docs/oidc.md).
    Promise.all(['oauth', 'oidc'].map((method) => store.list({ method, ...(query.user !== undefined ? { user: query.user } : {}), limit: maxRows }))).then((lists) => lists.flat()),
    emails ? emails() : Promise.resolve(new Map<string, string | null>()),
  ])
  const oauthSeen = new Map<string, number>()
  for (const r of oauth) oauthSeen.set(key(r.user, r.client), Math.max(oauthSeen.get(key(r.user, r.client)) ?? 0, r.lastSeen))
  const needle = query.client?.toLowerCase()
  let report: UsageReportRow[] = rows
    .filter((r) => needle === undefined || r.client.toLowerCase().includes(needle))
    .map((r) => {
      const seen = oauthSeen.get(key(r.user, r.client)) ?? null
      const legacy = r.method !== 'oauth' && r.method !== 'oidc'
      return { ...r, moved: legacy ? seen !== null && seen > r.lastSeen : null, oauthLastSeen: legacy ? seen : null, email: contacts.get(r.user) ?? null }
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

export const csvColumns = ['method', 'user', 'email', 'client', 'count', 'first_seen', 'last_seen', 'moved', 'oauth_last_seen'] as const
