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
import { usageCsv, usageReport, usageReportFields, usageSortKeys, type UsageQuery, type UsageReportRow } from './usage-report.js'
import { Type, type Static } from '../../common/typebox.js'
import { strictValidatorCompiler } from '../registrations/route-schemas.js'
import { count, flag, instant, oneOf, queryCount, queryInstant, text, userId } from '../operator/query-filters.js'

export interface UsageApiOptions {
  store: UsageStore
  /** This gateway's pending counts are written first, so the answer includes them. */
  recorder?: Pick<UsageRecorder, 'flush'>
  /** Users' contact e-mails, by user ID. */
  emails?: () => Promise<Map<string, string | null>>
}

/** The report's `method` filter: one method, or `legacy` for every method but OAuth and OpenID Connect. */
export const usageMethods = ['basic', 'wsse', 'login_api', 'oauth', 'oauth2', 'oidc', 'legacy']
const UsageQuerystring = Type.Object({
  method: Type.Optional(oneOf(usageMethods)),
  user: Type.Optional(userId),
  client: Type.Optional(text(256)),
  since: Type.Optional(instant),
  moved: Type.Optional(flag),
  sort: Type.Optional(oneOf(usageSortKeys)),
  order: Type.Optional(oneOf(['asc', 'desc'] as const, 'asc or desc')),
  limit: Type.Optional(count(99_999)),
  all: Type.Optional(flag),
}, { additionalProperties: false })

/** A record of GET /admin/usage: the report's columns (usage-report.ts), as the CSV has them. */
export function usageReportView(r: UsageReportRow) {
  return usageReportFields(r)
}


export async function usageApi(app: FastifyInstance, options: UsageApiOptions): Promise<void> {
  app.setValidatorCompiler(strictValidatorCompiler)
  /** The report query from the checked query string. */
  function readQuery(q: Static<typeof UsageQuerystring>): UsageQuery {
    const since = queryInstant(q.since, 'since')
    return {
      ...(q.method !== undefined ? { method: q.method } : {}),
      ...(q.user !== undefined ? { user: q.user } : {}),
      ...(q.client !== undefined ? { client: q.client } : {}),
      ...(since !== undefined ? { since } : {}),
      ...(q.moved !== undefined ? { moved: q.moved === 'true' } : {}),
      ...(q.sort !== undefined ? { sort: q.sort } : {}),
      ...(q.order !== undefined ? { order: q.order } : {}),
      ...(q.all === 'true' ? { all: true } : {}),
      limit: queryCount(q.limit) ?? 10_000,
    }
  }

  const report = async (query: UsageQuery) => {
    // A failed flush is not the reader's problem: the counts stay pending and are retried.
    await options.recorder?.flush().catch(() => undefined)
    return usageReport(options.store, options.emails, query)
  }

  app.get('/admin/usage', { schema: { querystring: UsageQuerystring } }, async (request, reply) => {
    const rows = await report(readQuery(request.query as Static<typeof UsageQuerystring>))
    return reply.header('cache-control', 'no-store').send({ records: rows.map(usageReportView) })
  })

  app.get('/admin/usage.csv', { schema: { querystring: UsageQuerystring } }, async (request, reply) => {
    const rows = await report(readQuery(request.query as Static<typeof UsageQuerystring>))
    return reply
      .header('cache-control', 'no-store')
      .header('content-disposition', 'attachment; filename="kigo-usage.csv"')
      .type('text/csv; charset=utf-8')
      .send(usageCsv(rows))
  })
}
