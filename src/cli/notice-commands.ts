// `kigo policy plan` and `kigo notices run|list|preview` (docs/operations.md#running-a-retirement):
// the impact of a policy change before it is made, and the migration notices, over the
// operator API (docs/gateway.md#migration-notices).
import { CliError, usageError, type AdminClient, type ApiResult } from './admin-client.js'
import type { Command, Terminal } from './command.js'
import { formatRecord, formatTable, type Field } from './output.js'
import { planText, type PolicyPlan as PlanView } from '../gateway/notices/plan.js'

const legacyMethods = ['basic', 'wsse', 'login_api', 'oauth1']
const states = ['allow', 'deprecate', 'brownout', 'deny']
const statuses = ['sent', 'failed', 'pending', 'unreachable']

const requestPlan = (client: AdminClient, method: string, state: string, from?: string) =>
  client.request('POST', '/admin/policy/plan', { method, state, ...(from !== undefined ? { from } : {}) })

/**
 * Before `kigo policy set` to brownout or deny, on a terminal: the plan, and a question.
 * Resolves when the change may go ahead; throws (exit 1, nothing changed) when the answer
 * is not yes. Without a terminal (a script) nothing is asked: the change goes ahead as it
 * always did (`kigo policy plan` shows the impact first).
 */
export async function confirmPlan(client: AdminClient, terminal: Terminal | undefined, change: { method: string; state: string; from?: string; yes: boolean }): Promise<void> {
  if (change.yes || terminal === undefined || (change.state !== 'brownout' && change.state !== 'deny')) return
  const plan = (await requestPlan(client, change.method, change.state, change.from)).json as PlanView
  const answer = await terminal.ask(`${planText(plan)}\nApply this change? [y/N] `)
  if (!/^\s*y(es)?\s*$/i.test(answer)) throw new CliError('policy set: not changed (answer y to apply, or pass --yes)', 1)
}

export const noticeCommands: Command[] = [
  {
    group: 'policy',
    action: 'plan',
    args: ['method', 'state'],
    options: { from: { value: 'ISO' } },
    summary: 'the impact of setting basic, wsse, login_api or oauth1 (OAuth 1.0a) to a state (now, or --from a date), from the usage of the notices\' lookback: users (with and without a contact e-mail), clients, requests, login-API sites; for oauth1 the applications, their owners (who are told) and their users; changes nothing',
    examples: ['kigo policy plan basic deny --from 2027-07-01T00:00:00Z', 'kigo policy plan wsse brownout --json'],
    async run(client, { args, values }) {
      const [method, state] = args as [string, string]
      if (!legacyMethods.includes(method)) throw usageError(`policy plan: <method> must be basic, wsse, login_api or oauth1, not ${JSON.stringify(method)}`)
      if (!states.includes(state)) throw usageError(`policy plan: <state> must be one of ${states.join(', ')}, not ${JSON.stringify(state)}`)
      const result = await requestPlan(client, method, state, values.from)
      return { result, text: () => planText(result.json as PlanView) + '\n' }
    },
  },
  {
    group: 'notices',
    action: 'run',
    args: [],
    options: {},
    summary: 'one pass of the migration notices now: decide who is due which step, queue their messages, send what is queued; prints what the outbox sent, failed and still holds',
    examples: ['kigo notices run', 'kigo notices run --json'],
    async run(client) {
      const result = await client.request('POST', '/admin/notices/run')
      return { result, text: () => formatRecord(result.json as Record<string, Field>) }
    },
  },
  {
    group: 'notices',
    action: 'list',
    args: [],
    options: { user: { value: 'ID' }, method: { value: 'basic|wsse|login_api|oauth1' }, status: { value: 'sent|failed|pending|unreachable' }, limit: { value: 'N' } },
    summary: 'the migration notices recorded, newest first: who, which method and step, and what became of the message (unreachable: no contact e-mail, shown on the account page only)',
    examples: ['kigo notices list --status failed', 'kigo notices list --user alice --json'],
    async run(client, { values }) {
      if (values.method !== undefined && !legacyMethods.includes(values.method)) throw usageError('notices list: --method must be basic, wsse, login_api or oauth1')
      if (values.status !== undefined && !statuses.includes(values.status)) throw usageError(`notices list: --status must be one of ${statuses.join(', ')}`)
      const params = new URLSearchParams()
      for (const name of ['user', 'method', 'status', 'limit']) if (values[name] !== undefined) params.set(name, values[name])
      const result = await client.request('GET', `/admin/notices${params.size > 0 ? `?${params.toString()}` : ''}`)
      const rows = (result.json as { notices: Array<Record<string, Field>> }).notices
      return { result, text: () => formatTable(rows, ['created_at', 'user', 'email', 'method', 'step', 'status', 'sent_at', 'attempts', 'last_error'], 'no notices recorded') }
    },
  },
  {
    group: 'notices',
    action: 'preview',
    args: ['user'],
    options: { at: { value: 'ISO' } },
    summary: 'the migration notice a pass would send a user now, or --at a date with the schedule as it stands and today\'s usage (to, subject and text, as sent), without sending or recording it',
    examples: ['kigo notices preview alice', 'kigo notices preview alice --at 2027-06-24T09:00:00Z', 'kigo notices preview alice --json'],
    async run(client, { args, values }) {
      const params = new URLSearchParams({ user: args[0]! })
      if (values.at !== undefined) params.set('at', values.at)
      const result = await client.request('GET', `/admin/notices/preview?${params.toString()}`)
      return { result, text: () => previewText(result) }
    },
  },
]

function previewText(result: ApiResult): string {
  const p = result.json as { user: string; email: string | null; message: { subject: string; text: string } | null; notices: Array<{ method: string; steps_due: string[] }>; applications?: Array<{ consumer_key: string; name: string; says: string }> }
  // OAuth 1.0a applications the user authorized: never mailed to them, shown on their account page.
  const apps = (p.applications ?? []).map((a) => `Account page, authorized application ${a.name} (${a.consumer_key}): ${a.says}\n`).join('')
  if (p.message === null) {
    return (p.notices.length === 0
      ? `${p.user}: no notice applies (no legacy use in the lookback under a policy that is being changed, or every client moved)\n`
      : `${p.user}: nothing new to send (every step due was told already)\n`) + apps
  }
  const due = p.notices.map((n) => `${n.method}: ${n.steps_due.length === 0 ? 'nothing new due' : n.steps_due.join(', ')}`).join('; ')
  return `To: ${p.email ?? '(no contact e-mail: shown on the account page only)'}\nSubject: ${p.message.subject}\nSteps due: ${due}\n\n${p.message.text}${apps === '' ? '' : `\n${apps}`}`
}
