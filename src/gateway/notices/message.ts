// What a notice says (docs/gateway.md#migration-notices): per method, each of the
// recipient's legacy clients with its requests and when last seen, when it stops working
// in the words every other surface uses (policy/outlook.ts), what to do, and the links:
// the account holder's page on moving their tools and their account page, and the
// developers' migration guide for those who write the tool themselves. Plain text, with an HTML alternative. The
// operator may replace the wording with templates (notices.templateDir): `subject.txt`,
// `text.txt`, `html.html`, each optional, with {{placeholders}} filled in (escaped in the
// HTML one).
import { readFileSync, existsSync } from 'node:fs'
import { join } from 'node:path'
import { html } from '../../common/html.js'
import { effectiveState, methodNames } from '../policy/evaluate.js'
import { policyOutlook } from '../policy/outlook.js'
import { utcMinute } from '../../common/time.js'
import type { LegacyMethod, MethodPolicy } from '../policy/types.js'
import type { NoticeStep } from './rules.js'

/** One legacy client of the recipient, as told. */
export interface NoticeClient {
  client: string
  requests: number
  lastSeen: number
  /** The user whose requests these are (the recipient, or a login-API site's users; for oauth1, the application's owner). */
  user: string
  /** oauth1: the application's consumer key. */
  application?: string
  /** oauth1: how many users' tokens of it are still on OAuth 1.0a. */
  users?: number
}

/** One method's part of a notice. */
export interface NoticeMethod {
  method: LegacyMethod
  steps: NoticeStep[]
  clients: NoticeClient[]
  /** What begins at the refusal date the reminders count down to (rules.ts DueSteps.refusal); null once a deny is in effect. */
  refusal?: 'brownout' | 'deny' | null
}

export interface NoticeInput {
  recipient: { id: string; name: string }
  /** The deployment's base URL the links point at (scheme and host). */
  baseUrl: string
  methods: NoticeMethod[]
  policies: Record<LegacyMethod, MethodPolicy>
  now: number
}

export interface NoticeMessage {
  subject: string
  text: string
  html: string
}

/** The operator's templates, read once; any of the three may be absent. */
export interface NoticeTemplates {
  subject?: string
  text?: string
  html?: string
}

export class TemplateError extends Error {
  override name = 'TemplateError'
}

/** Reads `dir`'s templates; throws TemplateError naming the directory when it holds none. */
export function loadTemplates(dir: string): NoticeTemplates {
  const read = (name: string) => (existsSync(join(dir, name)) ? readFileSync(join(dir, name), 'utf8') : undefined)
  const t: NoticeTemplates = {}
  const subject = read('subject.txt')
  const text = read('text.txt')
  const html = read('html.html')
  if (subject !== undefined) t.subject = subject.trim()
  if (text !== undefined) t.text = text
  if (html !== undefined) t.html = html
  if (Object.keys(t).length === 0) throw new TemplateError(`notices.templateDir ${dir} holds none of subject.txt, text.txt, html.html`)
  return t
}

/** The headline's words for the most urgent step, by what begins at the refusal date. */
function stepWords(step: NoticeStep, refusal: 'brownout' | 'deny' | null): string {
  // A brownout refuses requests during its daily windows only: it is not the end.
  const refused = refusal === 'brownout' ? 'starts being refused at set hours of the day (brownouts)' : 'stops working'
  switch (step) {
    case 'announced':
      return 'is being retired'
    case 'reminder_7d':
      return `${refused} in a week or less`
    case 'reminder_1d':
      return `${refused} within a day`
    case 'date_moved':
      return refusal === null ? 'has been switched off, earlier than we told you' : `${refused} earlier than we told you`
    case 'retired':
      return 'has been switched off'
  }
}

/** The most urgent step of a method's part, for the headline. */
const urgent = (steps: NoticeStep[]): NoticeStep => steps.at(-1) ?? 'announced'

const whatToDo: Record<LegacyMethod, string> = {
  basic: 'Update each of these tools to a version that signs in with OAuth, or ask its maker for one; the page on moving your tools says how, and what to ask.',
  wsse: 'Update each of these tools to a version that signs in with OAuth, or ask its maker for one; the page on moving your tools says how, and what to ask.',
  login_api: 'Move your site from the login API to OpenID Connect (or OAuth); the developer guide shows how. Your site’s users need to do nothing.',
  oauth1: 'Move the application to OAuth 2.0, one of two ways: exchange each stored OAuth 1.0a token for OAuth 2.0 tokens at the token endpoint (your users are not asked again), or turn OAuth 2.0 on for the application and have your users authorize it again. The migration page shows both.',
}

/**
 * Where on the migration page a method's next step is told, when it has a step of its own:
 * an OAuth 1.0a application's owner is sent to the token exchange (its anchor on /migration).
 */
const nextStep: Partial<Record<LegacyMethod, { words: string; anchor: string }>> = {
  oauth1: { words: 'How to exchange the tokens, step by step', anchor: 'oauth2-exchange' },
}

/** The parts of a notice, as the built-in wording and the templates' placeholders use them. */
export function noticeParts(input: NoticeInput) {
  const { baseUrl, now } = input
  const migrationUrl = `${baseUrl}/migration`
  const accountUrl = `${baseUrl}/account`
  const movingUrl = `${baseUrl}/account/moving`
  const sections = input.methods.map((m) => {
    const policy = input.policies[m.method]
    const name = methodNames[m.method]
    const lines = m.clients.map((c) => {
      // oauth1: an exception for the application (alone) is the one that concerns its owner.
      const outlook = policyOutlook(policy, now, c.application !== undefined ? { user: '', application: c.application, client: () => '' } : { user: c.user, client: () => c.client })
      const label = c.client === '' ? '(no name sent)' : c.application !== undefined ? `${c.client} (consumer key ${c.application})` : c.client
      const what = m.method === 'oauth1'
        ? `request${c.requests === 1 ? '' : 's'} with the OAuth 1.0a tokens of ${c.users ?? 0} user${c.users === 1 ? '' : 's'}`
        : `${m.method === 'login_api' ? 'sign-in' : 'request'}${c.requests === 1 ? '' : 's'}`
      return { label, requests: c.requests, lastSeen: utcMinute(c.lastSeen), outlook: outlook.summary, what }
    })
    const ended = effectiveState(policy, now) === 'deny'
    const step = nextStep[m.method]
    const how = step ? { words: step.words, url: `${migrationUrl}#${step.anchor}` } : null
    return { method: m.method, name, headline: `${name} ${stepWords(urgent(m.steps), m.refusal ?? null)}`, whatToDo: whatToDo[m.method], how, lines, ended }
  })
  const ended = sections.filter((s) => s.ended).length
  const retiring = ended === sections.length
    ? (sections.length === 1 ? 'a method that has been switched off' : 'methods that have been switched off')
    : ended > 0 ? 'methods that are being retired or have been switched off' : sections.length === 1 ? 'a method that is being retired' : 'methods that are being retired'
  const apps = sections.filter((s) => s.method === 'oauth1').length
  const who = apps === 0 ? 'Some of the tools you use with your account sign' : apps === sections.length ? 'Applications you registered sign' : 'Some of the tools you use with your account, and applications you registered, sign'
  const opening = `${who} in with ${retiring}. Here is what we saw in the last weeks, and when each one stops working:`
  const why = apps === 0
    ? 'You receive this because these requests used your account. Once your tools have moved, no more of these mails are sent.'
    : apps === sections.length
      ? 'You receive this because you registered these applications; their users are not mailed (their account pages say the application is moving). Once they have moved, no more of these mails are sent.'
      : 'You receive this because these requests used your account or applications you registered. Once they have moved, no more of these mails are sent.'
  const subject = sections.length === 1 ? `${sections[0]!.headline}: your clients need to move` : `${sections.map((s) => s.name).join(' and ')}: your clients need to move`
  const clientsText = sections.map((s) => [
    `${s.headline}.`,
    ...s.lines.map((l) => `  - ${l.label}: ${l.requests} ${l.what}, last seen ${l.lastSeen}.\n    ${l.outlook}`),
    `  What to do: ${s.whatToDo}`,
    ...(s.how ? [`  ${s.how.words}: ${s.how.url}`] : []),
  ].join('\n')).join('\n\n')
  return { subject, sections, clientsText, migrationUrl, accountUrl, movingUrl, opening, why }
}

/** Replaces {{name}} in `template` with `values[name]` (through `escape`); unknown names stay as written. */
function fill(template: string, values: Record<string, string>, escape: (s: string) => string = (s) => s): string {
  return template.replace(/\{\{\s*([a-z_]+)\s*\}\}/g, (whole, name: string) => (Object.hasOwn(values, name) ? escape(values[name]!) : whole))
}

/** The message for `input`, in the built-in wording or the operator's templates. */
export function renderNotice(input: NoticeInput, templates: NoticeTemplates = {}): NoticeMessage {
  const p = noticeParts(input)
  const name = input.recipient.name || input.recipient.id
  const values: Record<string, string> = {
    name,
    user: input.recipient.id,
    clients: p.clientsText,
    migration_url: p.migrationUrl,
    account_url: p.accountUrl,
    moving_url: p.movingUrl,
    methods: p.sections.map((s) => s.name).join(', '),
    subject: p.subject,
  }
  const text = templates.text !== undefined
    ? fill(templates.text, values)
    : [
      `Hello ${name},`,
      '',
      p.opening,
      '',
      p.clientsText,
      '',
      `How to move your tools: ${p.movingUrl}`,
      `Your account (the same list, kept up to date): ${p.accountUrl}`,
      `If you write the tool yourself, the developer guide: ${p.migrationUrl}`,
      '',
      p.why,
      '',
    ].join('\n')
  const escaped = (v: string) => html`${v}`.value
  const body = templates.html !== undefined
    ? fill(templates.html, values, escaped)
    : html`<p>Hello ${name},</p>
<p>${p.opening}</p>
${p.sections.map((s) => html`<h2>${s.headline}</h2>
<ul>
${s.lines.map((l) => html`<li><strong>${l.label}</strong>: ${l.requests} ${l.what}, last seen ${l.lastSeen}.<br>${l.outlook}</li>
`)}</ul>
<p>What to do: ${s.whatToDo}${s.how ? html` <a href="${s.how.url}">${s.how.words}</a>.` : ''}</p>
`)}<p><a href="${p.movingUrl}">How to move your tools</a> · <a href="${p.accountUrl}">Your account</a> (the same list, kept up to date)</p>
<p>If you write the tool yourself: <a href="${p.migrationUrl}">the developer guide</a>.</p>
<p>${p.why}</p>
`.value
  const subject = templates.subject !== undefined ? fill(templates.subject, values).replace(/[\r\n]+/g, ' ') : p.subject
  return { subject, text, html: body }
}
