// GET /admin/usage (SPEC §6.3): who still uses which method from which client, with
// counts and first/last seen, across every gateway of the deployment. Filters: method,
// user, since (records last seen at or after it), limit.
import type { FastifyInstance } from 'fastify'
import { ApiError } from '../../common/errors.js'
import { InvalidPolicy, parseInstant } from '../policy/normalize.js'
import { isoSeconds } from '../policy/time.js'
import { instantPattern as instantSource } from '../policy/types.js'
import type { UsageRecorder } from '../usage/recorder.js'
import type { UsageRow, UsageStore } from '../usage/store.js'
import { sendOperatorError } from './policy-api.js'

export interface UsageApiOptions {
  store: UsageStore
  /** This gateway's pending counts are written first, so the answer includes them. */
  recorder?: Pick<UsageRecorder, 'flush'>
}

const usageMethods = ['basic', 'wsse', 'oauth']
const userPattern = /^[A-Za-z][A-Za-z0-9_-]{2,31}$/
const instantPattern = new RegExp(instantSource)
const allowedParams = new Set(['method', 'user', 'since', 'limit'])

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

const bad = (message: string) => new ApiError(400, 'invalid_parameter', `Invalid query: ${message}`)

export async function usageApi(app: FastifyInstance, options: UsageApiOptions): Promise<void> {
  app.setErrorHandler((err, request, reply) => sendOperatorError(request, reply, err))

  app.get('/admin/usage', async (request, reply) => {
    const query = request.query as Record<string, unknown>
    for (const key of Object.keys(query)) if (!allowedParams.has(key)) throw bad(`unknown parameter "${key}" (use method, user, since, limit)`)
    const one = (name: string): string | undefined => {
      const v = query[name]
      if (v === undefined) return undefined
      if (typeof v !== 'string') throw bad(`"${name}" may be given once`)
      return v
    }
    const method = one('method')
    if (method !== undefined && !usageMethods.includes(method)) throw bad(`"method" must be one of ${usageMethods.join(', ')}`)
    const user = one('user')
    if (user !== undefined && !userPattern.test(user)) throw bad('"user" must be a user ID')
    const sinceText = one('since')
    let since: number | undefined
    if (sinceText !== undefined) {
      if (!instantPattern.test(sinceText)) throw bad('"since" must be an ISO 8601 date-time with Z or an offset, e.g. 2027-01-31T00:00:00Z')
      try {
        since = parseInstant(sinceText, 'since')
      } catch (err) {
        if (err instanceof InvalidPolicy) throw bad(err.message)
        throw err
      }
    }
    const limitText = one('limit')
    if (limitText !== undefined && !/^[1-9][0-9]{0,4}$/.test(limitText)) throw bad('"limit" must be a whole number from 1 to 99999')

    // A failed flush is not the reader's problem: the counts stay pending and are retried.
    await options.recorder?.flush().catch(() => undefined)
    const rows = await options.store.list({
      ...(method !== undefined ? { method } : {}),
      ...(user !== undefined ? { user } : {}),
      ...(since !== undefined ? { since } : {}),
      limit: limitText === undefined ? 10_000 : Number(limitText),
    })
    return reply.header('cache-control', 'no-store').send({ records: rows.map(usageRecordView) })
  })
}
