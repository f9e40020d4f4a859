// The dashboard's policy forms (docs/operations.md#changing-the-policy-on-the-dashboard): per
// legacy method a form of its state, announced sunset, scheduled deny and brownout
// windows. It posts to a preview (what changes, whom it touches, the notices due, where
// clients' Sunset moves) whose Apply posts the same values again. The form says its
// change as a MethodChange (policy/change.ts), as `kigo policy set` does with its options.
import { html, joinHtml, type SafeHtml } from '../../common/html.js'
import { isoSeconds, utcMinute } from '../../common/time.js'
import { Compile } from '../../common/typebox.js'
import { parseWindows, sunsetMoved, windowsText, type MethodChange } from '../policy/change.js'
import { InvalidPolicy, parseInstant } from '../policy/normalize.js'
import { BrownoutWindow, instantPattern, isLegacyMethod, policyStates, type LegacyMethod, type MethodPolicy, type PolicyState } from '../policy/types.js'
import { methodLabels } from './dashboard-chart.js'
import { page, signOutForm } from './dashboard-page.js'
import type { PolicyChangePreview } from './policy-change.js'

/** What the form posts, as typed: it comes back as typed with an error. */
export interface PolicyFormValues {
  method: LegacyMethod
  state: string
  sunset: string
  deny_from: string
  windows: string
  /** oauth1: 'on' while new OAuth 1.0a registrations are to be closed; '' otherwise. */
  close_registration: string
}

const fields = ['state', 'sunset', 'deny_from', 'windows', 'close_registration'] as const

/** The form as the method's stored policy fills it (the first scheduled deny, if any). */
export function storedPolicyForm(method: LegacyMethod, p: MethodPolicy): PolicyFormValues {
  return { method, state: p.state, sunset: p.sunset ?? '', deny_from: p.schedule.find((s) => s.state === 'deny')?.from ?? '', windows: windowsText(p.windows), close_registration: p.registration_closed === true ? 'on' : '' }
}

/** The values posted; null when they name no legacy method. */
export function postedPolicyForm(body: unknown): PolicyFormValues | null {
  const b = (body !== null && typeof body === 'object' ? body : {}) as Record<string, unknown>
  const text = (name: string) => {
    const value = b[name]
    return typeof value === 'string' ? value.trim() : ''
  }
  const method = text('method')
  if (!isLegacyMethod(method)) return null
  return { method, state: text('state'), sunset: text('sunset'), deny_from: text('deny_from'), windows: text('windows'), close_registration: method === 'oauth1' && text('close_registration') === 'on' ? 'on' : '' }
}

const instant = new RegExp(instantPattern)
const checkWindow = Compile(BrownoutWindow)

/** The way the preview page writes an instant (2030-06-30 00:00 UTC), accepted back as typed. */
const pageInstant = /^([0-9]{4}-[0-9]{2}-[0-9]{2}) ([0-9]{2}:[0-9]{2}) UTC$/

function dateField(typed: string, label: string): string {
  const page = pageInstant.exec(typed)
  const value = page === null ? typed : `${page[1]}T${page[2]}:00Z`
  if (!instant.test(value)) throw new InvalidPolicy(`${label}: ${JSON.stringify(value)} is not a date; write 2027-06-30 (midnight UTC), 2027-06-30 09:00 UTC, or a date-time with Z or an offset, such as 2027-06-30T09:00:00Z`)
  parseInstant(value, label)
  return value
}

/**
 * The change the form asks for: the state from now on, the sunset (empty: none), the
 * scheduled deny (empty: none; other scheduled entries stay) and the brownout windows.
 * Throws InvalidPolicy naming the field.
 */
export function formChange(v: PolicyFormValues): MethodChange {
  if (!(policyStates as readonly string[]).includes(v.state)) throw new InvalidPolicy(`State: choose one of ${policyStates.join(', ')}`)
  const windows = parseWindows(v.windows)
  for (const w of windows) {
    if (!checkWindow.Check(w)) throw new InvalidPolicy(`Brownout windows: ${windowsText([w])} is not a window of UTC times from 00:00 to 24:00`)
  }
  return {
    state: v.state as PolicyState,
    sunset: v.sunset === '' ? null : dateField(v.sunset, 'Sunset'),
    unschedule: 'deny',
    ...(v.deny_from === '' ? {} : { schedule: { state: 'deny' as const, from: dateField(v.deny_from, 'Deny from') } }),
    windows,
    ...(v.method === 'oauth1' ? { closeRegistration: v.close_registration === 'on' } : {}),
  }
}

const selected = (on: boolean) => (on ? html` selected` : '')

/** One method's form, filled with `v`, posting to the preview. */
export function policyForm(v: PolicyFormValues): SafeHtml {
  return html`<form class="policy-form" method="post" action="/admin/policy/preview" data-method="${v.method}">
<input type="hidden" name="method" value="${v.method}">
<label>State<select name="state">${policyStates.map((s) => html`<option value="${s}"${selected(s === v.state)}>${s}</option>`)}</select></label>
<label>Sunset (announced end)<input name="sunset" value="${v.sunset}" placeholder="none, or 2027-06-30" size="22" autocomplete="off"></label>
<label>Deny from<input name="deny_from" value="${v.deny_from}" placeholder="none, or 2027-07-01" size="22" autocomplete="off"></label>
<label>Brownout windows (UTC)<input name="windows" value="${v.windows}" placeholder="09:00-12:00, 21:00-24:00" size="24" autocomplete="off"></label>
${v.method === 'oauth1' ? html`<label><input type="checkbox" name="close_registration" value="on"${v.close_registration === 'on' ? html` checked` : ''}> Close the registration of new OAuth 1.0a applications (existing ones keep working)</label>` : ''}
<button type="submit">Preview the change</button>
</form>`
}

/** The same values again, confirmed: only this post changes the policy. */
function applyForm(v: PolicyFormValues, base: string): SafeHtml {
  return html`<form class="apply" method="post" action="/admin/policy/apply">
<input type="hidden" name="method" value="${v.method}">${fields.map((f) => html`<input type="hidden" name="${f}" value="${v[f]}">`)}
<input type="hidden" name="base" value="${base}">
<button type="submit">Apply</button>
</form>`
}

const back = html`<p><a href="/admin/#policy">Back to the dashboard</a> <span class="muted">(nothing changes)</span></p>`

/** The header's right side of a policy page: the sign-out button, for a signed-in operator. */
const who = (signOut: boolean) => html`<div class="who">${signOutForm(signOut)}</div>`

/** The form again, with what to correct; nothing was changed. */
export function policyFormPage(v: PolicyFormValues | null, error: string, signOut = false): string {
  const title = v === null ? 'Change the migration policy' : `Change the ${methodLabels[v.method]} policy`
  return page(title, html`<section id="policy-change">
<h1>${title}</h1>
<p class="error" role="alert">${error}</p>
${v === null ? '' : policyForm(v)}
${back}
</section>`, who(signOut))
}

// The preview page writes every instant one way, the way clients are told (policy/outlook.ts): 2027-06-30 00:00 UTC.
const isoInstant = /\b[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z\b/g
const pageDates = (text: string): string => text.replace(isoInstant, (iso) => utcMinute(Date.parse(iso)))
const pageTime = (at: number): SafeHtml => html`<time datetime="${isoSeconds(at)}">${utcMinute(at)}</time>`

const stepWords: Record<string, string> = { announced: 'announced', reminder_7d: '7 days before', reminder_1d: '1 day before', retired: 'retired' }

function noticesPart(p: PolicyChangePreview): SafeHtml {
  if (p.plans === null || p.due === null) return html`<p class="muted">Migration notices are off in this gateway's configuration (<code>notices.enabled</code>): nobody is told, and there is no impact plan.</p>`
  const plans = p.plans.length === 0
    ? html`<p class="muted">The change begins no state other than allow: it refuses nobody new.</p>`
    : html`<ul id="policy-plan">${p.plans.map((x) => html`<li data-state="${x.state}">${pageDates(x.text)}</li>`)}</ul>`
  const steps = (d: { steps: readonly string[] }) => (d.steps.length === 0 ? 'none' : d.steps.map((s) => stepWords[s] ?? s).join(', '))
  const { before, after } = p.due
  const refusal = (at: number | null) => (at === null ? html`none` : pageTime(at))
  return html`${plans}
<p id="policy-notices">Notices due: <strong>${steps(after)}</strong>${steps(before) !== steps(after) ? html` <span class="muted">(now: ${steps(before)})</span>` : ''}; the reminders count down to: ${refusal(after.refusalAt)}${before.refusalAt !== after.refusalAt ? html` <span class="muted">(now: ${refusal(before.refusalAt)})</span>` : ''}.</p>
<p class="muted">Each user counted above who has not had a step yet gets it on the next pass of the notices: by mail with a contact e-mail, on their account page in any case. <code>kigo policy plan</code> prints the same figures.</p>`
}

/** "when you apply" for the instants the gateway sets to the time of the change. */
function afterText(p: PolicyChangePreview, field: string, value: string): string {
  const setNow = field === 'since' || (field === 'deprecated_since' && p.after.deprecated_since === p.after.since && p.before.since !== p.after.since)
  return setNow ? 'when you apply' : pageDates(value)
}

/** The scheduled entries the change drops, and why; '' when none. */
function replacedPart(p: PolicyChangePreview): SafeHtml | '' {
  if (p.replaced.length === 0) return ''
  return html`<div class="notice" id="policy-replaced"><p>This change replaces what was scheduled before it (it would have undone the change):</p>
<ul>${p.replaced.map((e) => html`<li>${e.state} from ${pageTime(Date.parse(e.from))}</li>`)}</ul></div>`
}

/**
 * The change before it is made: the fields before and after, the scheduled entries it
 * replaces, what clients are told, whom it touches, the Sunset note; then Apply. `stale`:
 * the policy changed since the preview the operator confirmed, so this one is against the
 * policy as it is now. `signOut`: the operator signed in with the form.
 */
export function policyPreviewPage(v: PolicyFormValues, p: PolicyChangePreview, options: { stale?: boolean; signOut?: boolean } = {}): string {
  const stale = options.stale === true
  const label = methodLabels[v.method]
  const rows = p.changes.map((c) => html`<tr data-field="${c.field}"><th scope="row" data-label="Field">${c.field}</th><td data-label="Now"><del>${pageDates(c.before)}</del></td><td data-label="After"><ins>${afterText(p, c.field, c.after)}</ins></td></tr>`)
  const told = p.before.effective.summary === p.after.effective.summary
    ? html`<p>Clients are told, as now: ${p.after.effective.summary}</p>`
    : html`<ul class="diff told" id="policy-told"><li>Clients are told now: <del>${p.before.effective.summary}</del></li><li>After: <ins>${p.after.effective.summary}</ins></li></ul>`
  const note = sunsetMoved(p.before, p.after, (date) => `set the sunset to ${date}`)
  const body = p.changes.length === 0
    ? html`<p id="policy-unchanged">Nothing would change: the form holds the ${label} policy as it is.</p>${back}`
    : html`<table class="cards" id="policy-diff"><thead><tr><th>Field</th><th>Now</th><th>After</th></tr></thead>
<tbody>${joinHtml(rows, '\n')}</tbody></table>
${replacedPart(p)}
${told}
${note === '' ? '' : html`<p class="notice" id="sunset-moved">Note: ${pageDates(note)}.</p>`}
<h2>Whom it touches</h2>
${noticesPart(p)}
${applyForm(v, p.base)}
${back}`
  return page(`Change the ${label} policy: preview`, html`<section id="policy-change">
<h1>Change the ${label} policy: preview</h1>
${stale ? html`<p class="error" role="alert">The ${label} policy changed after your preview (another operator, or another gateway), so nothing was applied. This is your change against the policy as it is now.</p>` : html`<p class="muted">Nothing has changed yet.</p>`}
${body}
<h2>Change it further</h2>
${policyForm(v)}
</section>`, who(options.signOut === true))
}
