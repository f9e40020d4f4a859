// GET /admin/usage (docs/gateway.md#the-usage-report): who still uses which method from which client, with
// counts and first/last seen, across every gateway of the deployment. Filters: method
// (basic, wsse, oauth, or legacy for the first two), user, client (substring), since
// (records last seen at or after it), moved (true or false), all (true: also rows of
// failed or throttled attempts only), limit; sort (last_seen, first_seen, count, user,
// client, method) and order (asc, desc). Each record adds whether its client family moved
// to OAuth (usage-report.ts) and the user's contact e-mail. GET /admin/usage.csv: the
// same report, the same columns, as CSV (RFC 4180).
import type { FastifyInstance } from 'fastify'
import type { UsageRecorder } from '../usage/recorder.js'
import type { UsageStore } from '../usage/store.js'
import { usageCsv, usageReport, usageReportFields, usageSortKeys, type UsageQuery, type UsageReportRow, type UsageSortKey } from './usage-report.js'
import { queryFilters } from '../operator/query-filters.js'

export interface UsageApiOptions {
  store: UsageStore
  /** This gateway's pending counts are written first, so the answer includes them. */
  recorder?: Pick<UsageRecorder, 'flush'>
  /** Users' contact e-mails, by user ID. */
  emails?: () => Promise<Map<string, string | null>>
}

/** The report's `method` filter: one method, or `legacy` for every method but OAuth and OpenID Connect. */
export const usageMethods = ['basic', 'wsse', 'login_api', 'oauth', 'oauth2', 'oidc', 'legacy']
const allowedParams = ['method', 'user', 'client', 'since', 'moved', 'sort', 'order', 'limit', 'all']

/** A record of GET /admin/usage: the report's columns (usage-report.ts), as the CSV has them. */
export function usageReportView(r: UsageReportRow) {
  return usageReportFields(r)
}


export async function usageApi(app: FastifyInstance, options: UsageApiOptions): Promise<void> {
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
    const all = filters.oneOf('all', ['true', 'false'], 'true or false')
    return {
      ...(method !== undefined ? { method } : {}),
      ...(user !== undefined ? { user } : {}),
      ...(client !== undefined ? { client } : {}),
      ...(since !== undefined ? { since } : {}),
      ...(moved !== undefined ? { moved: moved === 'true' } : {}),
      ...(sort !== undefined ? { sort } : {}),
      ...(order !== undefined ? { order } : {}),
      ...(all === 'true' ? { all: true } : {}),
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
    return reply
      .header('cache-control', 'no-store')
      .header('content-disposition', 'attachment; filename="kigo-usage.csv"')
      .type('text/csv; charset=utf-8')
      .send(usageCsv(rows))
  })
}
