// The dashboard's notices panel (docs/gateway.md#migration-notices): the impact of each
// method's next scheduled change (a change not yet made has its plan in the policy
// form's preview), then per method and step how many
// notices were sent, failed, are pending or went to nobody (no contact e-mail), and the
// effect of telling people (notices/funnel.ts): recipients who moved within 7 and within
// 30 days of their first notice, those who did not (refused ones marked, with since when),
// and those told too recently to tell.
import { html, joinHtml, timeHtml, type SafeHtml } from '../../common/html.js'
import { methodNames, nextChange } from '../policy/evaluate.js'
import { legacyMethods, type LegacyMethod, type Policies } from '../policy/types.js'
import type { MigrationNotices } from '../host/notices.js'
import { oauth1FunnelHtml as oauth1Funnel } from './oauth1-panel.js'

const stepLabels: Record<string, string> = { announced: 'announced', reminder_7d: '7 days before', reminder_1d: '1 day before', retired: 'retired' }

export function noticesDashboardSection(notices: Pick<MigrationNotices, 'plan' | 'planText' | 'summary' | 'lookbackDays'>, policies: () => Policies, now: () => number): () => Promise<SafeHtml> {
  return async () => {
    const t = now()
    const current = policies()
    const upcoming = legacyMethods.flatMap((m) => {
      const next = nextChange(current[m], t)
      return next === null ? [] : [{ method: m, next }]
    })
    const [plans, summary] = await Promise.all([
      Promise.all(upcoming.map(async (u) => ({ ...u, plan: await notices.plan(u.method, u.next.state, u.next.at) }))),
      notices.summary(),
    ])
    const planLines = plans.map((p) => html`<li data-method="${p.method}">${notices.planText(p.plan)} <span class="muted">(scheduled for ${timeHtml(p.next.at)})</span></li>`)
    const name = (m: string) => methodNames[m as LegacyMethod] ?? m
    const stepRows = summary.steps.map((s) => html`<tr data-method="${s.method}" data-step="${s.step}"><td data-label="Method">${name(s.method)}</td><td data-label="Step">${stepLabels[s.step] ?? s.step}</td><td class="num" data-label="Sent">${s.sent}</td><td class="num" data-label="Failed">${s.failed}</td><td class="num" data-label="Pending">${s.pending}</td><td class="num" data-label="Unreachable">${s.unreachable}</td></tr>`)
    const effectRows = summary.effect.map((e) => html`<tr data-method="${e.method}"><td data-label="Method">${name(e.method)}</td><td class="num" data-label="Told">${e.told}</td><td class="num" data-label="Moved within 7 days">${e.moved7}</td><td class="num" data-label="Moved within 30 days">${e.moved30}${e.tooEarly30 > 0 ? html` <span class="muted">(${e.tooEarly30} too early to tell)</span>` : ''}</td><td class="num" data-label="Moved">${e.moved}</td><td class="num" data-label="Not moved">${e.notMoved}${e.refused > 0 ? html` <span class="muted">(${e.refused} refused)</span>` : ''}</td><td class="num" data-label="Too early to tell">${e.tooEarly}</td></tr>`)
    const notMoved = summary.effect.flatMap((e) => e.notMovedList.map((n) => html`<li data-method="${e.method}" data-user="${n.user}">${n.user} (${name(e.method)}): told ${timeHtml(n.toldAt, { dateOnly: true })}${n.refusedSince === null ? '' : html`, <strong>refused since ${timeHtml(n.refusedSince, { dateOnly: true })}</strong>`}</li>`))
    return html`<section id="notices">
<h2>Migration notices</h2>
<h3>Impact of the next scheduled change</h3>
${planLines.length === 0 ? html`<p class="muted">No change is scheduled. The policy's “Change the policy” form, or <code>kigo policy plan METHOD STATE</code>, shows the impact of one before you make it.</p>` : html`<ul id="notice-plans">${planLines}</ul>`}
<h3>Notices per step</h3>
${stepRows.length === 0 ? html`<p class="muted">No notice has been decided yet.</p>` : html`<table id="notices-table" class="cards"><thead><tr><th>Method</th><th>Step</th><th>Sent</th><th>Failed</th><th>Pending</th><th>Unreachable (no e-mail)</th></tr></thead>
<tbody>${joinHtml(stepRows, '\n')}</tbody></table>`}
<h3>Did telling people work?</h3>
${effectRows.length === 0 ? html`<p class="muted">Nobody has been told yet.</p>` : html`<table id="notices-effect" class="cards"><thead><tr><th>Method</th><th>Recipients told</th><th>Moved within 7 days</th><th>Moved within 30 days</th><th>Moved</th><th>Not moved</th><th>Too early to tell</th></tr></thead>
<tbody>${joinHtml(effectRows, '\n')}</tbody></table>
<p class="muted">Moved: every client of the recipient was seen with OAuth, OAuth 2.0 or OpenID Connect after its last legacy request (the usage report's “moved”; a login-API site through its owner's own OpenID Connect clients), counted within 7 (30) days when that last legacy request came within 7 (30) days of the first notice. Not moved: a week after the notice, still not; a recipient the policy refuses is not moved. Too early to tell: told less than 7 days ago (30 days, for the 30-day column) and not moved yet.</p>
${notMoved.length === 0 ? '' : html`<h4>Not moved</h4><ul id="notices-not-moved">${joinHtml(notMoved, '\n')}</ul>`}
${oauth1Funnel(summary.effect)}`}
<p class="muted">Recipients: users with requests of a legacy method in the last ${notices.lookbackDays} days while its policy is being changed, and owners of login-API sites. <code>kigo notices list</code> lists every notice; <code>kigo notices preview USER</code> shows one.</p>
</section>`
  }
}
