// The legacy login API (docs/login-api.md) as one plugin of the gateway's public app:
// `GET /auth` signs a visitor in to a registered site (the account area's login form,
// then a consent page), `GET /api/auth.{json,xml}` exchanges the sign-in's cert for who
// the visitor is. Served by the gateway itself, never forwarded to the core. Counted,
// reported and governed by the migration policy as the legacy method `login_api`.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Config } from '../../common/config.js'
import { errors, isConnectionFailure, type FailureWording } from '../../common/errors.js'
import { contentTypes, xmlDocument } from '../../common/formats.js'
import { field, type AccountArea, type AreaStore, pageHeaders, sendPage, type SignedInSession } from '../account-area/index.js'
import { sendErrorPage } from '../account-area/error-page.js'
import type { AuditStore } from '../audit/store.js'
import type { Outcome } from '../domain/auth.js'
import type { GatewayMetrics } from '../metrics/metrics.js'
import { evaluatePolicy, methodNames, effectiveState, type PolicyVerdict } from '../policy/evaluate.js'
import { utcMinute } from '../../common/time.js'
import type { PolicyService } from '../policy/service.js'
import { maxClientLength } from '../usage/client-name.js'
import type { ProviderRepository, User } from '../store/types.js'
import type { UsageRecorder } from '../usage/recorder.js'
import { signInProblemPage, siteConsentPage, siteDeniedPage } from './pages.js'
import { readLoginQuery, signatureMatches } from './signature.js'
import { livePrevious } from '../domain/secret-rotation.js'
import type { CertProblem, LoginSite, LoginSiteStore } from './store.js'
import { registerSitePages } from './site-pages.js'

export { LoginSiteStore } from './store.js'

export interface LoginApiOptions {
  config: Config
  sites: LoginSiteStore
  store: ProviderRepository & { getUser(id: string): Promise<User | null> } & AreaStore
  policy?: PolicyService
  usage?: Pick<UsageRecorder, 'observe'>
  metrics?: GatewayMetrics
  audit?: Pick<AuditStore, 'record'>
  now?: () => number
  /** How long a cert may be exchanged, seconds (default 600). */
  certTtlSeconds?: number
  /** The host's account area (one session for every account page), mounted in this plugin's scope. */
  account: { mount(app: FastifyInstance): Promise<AccountArea> }
  /** How often expired certs are deleted, ms (default 10 minutes; never on a sign-in). */
  certSweepMs?: number
}

const wording: FailureWording = {
  request: (f) => (f.status === 413 ? errors.tooLarge('body_too_large', 'The request body is too large') : undefined),
  unavailable: () => errors.unavailable('store_unavailable', 'The service cannot answer right now; try again shortly'),
  internalMessage: 'Internal error',
}

const certProblems: Record<CertProblem, string> = {
  unknown: 'Unknown cert: it was never issued, or it was mistyped',
  used: 'This cert was already exchanged; a cert works once. Sign the visitor in again',
  expired: 'This cert has expired; sign the visitor in again',
  foreign: 'This cert was issued to another site',
}

/** The raw query of a request (after `?`), as sent. */
const rawQuery = (url: string) => {
  const q = url.indexOf('?')
  return q === -1 ? '' : url.slice(q + 1)
}

/** What the exchange defines; it takes nothing else. */
const exchangeParams = ['api_key', 'cert', 'api_sig'] as const

type Verified = { site: LoginSite; params: Array<[string, string]> }
type Refusal = { status: 400 | 401; outcome: Outcome; title: string; message: string }

export async function loginApi(app: FastifyInstance, options: LoginApiOptions): Promise<void> {
  const now = options.now ?? Date.now
  const { sites, store, config } = options
  const certTtlSeconds = options.certTtlSeconds ?? config.loginApi.certTtlSeconds
  const area = await options.account.mount(app)

  // Expired certs are deleted now and then, not by each sign-in (a flood of sign-ins
  // would otherwise run a delete each). A database outage is logged by its watch, not here.
  const sweep = setInterval(() => void sites.sweepCerts(now()).catch((err: Error) => isConnectionFailure(err) || app.log.warn({ err: { message: err.message } }, 'login API cert sweep failed')), options.certSweepMs ?? 10 * 60_000)
  sweep.unref()
  app.addHook('onClose', async () => clearInterval(sweep))

  // ---- counting (metrics, usage report) ----------------------------------------------------
  const count = (request: FastifyRequest, route: string, outcome: Outcome, user: string | null, site: LoginSite | null) => {
    options.metrics?.authRequests.series('login_api', outcome, route).inc()
    if (user === null || options.usage === undefined) return
    const client = () => (site?.name ?? '').slice(0, maxClientLength)
    const clientId = site === null ? {} : { clientId: site.apiKey }
    // The deployment the sign-in came through: the site owner's notice links to it.
    options.usage.observe(outcome === 'ok' ? { ok: true, method: 'login_api', outcome, identity: { user }, ...clientId } : { ok: false, method: 'login_api', outcome, user, ...clientId }, client, now(), undefined, app.deploymentOf(request)?.name)
  }

  // ---- the policy ---------------------------------------------------------------------------
  const verdict = (user: string, site: LoginSite): PolicyVerdict | null => {
    const policy = options.policy
    if (!policy) return null
    return evaluatePolicy('login_api', policy.current().login_api, { user, client: () => site.name.slice(0, maxClientLength) }, now(), policy.guideUrl)
  }
  /** Before sign-in: refused for everyone (no user exception could let the visitor through). */
  const refusedBeforeSignIn = (site: LoginSite): PolicyVerdict | null => {
    const policy = options.policy
    if (!policy) return null
    const p = policy.current().login_api
    const t = now()
    if (effectiveState(p, t) === 'allow') return null
    const v = evaluatePolicy('login_api', p, { user: '', client: () => site.name.slice(0, maxClientLength) }, t, policy.guideUrl)
    if (v.allowed) return null
    if (p.exceptions.some((e) => e.user !== undefined && Date.parse(e.until) > t)) return null
    return v
  }
  const deprecationNotice = (site: LoginSite, user: string): string | null => {
    const v = verdict(user, site)
    if (!v || !v.allowed || v.state === 'allow') return null
    const sunset = options.policy!.current().login_api.sunset
    return `${methodNames.login_api}, which ${site.name} uses to sign you in, is being retired${sunset ? ` (planned end ${sunset.slice(0, 10)})` : ''}. The site's developer should move to OAuth or OpenID Connect: ${options.policy!.guideUrl}`
  }

  // ---- verification shared by sign-in and exchange -------------------------------------------
  /** `only`: the parameters the request may carry, when it may carry no others. */
  const verify = async (query: string, required: string[], only?: readonly string[]): Promise<Verified | Refusal> => {
    const read = readLoginQuery(query)
    if (!read.ok) return { status: 400, outcome: 'malformed', title: 'Bad request', message: read.message }
    // A parameter the request does not define could only be there to re-split the
    // separator-less signature (docs/login-api.md#signature).
    const extra = only && read.params.find(([n]) => !only.includes(n))
    if (extra) return { status: 400, outcome: 'malformed', title: 'Unknown parameter', message: `The request takes ${only.join(', ')} only; ${extra[0].slice(0, 40)} is not one of them.` }
    const get = (n: string) => read.params.find(([k]) => k === n)?.[1]
    for (const name of ['api_key', ...required, 'api_sig']) {
      const v = get(name)
      if (v === undefined || v === '') return { status: 400, outcome: 'malformed', title: `Missing ${name}`, message: `The request has no ${name}. The site must send api_key${required.map((r) => `, ${r}`).join('')} and api_sig.` }
    }
    const found = await sites.get(get('api_key')!)
    if (!found) return { status: 401, outcome: 'unknown_client', title: 'Unknown site', message: 'No site is registered with this api_key (it may have been deleted).' }
    // The secret, or the one a rotation replaced until its overlap ends (docs/login-api.md#rotating-the-secret).
    if (!signatureMatches(found.secret, read.params, get('api_sig')!, livePrevious(found.previous, now())?.secret)) {
      return { status: 401, outcome: 'bad_signature', title: 'Bad signature', message: 'The api_sig does not match: it must be the MD5 of the secret followed by every other parameter as name and value, sorted by name.' }
    }
    return { site: found.site, params: read.params }
  }

  const siteUrl = (site: LoginSite) => `${new URL(site.callbackUrl).origin}/`
  const callbackOrigin = (site: LoginSite) => [new URL(site.callbackUrl).origin]

  // The exchange answers in its own format, the sign-in pages as pages.
  app.answerErrorsAs({
    wording,
    logMessage: 'login API request failed',
    render: (request, reply, answer) => request.url.startsWith('/api/')
      ? sendExchange(reply, request.url.includes('.xml') ? 'xml' : 'json', answer.status, { message: answer.message }, answer.headers as Record<string, string>)
      : sendErrorPage(reply, answer, signInProblemPage),
  })

  // ---- sign-in ------------------------------------------------------------------------------------
  // Read by a visitor of the site, who can do nothing about the site's code: the page names
  // the site and sends them back to it. The migration guide is for the site's owner, who
  // has the exchange's answer and the notices (docs/login-api.md#migration-controls).
  const refusedPage = (reply: FastifyReply, v: PolicyVerdict & { allowed: false }, site: LoginSite) => {
    for (const [k, val] of Object.entries(v.headers)) void reply.header(k, val)
    const back = { href: siteUrl(site), text: `Back to ${site.name}` }
    if (v.code === 'method_retired_temporarily') {
      const until = v.headers['retry-after'] === undefined ? '' : ` until ${utcMinute(now() + Number(v.headers['retry-after']) * 1000).slice(11)}`
      return sendPage(reply, v.status, signInProblemPage(`${site.name} cannot sign you in with kigo right now`, `The way ${site.name} signs people in with kigo is being retired, and is switched off for a while${until}. Try again later, or ask ${site.name} about another way to sign in.`, back))
    }
    return sendPage(reply, v.status, signInProblemPage(`${site.name} can no longer sign you in with kigo`, `The way ${site.name} signed people in with kigo has been retired. Ask ${site.name} how to sign in now.`, back))
  }

  app.get('/auth', async (request, reply) => {
    request.routeName = 'auth'
    const query = rawQuery(request.url)
    const checked = await verify(query, [])
    if (!('site' in checked)) {
      count(request, 'auth', checked.outcome, null, null)
      return sendPage(reply, 400, signInProblemPage(checked.title, `${checked.message} Nothing was sent back to the site.`))
    }
    const { site } = checked
    const early = refusedBeforeSignIn(site)
    if (early && !early.allowed) {
      count(request, 'auth', 'policy_denied', null, site)
      return refusedPage(reply, early, site)
    }
    const session = await area.requireSignIn(request, reply, { next: request.url, context: `Sign in to tell ${site.name} who you are.` })
    if (!session) return reply
    const v = verdict(session.user.id, site)
    if (v && !v.allowed) {
      count(request, 'auth', 'policy_denied', session.user.id, site)
      return refusedPage(reply, v, site)
    }
    return sendPage(
      reply,
      200,
      siteConsentPage({ user: session.user, session, csrf: area.csrfField(session), siteName: site.name, siteHost: new URL(site.callbackUrl).host, query, notice: deprecationNotice(site, session.user.id), registrant: { owner: site.ownerId, homeUrl: site.homeUrl } }),
      callbackOrigin(site),
    )
  })

  app.post('/auth', async (request, reply) => {
    request.routeName = 'auth'
    const posted = await area.signedInPost(request, reply)
    if (!posted) return reply
    const { session, form } = posted
    const decision = field(form, 'decision')
    if (decision !== 'allow' && decision !== 'deny') return sendPage(reply, 400, signInProblemPage('No decision', 'Choose Allow or Deny.'))
    const checked = await verify(field(form, 'request') ?? '', [])
    if (!('site' in checked)) {
      count(request, 'auth', checked.outcome, null, null)
      return sendPage(reply, 400, signInProblemPage(checked.title, `${checked.message} Nothing was sent back to the site.`))
    }
    const { site, params } = checked
    if (decision === 'deny') return sendPage(reply, 200, siteDeniedPage({ user: session.user, session, siteName: site.name, siteUrl: siteUrl(site) }))
    return allow(request, reply, session, site, params)
  })

  const allow = async (request: FastifyRequest, reply: FastifyReply, session: SignedInSession, site: LoginSite, params: Array<[string, string]>) => {
    const v = verdict(session.user.id, site)
    if (v && !v.allowed) {
      count(request, 'auth', 'policy_denied', session.user.id, site)
      return refusedPage(reply, v, site)
    }
    const cert = await sites.issueCert(site.apiKey, session.user.id, now(), certTtlSeconds)
    count(request, 'auth', 'ok', session.user.id, site)
    const target = new URL(site.callbackUrl)
    target.searchParams.append('cert', cert)
    for (const [n, value] of params) if (n !== 'api_key' && n !== 'api_sig' && n !== 'cert') target.searchParams.append(n, value)
    // 302, as the login API always answered; the form-action CSP lets the browser follow it.
    return pageHeaders(reply, callbackOrigin(site)).code(302).header('location', target.href).send()
  }

  // ---- the exchange -------------------------------------------------------------------------------
  const sendExchange = (reply: FastifyReply, format: 'json' | 'xml', status: number, body: { message: string } | { user: { name: string; image_url: string; thumbnail_url: string } }, headers: Record<string, string> = {}) => {
    void reply.code(status).headers(headers).header('cache-control', 'no-store')
    if ('message' in body) {
      if (format === 'xml') return reply.type(contentTypes.xml).send(xmlDocument('response', { has_error: 1, error: { message: body.message } }))
      return reply.type(contentTypes.json).send(JSON.stringify({ has_error: true, error: { message: body.message } }))
    }
    if (format === 'xml') return reply.type(contentTypes.xml).send(xmlDocument('response', { has_error: 0, user: body.user }))
    return reply.type(contentTypes.json).send(JSON.stringify({ has_error: false, user: body.user }))
  }

  const exchange = (format: 'json' | 'xml') => async (request: FastifyRequest, reply: FastifyReply) => {
    request.routeName = 'api/auth'
    const checked = await verify(rawQuery(request.url), ['cert'], exchangeParams)
    if (!('site' in checked)) {
      count(request, 'api/auth', checked.outcome, null, null)
      return sendExchange(reply, format, checked.status, { message: `${checked.title}: ${checked.message}` })
    }
    const { site, params } = checked
    const redeemed = await sites.redeemCert(site.apiKey, params.find(([n]) => n === 'cert')![1], now())
    if ('problem' in redeemed) {
      count(request, 'api/auth', 'bad_credentials', null, site)
      return sendExchange(reply, format, 400, { message: certProblems[redeemed.problem] })
    }
    const v = verdict(redeemed.userId, site)
    if (v && !v.allowed) {
      count(request, 'api/auth', 'policy_denied', redeemed.userId, site)
      return sendExchange(reply, format, 403, { message: v.message }, v.headers)
    }
    const user = await store.getUser(redeemed.userId)
    if (!user) {
      count(request, 'api/auth', 'bad_credentials', null, site)
      return sendExchange(reply, format, 400, { message: certProblems.unknown })
    }
    count(request, 'api/auth', 'ok', user.id, site)
    const base = `${request.deployment!.baseUrl}/users/${encodeURIComponent(user.id)}`
    return sendExchange(reply, format, 200, { user: { name: user.id, image_url: `${base}/profile.png`, thumbnail_url: `${base}/profile_s.png` } }, v?.headers ?? {})
  }
  app.get('/api/auth.json', exchange('json'))
  app.get('/api/auth.xml', exchange('xml'))

  const policy = options.policy
  registerSitePages(app, { area, sites, now, ...(options.audit ? { audit: options.audit } : {}), ...(policy ? { policy: () => policy.current().login_api } : {}) })
}
