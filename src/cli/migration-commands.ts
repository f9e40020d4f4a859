// `kigo usage` and `kigo policy show|set` (SPEC §1.3): the legacy-usage report of SPEC
// §6.3 and the migration policy of SPEC §6.1, over GET /admin/usage and GET/PUT
// /admin/policy. `policy set` reads the method's policy, changes what the options say and
// writes it back; the gateway keeps `since` when the state does not change.
import { usageError, type AdminClient, type ApiResult } from './admin-client.js'
import type { Command, Parsed } from './kigo.js'
import { formatTable } from './output.js'

const legacyMethods = ['basic', 'wsse']
const states = ['allow', 'deprecate', 'brownout', 'deny']
const usageMethods = ['basic', 'wsse', 'oauth']

interface Window { start: string; end: string }
interface Exception { user?: string; client?: string; until: string }
interface MethodView {
  state: string
  since: string
  deprecated_since: string | null
  sunset: string | null
  windows: Window[]
  schedule: Array<{ state: string; from: string }>
  exceptions: Exception[]
  effective: {
    state: string
    refusing: boolean
    deprecated_since: string | null
    brownout_until: string | null
    next_window: { start: string; end: string } | null
    next_change: { state: string; at: string } | null
  }
}
type PolicyView = { guide_url: string; basic: MethodView; wsse: MethodView }

/** `09:00-12:00,21:00-24:00` as windows; `none` for none. */
function parseWindows(value: string): Window[] {
  if (value === 'none') return []
  return value.split(',').map((part) => {
    const m = /^\s*([0-9]{2}:[0-9]{2})\s*-\s*([0-9]{2}:[0-9]{2})\s*$/.exec(part)
    if (!m) throw usageError(`policy set: --windows takes UTC windows like 09:00-12:00,21:00-24:00 (or none), not ${JSON.stringify(part)}`)
    return { start: m[1]!, end: m[2]! }
  })
}

function methodText(name: string, p: MethodView): string {
  const e = p.effective
  const lines = [`${name}: ${e.state}${e.refusing ? ` (refusing${e.brownout_until ? ` until ${e.brownout_until}` : ''})` : ''}; set to ${p.state} since ${p.since}`]
  if (e.deprecated_since) lines.push(`  deprecated since ${e.deprecated_since}`)
  if (p.sunset) lines.push(`  sunset ${p.sunset}`)
  if (p.windows.length > 0) lines.push(`  brownout windows (UTC) ${p.windows.map((w) => `${w.start}-${w.end}`).join(', ')}`)
  for (const x of p.exceptions) {
    const who = x.user === undefined ? `client ${JSON.stringify(x.client)} alone (matches nobody: add the user)` : x.client === undefined ? `user ${x.user}` : `user ${x.user} with client ${JSON.stringify(x.client)} (self-declared)`
    lines.push(`  exception ${who} until ${x.until}`)
  }
  for (const s of p.schedule) lines.push(`  scheduled ${s.state} from ${s.from}`)
  if (e.next_change) lines.push(`  next change: ${e.next_change.state} at ${e.next_change.at}`)
  return lines.join('\n')
}

function policyText(result: ApiResult): () => string {
  return () => {
    const v = result.json as PolicyView
    return [methodText('basic', v.basic), methodText('wsse', v.wsse), 'oauth: allow (always)', `migration guide: ${v.guide_url}`].join('\n') + '\n'
  }
}

/** The method's policy with the changes the options ask for, in the shape PUT takes. */
export function changedPolicy(current: MethodView, state: string, values: Parsed['values']): Record<string, unknown> {
  const next: Record<string, unknown> = {
    state: current.state,
    sunset: current.sunset,
    windows: current.windows,
    schedule: current.schedule,
    exceptions: current.exceptions,
  }
  if (values.from !== undefined) {
    // A change that takes effect later: one schedule entry (replacing one at the same instant).
    next.schedule = [...current.schedule.filter((s) => s.from !== values.from), { state, from: values.from }]
  } else {
    next.state = state
  }
  if (values.sunset !== undefined) next.sunset = values.sunset === 'none' ? null : values.sunset
  if (values.windows !== undefined) next.windows = parseWindows(values.windows)
  if (values.schedule !== undefined) {
    if (values.schedule !== 'none') throw usageError('policy set: --schedule takes only none (clears the schedule); add entries with --from')
    next.schedule = values.from !== undefined ? [{ state, from: values.from }] : []
  }
  if (values.exceptions !== undefined) {
    if (values.exceptions !== 'none') throw usageError('policy set: --exceptions takes only none (clears them); add one with --except-user [--except-client] and --until')
    next.exceptions = []
  }
  // A client name is self-declared (source parameter or User-Agent): it only narrows an
  // exception for a user, never stands alone.
  if (values['except-client'] !== undefined && values['except-user'] === undefined) {
    throw usageError('policy set: --except-client needs --except-user ID: a client name is self-declared by the request (source or User-Agent), so the exception is for that user with that client')
  }
  const subject = values['except-user'] !== undefined ? { user: values['except-user'], ...(values['except-client'] !== undefined ? { client: values['except-client'] } : {}) } : null
  if (subject && values.until === undefined) throw usageError('policy set: an exception needs --until DATE')
  if (!subject && values.until !== undefined) throw usageError('policy set: --until goes with --except-user [--except-client]')
  if (subject) {
    const others = (next.exceptions as Exception[]).filter((x) => x.user !== subject.user || x.client !== (subject as Exception).client)
    next.exceptions = [...others, { ...subject, until: values.until! }]
  }
  return next
}

export const migrationCommands: Command[] = [
  {
    group: 'usage',
    action: '',
    args: [],
    options: { method: { value: 'basic|wsse|oauth' }, user: { value: 'ID' }, since: { value: 'ISO' } },
    summary: 'the legacy-usage report: requests per method, user and (self-declared) client, split by outcome (accepted, refused by policy, failed credentials, throttled), with first and last seen (all gateways)',
    async run(client: AdminClient, { values }: Parsed) {
      if (values.method !== undefined && !usageMethods.includes(values.method)) {
        throw usageError(`usage: --method must be one of ${usageMethods.join(', ')}`)
      }
      const params = new URLSearchParams()
      for (const name of ['method', 'user', 'since']) if (values[name] !== undefined) params.set(name, values[name]!)
      const result = await client.request('GET', `/admin/usage${params.size > 0 ? `?${params.toString()}` : ''}`)
      const rows = (result.json as { records: Array<Record<string, unknown>> }).records
      return { result, text: () => formatTable(rows, ['method', 'user', 'client', 'count', 'accepted', 'refused_by_policy', 'failed_credentials', 'throttled', 'first_seen', 'last_seen'], 'no usage recorded') }
    },
  },
  {
    group: 'policy',
    action: 'show',
    args: [],
    options: {},
    summary: 'the migration policy of basic and wsse: state, windows, exceptions, sunset, schedule, next change',
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
      until: { value: 'ISO' },
      exceptions: { value: 'none' },
      schedule: { value: 'none' },
    },
    summary: 'set basic or wsse to allow, deprecate, brownout or deny (now, or --from a date); windows are UTC; --except-user ID [--except-client NAME] --until DATE adds an exception for that user (and only that self-declared client)',
    async run(client: AdminClient, { args, values }: Parsed) {
      const [method, state] = args as [string, string]
      if (method === 'oauth') throw usageError('policy set: OAuth is always allowed; the policy is for basic and wsse')
      if (!legacyMethods.includes(method)) throw usageError(`policy set: <method> must be basic or wsse, not ${JSON.stringify(method)}`)
      if (!states.includes(state)) throw usageError(`policy set: <state> must be one of ${states.join(', ')}, not ${JSON.stringify(state)}`)
      const current = (await client.request('GET', '/admin/policy')).json as PolicyView
      const body = { [method]: changedPolicy(current[method as 'basic' | 'wsse'], state, values) }
      const result = await client.request('PUT', '/admin/policy', body)
      return { result, text: () => methodText(method, (result.json as PolicyView)[method as 'basic' | 'wsse']) + '\n' }
    },
  },
]
