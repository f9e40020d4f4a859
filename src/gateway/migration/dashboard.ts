// GET /admin/ (docs/gateway.md#the-operator-api-and-dashboard): the operator dashboard. It accepts the admin bearer token like
// the JSON API, or the session cookie its sign-in form sets (browsers cannot send a bearer
// header by themselves), whose record is in the gateway's store
// (docs/security.md#operator-sessions). It is registered beside, not under, the bearer-only hook
// of admin-auth.ts, so that the sign-in form itself can be reached. Its policy forms
// (policy-form.ts) post a change to a preview, then to Apply
// (docs/operations.md#changing-the-policy-on-the-dashboard).
import fastifyCookie from '@fastify/cookie'
import escapeHtml from 'escape-html'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { errors } from '../../common/errors.js'
import { safeEqual } from '../../common/secrets.js'
import type { PolicyService } from '../policy/service.js'
import { isLegacyMethod, legacyMethods } from '../policy/types.js'
import type { UsageRecorder } from '../usage/recorder.js'
import type { UsageStore } from '../usage/store.js'
import { hasAdminBearer } from '../operator/admin-auth.js'
import { bucketize, chartRanges, defaultRange, rangeWindow } from './dashboard-chart.js'
import { dashboardCsvPath, dashboardPage, loginPage } from './dashboard-page.js'
import { securePage, type PagePolicy } from '../../common/security-headers.js'
import { sessionCookie, sessionCookieOptions, sessionSeconds } from '../operator/dashboard-session.js'
import type { OperatorSessionStore } from '../operator/session-store.js'
import { applyPolicyChange, methodPolicyView } from './policy-api.js'
import { methodUpdate, previewPolicyChange } from './policy-change.js'
import { formChange, policyForm, policyFormPage, policyPreviewPage, postedPolicyForm, storedPolicyForm, type PolicyFormValues } from './policy-form.js'
import { InvalidPolicy } from '../policy/normalize.js'
import { StalePolicy } from '../policy/service.js'
import { policyDigest } from '../policy/store.js'
import type { DashboardPanel, MigrationNotices } from '../host/feature.js'
import type { AuditStore } from '../audit/store.js'
import { usageCsv, usageReport, usageSortKeys, type UsageQuery, type UsageSortKey } from './usage-report.js'

export interface DashboardOptions {
  adminToken: string
  /** Where sign-ins are kept (shared by the gateways), and this admin token's binding (session-store.ts). */
  sessions: { store: Pick<OperatorSessionStore, 'create' | 'valid' | 'end'>; binding: string }
  policy: PolicyService
  usage: UsageStore
  recorder?: Pick<UsageRecorder, 'flush'>
  now?: () => number
  /** Users' contact e-mails, by user ID (the usage table as an outreach list). */
  emails?: () => Promise<Map<string, string | null>>
  /** The audit trail shown under the policy, and where the dashboard's policy changes are recorded. */
  audit?: Pick<AuditStore, 'list' | 'record'>
  /** The impact plan and notice steps of a policy change's preview (none: notices are off). */
  notices?: Pick<MigrationNotices, 'plan' | 'planText' | 'dueSteps'>
  /** Panels the features add below the policy (the migration notices), read at each view. */
  sections?: () => readonly DashboardPanel[]
}

/** Rows of the audit table on the page (`kigo audit` and GET /admin/audit have them all). */
const auditRows = 20

/** The usage table's filters and sort from the page's own GET form; anything unknown is ignored. */
function usageQueryOf(q: Record<string, unknown>): UsageQuery & { sort: UsageSortKey } {
  const text = (name: string) => (typeof q[name] === 'string' ? q[name].trim() : '')
  const method = text('method')
  const user = text('user')
  const client = text('client')
  const moved = text('moved')
  const sort = text('sort')
  const order = text('order')
  return {
    // Every legacy method ("legacy": all but OAuth and OpenID Connect) unless one is chosen.
    method: ['basic', 'wsse', 'login_api', 'oauth', 'oauth2', 'oidc'].includes(method) ? method : 'legacy',
    ...(/^[A-Za-z][A-Za-z0-9_-]{2,31}$/.test(user) ? { user } : {}),
    ...(client !== '' && client.length <= 256 ? { client } : {}),
    ...(moved === 'yes' || moved === 'no' ? { moved: moved === 'yes' } : {}),
    sort: (usageSortKeys as readonly string[]).includes(sort) ? (sort as UsageSortKey) : 'last_seen',
    ...(order === 'asc' || order === 'desc' ? { order } : {}),
  }
}

/** Rows of the legacy-usage table on the page (the API serves the whole report). */
const tableRows = 200

// No script at all, styles inline only, forms post back here only (defence in depth for a
// page that shows user IDs and client names chosen by API clients). Referrer same-origin,
// not no-referrer: with no-referrer a browser sends `Origin: null` on the sign-in post.
const pagePolicy: PagePolicy = { images: "'self' data:", referrer: 'same-origin' }

function html(reply: FastifyReply, status: number, body: string): FastifyReply {
  return securePage(reply, pagePolicy).code(status).type('text/html; charset=utf-8').send(body)
}

/** A cross-site form post carries a foreign Origin; SameSite=Strict already keeps the cookie away. */
function sameOrigin(request: FastifyRequest): boolean {
  const origin = request.headers.origin
  if (origin === undefined || origin === 'null') return origin === undefined
  try {
    return new URL(origin).host === request.headers.host
  } catch {
    return false
  }
}

export async function dashboard(app: FastifyInstance, options: DashboardOptions): Promise<void> {
  const now = options.now ?? Date.now
  const { adminToken } = options
  // Cookies are read here and in the provider only, so the forwarded API never parses them.
  await app.register(fastifyCookie)

  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 8 * 1024 }, (_req, body, done) => {
    // A field given twice is refused (400), as on the account pages: never one copy picked.
    const params = new URLSearchParams(body as string)
    const names = [...params.keys()]
    if (new Set(names).size !== names.length) return void done(errors.badRequest('bad_request', 'A field of the form is given more than once'), undefined)
    done(null, Object.fromEntries(params))
  })

  // A request that cannot be read gets the sign-in form again; the gateway store away is
  // a 503 page (docs/operations.md#dependability), anything else a 500 page.
  app.answerErrorsAs({
    wording: {
      unavailable: () => errors.unavailable('store_unavailable', 'The dashboard cannot read the gateway store right now; try again shortly.'),
      internalMessage: 'The dashboard failed; the gateway log has the detail.',
    },
    logMessage: 'dashboard failed',
    render: (_request, reply, answer) => html(reply.headers(answer.headers), answer.status,
      answer.status < 500 ? loginPage('The request could not be read.') : `<!doctype html><title>kigo dashboard</title><p>${escapeHtml(answer.message)}</p>`),
  })

  const { sessions } = options
  const session = (request: FastifyRequest) => sessions.store.valid(request.cookies[sessionCookie], sessions.binding, now())
  /** How the operator is signed in: the bearer token, or the sign-in form's session cookie (which can sign out); null for neither. */
  const signedIn = async (request: FastifyRequest): Promise<'bearer' | 'cookie' | null> =>
    hasAdminBearer(request, adminToken) ? 'bearer' : (await session(request)) ? 'cookie' : null

  app.get('/admin', async (_request, reply) => reply.redirect('/admin/', 308))

  app.get('/admin/', async (request, reply) => {
    const by = await signedIn(request)
    if (by === null) return html(reply, 401, loginPage())

    const q = request.query as Record<string, unknown>
    const range = chartRanges.find((r) => r.name === q.range) ?? defaultRange
    const t = now()
    // This gateway's pending counts first, so the page includes the latest requests.
    await options.recorder?.flush().catch(() => undefined)
    const { from, to } = rangeWindow(range, t)
    const usageQuery = usageQueryOf(q)
    const [minutes, report, audit] = await Promise.all([
      options.usage.minutes(from, to),
      usageReport(options.usage, options.emails, usageQuery),
      options.audit ? options.audit.list({ limit: auditRows }) : Promise.resolve(undefined),
    ])
    const sections = await Promise.all((options.sections?.() ?? []).map((section) => section()))
    const policies = options.policy.current()
    return html(reply, 200, dashboardPage({
      now: t,
      range,
      buckets: bucketize(minutes, range, t),
      policies: Object.fromEntries(legacyMethods.map((m) => [m, methodPolicyView(policies[m], t)])) as Parameters<typeof dashboardPage>[0]['policies'],
      policyForms: Object.fromEntries(legacyMethods.map((m) => [m, policyForm(storedPolicyForm(m, policies[m]))])) as Parameters<typeof dashboardPage>[0]['policyForms'],
      ...(typeof q.applied === 'string' && isLegacyMethod(q.applied) ? { applied: q.applied } : {}),
      guideUrl: options.policy.guideUrl,
      // Who must migrate: the report's legacy rows, as the CSV link below the table has them.
      legacy: report.slice(0, tableRows),
      legacyTotal: report.length,
      usageQuery,
      ...(audit ? { audit } : {}),
      sections,
      signedInWithCookie: by === 'cookie',
      maxClientsPerUser: options.usage.maxClientsPerUser,
    }))
  })

  // The usage table's CSV link: the same rows with the dashboard's sign-in (a browser
  // following a link sends the session cookie, never the bearer header GET
  // /admin/usage.csv of the JSON API wants).
  app.get(dashboardCsvPath, async (request, reply) => {
    if ((await signedIn(request)) === null) return html(reply, 401, loginPage())
    await options.recorder?.flush().catch(() => undefined)
    const rows = await usageReport(options.usage, options.emails, usageQueryOf(request.query as Record<string, unknown>))
    return reply
      .header('cache-control', 'no-store')
      .header('content-disposition', 'attachment; filename="kigo-usage.csv"')
      .type('text/csv; charset=utf-8')
      .send(usageCsv(rows))
  })

  // A change of the policy (docs/operations.md#changing-the-policy-on-the-dashboard): the
  // form posts to the preview, which changes nothing; its Apply posts the same values and
  // the digest of the policy previewed. Both need the session (or the bearer token) and a
  // post from this origin; bad values bring the form back with the error, nothing changed.
  const changes = { policy: options.policy, notices: options.notices, now }

  /** The posted change, or the answer sent instead (nothing was changed). */
  async function postedChange(request: FastifyRequest, reply: FastifyReply): Promise<{ values: PolicyFormValues; cookie: boolean } | FastifyReply> {
    if (!sameOrigin(request)) return html(reply, 403, policyFormPage(null, 'This change came from another site; nothing was changed.'))
    const by = await signedIn(request)
    if (by === null) return html(reply, 401, loginPage())
    const cookie = by === 'cookie'
    const values = postedPolicyForm(request.body)
    if (values === null) return html(reply, 400, policyFormPage(null, 'Choose the method to change: basic, wsse or login_api.', cookie))
    return { values, cookie }
  }

  /** The preview page of the posted change (against the policy as stored now), or the form again with what to correct. */
  async function previewPage(reply: FastifyReply, values: PolicyFormValues, cookie: boolean, status = 200, stale = false): Promise<FastifyReply> {
    try {
      const preview = await previewPolicyChange(changes, values.method, formChange(values))
      return html(reply, status, policyPreviewPage(values, preview, { stale, signOut: cookie }))
    } catch (err) {
      if (err instanceof InvalidPolicy) return html(reply, 400, policyFormPage(values, err.message, cookie))
      throw err
    }
  }

  app.post('/admin/policy/preview', async (request, reply) => {
    const posted = await postedChange(request, reply)
    if (!('values' in posted)) return posted
    return previewPage(reply, posted.values, posted.cookie)
  })

  // Apply: the change is made against the policy read in the write's transaction, if that is
  // still the one the preview began from (`base`); no preview is computed again.
  app.post('/admin/policy/apply', async (request, reply) => {
    const posted = await postedChange(request, reply)
    if (!('values' in posted)) return posted
    const { values, cookie } = posted
    const base = (request.body as Record<string, unknown>).base
    let changed: boolean
    try {
      const change = formChange(values)
      const write = await applyPolicyChange({ policy: options.policy, ...(options.audit ? { audit: options.audit } : {}) }, request, (before) => {
        if (base !== policyDigest(before[values.method])) throw new StalePolicy('the policy changed after the preview')
        return methodUpdate(values.method, before[values.method], change)
      })
      changed = write.changed[values.method] !== undefined
    } catch (err) {
      if (err instanceof InvalidPolicy) return html(reply, 400, policyFormPage(values, err.message, cookie))
      // Changed since the preview confirmed: show the change against the policy as it is now.
      if (err instanceof StalePolicy) return previewPage(reply, values, cookie, 409, true)
      throw err
    }
    // Nothing to change (the preview said so): the preview again, not "changed".
    if (!changed) return previewPage(reply, values, cookie)
    return reply.header('cache-control', 'no-store').redirect(`/admin/?applied=${values.method}#policy`, 303)
  })

  app.post('/admin/login', async (request, reply) => {
    if (!sameOrigin(request)) return html(reply, 403, loginPage('This sign-in came from another site.'))
    const body = request.body as Record<string, string> | undefined
    const token = typeof body?.token === 'string' ? body.token.trim() : ''
    if (token === '' || adminToken === '' || !safeEqual(token, adminToken)) {
      request.log.warn('dashboard sign-in with a wrong admin token')
      return html(reply, 401, loginPage('That admin token is not valid.'))
    }
    const value = await sessions.store.create(sessions.binding, now(), sessionSeconds)
    return reply.code(303).header('cache-control', 'no-store').setCookie(sessionCookie, value, { ...sessionCookieOptions, maxAge: sessionSeconds }).redirect('/admin/', 303)
  })

  app.post('/admin/logout', async (request, reply) => {
    if (!sameOrigin(request)) return html(reply, 403, loginPage('This request came from another site.'))
    // The record goes, not only the cookie: a copy of the cookie is worth nothing after this.
    await sessions.store.end(request.cookies[sessionCookie])
    return reply.header('cache-control', 'no-store').clearCookie(sessionCookie, sessionCookieOptions).redirect('/admin/', 303)
  })
}
