// `kigo usage` and `kigo policy show|set` (docs/operations.md#operator-command-line): the legacy-usage report of
// docs/gateway.md#the-usage-report and the migration policy of docs/gateway.md#the-migration-policy, over GET /admin/usage and GET/PUT
// /admin/policy. `policy set` reads the method's policy, changes what the options say and
// writes it back naming the version it read (If-Match), so a change made meanwhile (another
// operator, the dashboard) is refused rather than overwritten; the gateway keeps `since`
// when the state does not change, and says which scheduled entries the change replaced.
import { CliError, usageError, type AdminClient, type ApiResult } from './admin-client.js'
import type { Command, Parsed, Terminal } from './command.js'
import { confirmPlan } from './notice-commands.js'
import { formatTable, type Field } from './output.js'
import { eventSummary, fieldChanges } from '../common/audit-diff.js'
import { changedPolicy, parseWindows, sunsetMoved, windowsText, type MethodChange } from '../gateway/policy/change.js'
import { InvalidPolicy } from '../gateway/policy/normalize.js'
import type { LegacyMethod, MethodPolicy, PolicyState } from '../gateway/policy/types.js'

const legacyMethods = ['basic', 'wsse', 'login_api', 'oauth1']
const states = ['allow', 'deprecate', 'brownout', 'deny']
const usageMethods = ['basic', 'wsse', 'login_api', 'oauth', 'oauth2', 'oidc', 'legacy']

/** A method's policy as GET /admin/policy answers it: the stored fields, then what is in effect. */
interface MethodView extends MethodPolicy {
  effective: {
    state: string
    summary: string
    ended_at: string | null
    ends_at: string | null
    refusing: boolean
    deprecated_since: string | null
    brownout_until: string | null
    next_window: { start: string; end: string } | null
    next_change: { state: string; at: string } | null
  }
}
type PolicyView = { guide_url: string; version: string; basic: MethodView; wsse: MethodView; login_api: MethodView; oauth1: MethodView }
/** PUT /admin/policy's answer: the policy, and the scheduled entries the change replaced. */
type PolicyWriteView = PolicyView & { replaced: Array<{ method: string; state: string; from: string }> }
interface AuditEventView { id: number; at: string; by: string; address: string; kind: string; action: string; target: string; before: unknown; after: unknown }

/** An exception as the operator reads it: a client name is self-declared, and alone it matches nobody. */
export function exceptionText(x: { user?: string; client?: string; application?: string }): string {
  if (x.application !== undefined) return x.user === undefined ? `application ${x.application} (every user's token)` : `user ${x.user} of application ${x.application}`
  if (x.user === undefined) return `client ${JSON.stringify(x.client)} alone (matches nobody: add the user)`
  return x.client === undefined ? `user ${x.user}` : `user ${x.user} with client ${JSON.stringify(x.client)} (self-declared)`
}

function policyEventText(e: AuditEventView): string {
  const before = e.before as Partial<MethodView> | null
  const after = e.after as Partial<MethodView> | null
  const changes = fieldChanges(before, after).map((c) => `  ${c.field}: ${c.before} -> ${c.after}`)
  return `${e.at}  ${e.target}: ${before?.state ?? '-'} -> ${after?.state ?? '-'}  (from ${e.address})\n${changes.length === 0 ? '  unchanged' : changes.join('\n')}`
}

/**
 * One method's policy, leading with what is in effect now, then what is scheduled.
 * Settings are shown only where they act: brownout windows while in brownout (or beside
 * a scheduled brownout), the end (a scheduled deny, else the announced sunset; once
 * denied, when it ended),
 * exceptions while it refuses requests (brownout, deny) and only those not yet expired.
 */
export function methodText(name: string, p: MethodView, now = Date.now()): string {
  const e = p.effective
  const refusingNote = e.state === 'deny' ? ' (refusing every request)' : e.refusing ? ` (refusing now, window open until ${e.brownout_until})` : ''
  const lines = [`${name}: ${e.state} now${refusingNote}`, `  clients are told: ${e.summary}`]
  const since = e.state === p.state ? p.since : p.schedule.filter((s) => s.state === e.state && Date.parse(s.from) <= now).at(-1)?.from
  if (since && Date.parse(since) > 0) lines.push(`  in effect since ${since}`)
  if (e.deprecated_since && e.state !== 'allow') lines.push(`  deprecated since ${e.deprecated_since}`)
  if (e.state === 'brownout') {
    lines.push(`  brownout windows (UTC) ${windowsText(p.windows)}`)
    if (e.next_window) lines.push(`  next window ${e.next_window.start} to ${e.next_window.end}`)
  }
  if (e.ended_at) lines.push(`  ended ${e.ended_at}`)
  else if (e.ends_at) lines.push(`  sunset ${e.ends_at}${p.sunset !== null && p.sunset !== e.ends_at ? ` (the scheduled deny; announced ${p.sunset})` : p.sunset === null ? ' (the scheduled deny)' : ''}`)
  const live = p.exceptions.filter((x) => Date.parse(x.until) > now)
  if (e.state === 'brownout' || e.state === 'deny') {
    for (const x of live) lines.push(`  exception ${exceptionText(x)} until ${x.until}`)
  }
  if (p.registration_closed === true) lines.push('  registration of new applications closed (existing ones keep working)')
  const pending = p.schedule.filter((s) => Date.parse(s.from) > now)
  if (pending.length === 0) lines.push('  no change scheduled')
  for (const s of pending) {
    const extra = s.state === 'brownout' ? ` (windows UTC ${windowsText(p.windows)})` : ''
    lines.push(`  scheduled: ${s.state} from ${s.from}${extra}`)
  }
  if (pending.length > 0 && e.state !== 'brownout' && e.state !== 'deny' && live.length > 0 && pending.some((s) => s.state === 'brownout' || s.state === 'deny')) {
    for (const x of live) lines.push(`  exception (once refusing) ${exceptionText(x)} until ${x.until}`)
  }
  return lines.join('\n')
}

function policyText(result: ApiResult): () => string {
  return () => {
    const v = result.json as PolicyView
    // oauth1 is OAuth 1.0a: its requests are counted as method oauth in metrics and usage.
    return [methodText('basic', v.basic), methodText('wsse', v.wsse), methodText('login_api', v.login_api), methodText('oauth1 (OAuth 1.0a; counted as oauth)', v.oauth1), 'oauth2, oidc: allow (always)', `migration guide: ${v.guide_url}`].join('\n') + '\n'
  }
}

/**
 * A line saying so when the date clients are sent as `Sunset` moved with this change, and
 * why: a scheduled deny is the end, whatever sunset was announced (docs/gateway.md#the-migration-policy).
 */
function sunsetNote(before: MethodView, after: MethodView): string {
  const note = sunsetMoved(before, after, (date) => `give --sunset ${date}`)
  return note === '' ? '' : `note: ${note}\n`
}

/** The change the options ask for (policy/change.ts makes it, as the dashboard's form does). */
function optionsChange(method: string, state: PolicyState, values: Parsed['values'], flags: Parsed['flags']): MethodChange {
  const change: MethodChange = values.from !== undefined ? { schedule: { state, from: values.from } } : { state }
  if (values.sunset !== undefined) change.sunset = values.sunset === 'none' ? null : values.sunset
  if (values.windows !== undefined) {
    try {
      change.windows = parseWindows(values.windows)
    } catch (err) {
      if (err instanceof InvalidPolicy) throw usageError(`policy set: --windows: ${err.message} (or none)`)
      throw err
    }
  }
  if (values.schedule !== undefined) {
    if (values.schedule !== 'none') throw usageError('policy set: --schedule takes only none (clears the schedule); add entries with --from')
    change.unschedule = 'all'
  }
  if (values.exceptions !== undefined) {
    if (values.exceptions !== 'none') throw usageError('policy set: --exceptions takes only none (clears them); add one with --except-user [--except-client] and --until')
    change.clearExceptions = true
  }
  // A client name is self-declared (source parameter or User-Agent): it only narrows an
  // exception for a user, never stands alone.
  if (values['except-client'] !== undefined && values['except-user'] === undefined) {
    throw usageError('policy set: --except-client needs --except-user ID: a client name is self-declared by the request (source or User-Agent), so the exception is for that user with that client')
  }
  const user = values['except-user']
  const application = values['except-app']
  if (application !== undefined && method !== 'oauth1') throw usageError('policy set: --except-app names an OAuth 1.0a application: only for oauth1')
  if ((user !== undefined || application !== undefined) && values.until === undefined) throw usageError('policy set: an exception needs --until DATE')
  if (user === undefined && application === undefined && values.until !== undefined) throw usageError('policy set: --until goes with --except-user [--except-client] or (oauth1) --except-app KEY')
  if (user !== undefined || application !== undefined) {
    change.exception = { ...(user !== undefined ? { user } : {}), ...(values['except-client'] !== undefined ? { client: values['except-client'] } : {}), ...(application !== undefined ? { application } : {}), until: values.until! }
  }
  const close = flags?.has('close-registration') === true
  const open = flags?.has('open-registration') === true
  if (close && open) throw usageError('policy set: give --close-registration or --open-registration, not both')
  if ((close || open) && method !== 'oauth1') throw usageError('policy set: --close-registration and --open-registration are for oauth1 (new OAuth 1.0a applications)')
  if (close) change.closeRegistration = true
  if (open) change.closeRegistration = false
  return change
}

export const migrationCommands: Command[] = [
  {
    group: 'usage',
    action: '',
    args: [],
    options: {
      method: { value: 'basic|wsse|login_api|oauth|oauth2|oidc|legacy' },
      user: { value: 'ID' },
      client: { value: 'TEXT' },
      since: { value: 'ISO' },
      moved: { value: 'yes|no' },
      sort: { value: 'last_seen|first_seen|count|user|client|method' },
      order: { value: 'asc|desc' },
      limit: { value: 'N' },
    },
    flags: {
      csv: 'print the report as CSV (GET /admin/usage.csv), one row per record, for a spreadsheet or mail merge',
      all: 'also rows of failed or throttled attempts only, and "(unknown users)" (by default: rows with requests accepted or refused by the policy)',
    },
    summary: 'the legacy-usage report: requests per method, user and (self-declared) client, split by outcome (accepted, refused by policy, failed credentials, throttled), first and last seen, whether the client moved to OAuth, the user\'s contact (all gateways)',
    examples: ['kigo usage --method basic --moved no --sort count', 'kigo usage --client curl --since 2027-01-01T00:00:00Z --json', 'kigo usage --csv > outreach.csv'],
    async run(client: AdminClient, { values, flags }: Parsed) {
      if (values.method !== undefined && !usageMethods.includes(values.method)) {
        throw usageError(`usage: --method must be one of ${usageMethods.join(', ')}`)
      }
      if (values.moved !== undefined && values.moved !== 'yes' && values.moved !== 'no') throw usageError('usage: --moved must be yes or no')
      const params = new URLSearchParams()
      for (const name of ['method', 'user', 'client', 'since', 'sort', 'order', 'limit']) if (values[name] !== undefined) params.set(name, values[name])
      if (values.moved !== undefined) params.set('moved', values.moved === 'yes' ? 'true' : 'false')
      if (flags?.has('all')) params.set('all', 'true')
      const query = params.size > 0 ? `?${params.toString()}` : ''
      if (flags?.has('csv')) {
        const result = await client.request('GET', `/admin/usage.csv${query}`, undefined, true)
        return { result, text: () => result.text }
      }
      const result = await client.request('GET', `/admin/usage${query}`)
      const rows: Array<Record<string, Field>> = (result.json as { records: Array<Record<string, Field>> }).records.map((r) => ({ ...r, moved: r.moved === null ? '' : r.moved ? 'yes' : 'no' }))
      // The report's columns, in the server's order: the dashboard's table and the CSV have the same.
      return { result, text: () => formatTable(rows, rows.length > 0 ? Object.keys(rows[0]!) : ['method', 'user', 'client'], 'no usage recorded') }
    },
  },
  {
    group: 'policy',
    action: 'show',
    args: [],
    options: {},
    summary: 'the migration policy of each legacy method (basic, wsse, login_api, oauth1 = OAuth 1.0a): the state in effect now, then the scheduled changes',
    examples: ['kigo policy show', 'kigo policy show --json'],
    async run(client: AdminClient) {
      const result = await client.request('GET', '/admin/policy')
      return { result, text: policyText(result) }
    },
  },
  {
    group: 'policy',
    action: 'set',
    args: ['method', 'state'],
    options: {
      from: { value: 'ISO' },
      sunset: { value: 'ISO|none' },
      windows: { value: 'HH:MM-HH:MM,…|none' },
      'except-user': { value: 'ID' },
      'except-client': { value: 'NAME' },
      'except-app': { value: 'CONSUMER_KEY' },
      until: { value: 'ISO' },
      exceptions: { value: 'none' },
      schedule: { value: 'none' },
    },
    flags: {
      yes: 'apply a brownout or deny without asking (on a terminal it shows `kigo policy plan` and asks first)',
      'close-registration': 'oauth1: no new OAuth 1.0a application may be registered (existing ones keep working); the pages and API point to OAuth 2.0',
      'open-registration': 'oauth1: new OAuth 1.0a applications may be registered again',
    },
    summary: 'set basic, wsse, login_api or oauth1 (OAuth 1.0a) to allow, deprecate, brownout or deny (now, or --from a date); windows are UTC; --except-user ID [--except-client NAME] --until DATE adds an exception for that user (and only that self-declared client); for oauth1, --except-app KEY (with or without --except-user) excepts an application',
    examples: [
      'kigo policy set wsse deprecate --sunset 2027-06-30T00:00:00Z',
      'kigo policy set basic brownout --windows 09:00-12:00,15:00-18:00 --except-user alice --until 2027-01-31T00:00:00Z',
      'kigo policy set basic deny --from 2027-07-01T00:00:00Z',
      'kigo policy set oauth1 deprecate --sunset 2027-09-30T00:00:00Z --close-registration',
    ],
    async run(client: AdminClient, { args, values, flags }: Parsed, terminal?: Terminal) {
      const [method, state] = args as [string, string]
      if (method === 'oauth') throw usageError('policy set: OAuth 1.0a is the policy method oauth1 (its requests are counted as oauth): kigo policy set oauth1 …')
      if (!legacyMethods.includes(method)) throw usageError(`policy set: <method> must be basic, wsse, login_api or oauth1, not ${JSON.stringify(method)}`)
      if (!states.includes(state)) throw usageError(`policy set: <state> must be one of ${states.join(', ')}, not ${JSON.stringify(state)}`)
      const current = (await client.request('GET', '/admin/policy')).json as PolicyView
      const body = { [method]: changedPolicy(current[method as LegacyMethod], optionsChange(method, state as PolicyState, values, flags)) }
      await confirmPlan(client, terminal, { method, state, ...(values.from !== undefined ? { from: values.from } : {}), yes: flags?.has('yes') === true })
      // Compared with the stored policy when written: a change made since is refused (412), not overwritten.
      const result = await client.request('PUT', '/admin/policy', body, false, typeof current.version === 'string' ? { 'if-match': `"${current.version}"` } : {}).catch((err: unknown) => {
        if (err instanceof CliError && err.apiError?.status === 412) {
          throw new CliError(`policy set: the ${method} policy changed after this command read it (another operator, the dashboard or a script); nothing was changed: look at it with kigo policy show, then run the command again`, 1, err.apiError)
        }
        throw err
      })
      const written = result.json as PolicyWriteView
      const after = written[method as LegacyMethod]
      const replaced = written.replaced.map((e) => `replaced: the ${e.state} scheduled from ${e.from} (it would have undone this change)\n`).join('')
      return { result, text: () => methodText(method, after) + '\n' + replaced + sunsetNote(current[method as LegacyMethod], after) }
    },
  },
  {
    group: 'policy',
    action: 'history',
    args: [],
    options: { method: { value: 'basic|wsse|login_api|oauth1' }, limit: { value: 'N' } },
    summary: 'every change of the migration policy, newest first: when, from which address, the state before and after',
    examples: ['kigo policy history', 'kigo policy history --method basic --limit 5 --json'],
    async run(client: AdminClient, { values }: Parsed) {
      if (values.method !== undefined && !legacyMethods.includes(values.method)) throw usageError('policy history: --method must be basic, wsse, login_api or oauth1')
      const params = new URLSearchParams({ kind: 'policy' })
      if (values.method !== undefined) params.set('target', values.method)
      if (values.limit !== undefined) params.set('limit', values.limit)
      const result = await client.request('GET', `/admin/audit?${params.toString()}`)
      const events = (result.json as { events: AuditEventView[] }).events
      return { result, text: () => (events.length === 0 ? 'no policy changes recorded\n' : events.map(policyEventText).join('\n') + '\n') }
    },
  },
  {
    group: 'audit',
    action: '',
    args: [],
    options: { kind: { value: 'policy|user|app|token|session|site|oidc' }, target: { value: 'ID|KEY|TOKEN|METHOD' }, since: { value: 'ISO' }, limit: { value: 'N' } },
    summary: 'the audit trail: every change made through the operator API or by a user on their account pages, newest first, with who made it',
    examples: ['kigo audit', 'kigo audit --kind app --since 2027-01-01T00:00:00Z', 'kigo audit --target alice --json'],
    async run(client: AdminClient, { values }: Parsed) {
      const params = new URLSearchParams()
      for (const name of ['kind', 'target', 'since', 'limit']) if (values[name] !== undefined) params.set(name, values[name])
      const result = await client.request('GET', `/admin/audit${params.size > 0 ? `?${params.toString()}` : ''}`)
      const rows = (result.json as { events: AuditEventView[] }).events.map((e) => ({ ...e, change: eventSummary(e.action, e.before, e.after) }))
      return { result, text: () => formatTable(rows, ['at', 'by', 'address', 'action', 'target', 'change'], 'no changes recorded') }
    },
  },
]
