// GET /admin/usage (SPEC §6.3): who still uses which method from which client, with
// counts and first/last seen, across every gateway of the deployment. Filters: method,
// user, client (substring), since (records last seen at or after it), moved (true or
// false), limit; sort (last_seen, first_seen, count, user, client, method) and order
// (asc, desc). Each record adds whether its client moved to OAuth (usage-report.ts) and
// the user's contact e-mail. GET /admin/usage.csv: the same report as CSV (RFC 4180).
import type { FastifyInstance } from 'fastify'
import { isoSeconds } from '../policy/time.js'
import type { UsageRecorder } from '../usage/recorder.js'
import type { UsageRow, UsageStore } from '../usage/store.js'
import { csvColumns, csvField, usageReport, usageSortKeys, type UsageQuery, type UsageReportRow, type UsageSortKey } from './usage-report.js'
import { sendOperatorError } from './policy-api.js'
import { queryFilters } from './query-filters.js'

export interface UsageApiOptions {
  store: UsageStore
  /** This gateway's pending counts are written first, so the answer includes them. */
  recorder?: Pick<UsageRecorder, 'flush'>
  /** Users' contact e-mails, by user ID. */
  emails?: () => Promise<Map<string, string | null>>
}

const usageMethods = ['basic', 'wsse', 'login_api', 'oauth']
const allowedParams = ['method', 'user', 'client', 'since', 'moved', 'sort', 'order', 'limit']

export function usageRecordView(r: UsageRow) {
  // count: every attempt of the row; the four outcomes split it (added fields: the shape
  // stays what clients of this API already read).
  return {
    method: r.method,
    user: r.user,
    client: r.client,
    count: r.count,
    first_seen: isoSeconds(r.firstSeen),
    last_seen: isoSeconds(r.lastSeen),
    accepted: r.accepted,
    refused_by_policy: r.refusedByPolicy,
    failed_credentials: r.failedCredentials,
    throttled: r.throttled,
  }
}

export function usageReportView(r: UsageReportRow) {
  return { ...usageRecordView(r), moved: r.moved, oauth_last_seen: r.oauthLastSeen === null ? null : isoSeconds(r.oauthLastSeen), email: r.email }
}


export async function usageApi(app: FastifyInstance, options: UsageApiOptions): Promise<void> {
  app.setErrorHandler((err, request, reply) => sendOperatorError(request, reply, err))

  /** The report query from the query string; 400 naming the parameter for a bad one. */
  function readQuery(query: Record<string, unknown>): UsageQuery {
    const filters = queryFilters(query, allowedParams)
    const method = filters.oneOf('method', usageMethods)
    const user = filters.userId('user')
    const since = filters.instant('since')
    const limit = filters.count('limit', 99_999) ?? 10_000
    const client = filters.text('client', 256)
    const moved = filters.oneOf('moved', ['true', 'false'], 'true or false')
    const sort = filters.oneOf<UsageSortKey>('sort', usageSortKeys)
    const order = filters.oneOf('order', ['asc', 'desc'], 'asc or desc')
    return {
      ...(method !== undefined ? { method } : {}),
      ...(user !== undefined ? { user } : {}),
      ...(client !== undefined ? { client } : {}),
      ...(since !== undefined ? { since } : {}),
      ...(moved !== undefined ? { moved: moved === 'true' } : {}),
      ...(sort !== undefined ? { sort } : {}),
      ...(order !== undefined ? { order } : {}),
      limit,
    }
  }

  const report = async (query: UsageQuery) => {
    // A failed flush is not the reader's problem: the counts stay pending and are retried.
    await options.recorder?.flush().catch(() => undefined)
    return usageReport(options.store, options.emails, query)
  }

  app.get('/admin/usage', async (request, reply) => {
    const rows = await report(readQuery(request.query as Record<string, unknown>))
    return reply.header('cache-control', 'no-store').send({ records: rows.map(usageReportView) })
  })

  app.get('/admin/usage.csv', async (request, reply) => {
    const rows = await report(readQuery(request.query as Record<string, unknown>))
    const lines = [csvColumns.join(',')]
    for (const r of rows.map(usageReportView)) lines.push(csvColumns.map((c) => csvField(r[c])).join(','))
    return reply
      .header('cache-control', 'no-store')
      .header('content-disposition', 'attachment; filename="kigo-usage.csv"')
      .type('text/csv; charset=utf-8')
      .send(lines.join('\r\n') + '\r\n')
  })
}
