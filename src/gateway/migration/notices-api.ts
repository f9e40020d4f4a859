// The notices' operator API (docs/gateway.md#migration-notices), behind the admin token:
// POST /admin/policy/plan (the impact of a change before it is made), POST
// /admin/notices/run (one pass now), GET /admin/notices (what was told, and what became
// of each message), GET /admin/notices/preview?user=&at= (what a pass would send a user now,
// or at `at`), GET /admin/notices/funnel (did telling people work: the dashboard's numbers).
import type { FastifyInstance } from 'fastify'
import { ApiError } from '../../common/errors.js'
import { Compile, Type, type Static } from '../../common/typebox.js'
import { describeSchemaError, strictValidatorCompiler } from '../registrations/route-schemas.js'
import { count, instant, oneOf, queryCount, queryInstant, userId } from '../operator/query-filters.js'
import { InvalidPolicy, parseInstant } from '../policy/normalize.js'
import { isoSeconds } from '../../common/time.js'
import { Instant, PolicyStateSchema, legacyMethods } from '../policy/types.js'
import type { FunnelApplication, MigrationNotices } from '../host/notices.js'

const PlanRequest = Type.Object({
  method: Type.Enum([...legacyMethods]),
  state: PolicyStateSchema,
  /** When the change would take effect; default now. */
  from: Type.Optional(Instant),
}, { additionalProperties: false })
const checkPlan = Compile(PlanRequest)

const statuses = ['sent', 'failed', 'pending', 'unreachable'] as const

/** oauth1's funnel per application (notices/funnel.ts FunnelApplication). */
const funnelApplication = (a: FunnelApplication) => ({ consumer_key: a.application, name: a.name, owner: a.owner, moved: a.moved, tokens_exchanged: a.exchanged, users_authorized_again: a.authorizedAgain, users_on_oauth1: a.onOauth1 })

const NoticesQuery = Type.Object({
  user: Type.Optional(userId),
  method: Type.Optional(oneOf(legacyMethods)),
  status: Type.Optional(oneOf(statuses)),
  limit: Type.Optional(count(10_000)),
}, { additionalProperties: false })
const PreviewQuery = Type.Object({ user: userId, at: Type.Optional(instant) }, { additionalProperties: false })

export async function noticesApi(app: FastifyInstance, options: { notices: MigrationNotices }): Promise<void> {
  const { notices } = options
  app.setValidatorCompiler(strictValidatorCompiler)

  app.post('/admin/policy/plan', async (request, reply) => {
    const body = request.body
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw new ApiError(400, 'invalid_parameter', 'Invalid request body: must be a JSON object such as {"method":"basic","state":"deny"}')
    }
    if (!checkPlan.Check(body)) throw new ApiError(400, 'invalid_parameter', describeSchemaError(checkPlan.Errors(body), 'body', PlanRequest))
    let from: number | undefined
    try {
      from = body.from === undefined ? undefined : parseInstant(body.from, 'from')
    } catch (err) {
      if (err instanceof InvalidPolicy) throw new ApiError(400, 'invalid_parameter', `Invalid request body: ${err.message}`)
      throw err
    }
    const plan = await notices.plan(body.method, body.state, from)
    return reply.header('cache-control', 'no-store').send(plan)
  })

  app.post('/admin/notices/run', async (_request, reply) => {
    const result = await notices.runOnce()
    return reply.header('cache-control', 'no-store').send({ sent: result.sent, failed: result.failed, pending: result.pending })
  })

  app.get('/admin/notices', { schema: { querystring: NoticesQuery } }, async (request, reply) => {
    const { user, method, status, limit } = request.query as Static<typeof NoticesQuery>
    const rows = await notices.list({ ...(user !== undefined ? { user } : {}), ...(method !== undefined ? { method } : {}), ...(status !== undefined ? { status } : {}), limit: queryCount(limit) ?? 1000 })
    return reply.header('cache-control', 'no-store').send({
      notices: rows.map((n) => ({
        user: n.user,
        email: n.email,
        method: n.method,
        step: n.step,
        status: n.status,
        created_at: isoSeconds(n.createdAt),
        sent_at: n.sentAt === null ? null : isoSeconds(n.sentAt),
        attempts: n.attempts,
        last_error: n.lastError,
      })),
    })
  })

  app.get('/admin/notices/funnel', async (_request, reply) => {
    const lines = await notices.funnel()
    return reply.header('cache-control', 'no-store').send({
      methods: lines.map((l) => ({
        method: l.method,
        told: l.told,
        moved_within_7_days: l.moved7,
        moved_within_30_days: l.moved30,
        moved: l.moved,
        not_moved: l.notMoved,
        refused: l.refused,
        too_early_to_tell: l.tooEarly,
        too_early_to_tell_30_days: l.tooEarly30,
        not_moved_users: l.notMovedList.map((n) => ({ user: n.user, told_at: isoSeconds(n.toldAt), refused_since: n.refusedSince === null ? null : isoSeconds(n.refusedSince) })),
        ...(l.applications ? { applications: l.applications.map(funnelApplication) } : {}),
      })),
    })
  })

  app.get('/admin/notices/preview', { schema: { querystring: PreviewQuery } }, async (request, reply) => {
    const { user, at: atText } = request.query as Static<typeof PreviewQuery>
    const at = queryInstant(atText, 'at')
    const preview = await notices.preview(user, at)
    if (preview === null) throw new ApiError(404, 'not_found', `No user ${user}`)
    return reply.header('cache-control', 'no-store').send(preview)
  })
}
