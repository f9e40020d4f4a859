// The account page's migration notice (docs/gateway.md#migration-notices): the same
// notice the mail carries (its clients, the dates, what to do, in the same words), as long
// as it applies, whether or not the user has a contact e-mail; and for each legacy client
// the endpoints it called and when, so the person can tell which tool it is. A login-API
// site's owner sees their site's part. Registered on the account page's sections.
import { datesHtml, html, timeHtml } from '../../common/html.js'
import type { AccountSection } from '../account-area/context.js'
import { noticeParts } from './message.js'
import { endpointKey, type EndpointStore } from './endpoints.js'
import type { Notices } from './index.js'
import type { Policies } from '../policy/types.js'

export function noticeAccountSection(o: { notices: Pick<Notices, 'current'>; endpoints: Pick<EndpointStore, 'forUser'>; policies: () => Policies; baseUrl: string; now: () => number }): AccountSection {
  return async (user) => {
    const [current, endpoints] = await Promise.all([o.notices.current(user.id), o.endpoints.forUser(user.id)])
    if (current.length === 0) return html``
    const now = o.now()
    const email = current[0]!.recipient.email
    const parts = current.map((n) => {
      const p = noticeParts({ recipient: n.recipient, baseUrl: o.baseUrl, methods: [{ method: n.method, steps: n.steps, clients: n.clients, refusal: n.refusal }], policies: o.policies(), now })
      const s = p.sections[0]!
      const rows = n.clients.map((c, i) => {
        const l = s.lines[i]!
        const used = endpoints.get(endpointKey(n.method, c.client)) ?? []
        return html`<li><strong>${l.label}</strong>: ${l.requests} ${l.what}, last seen ${timeHtml(c.lastSeen)}.<br>${datesHtml(l.outlook)}${used.length > 0
          ? html`<br><span class="muted">Called lately:</span> ${used.map((u, j) => html`${j > 0 ? ', ' : ''}<code>${u.endpoint}</code> (${timeHtml(u.lastSeen)})`)}`
          : ''}</li>`
      })
      // The card's own words: its list is above them (the mail's wording is its own).
      const todo = n.method === 'login_api'
        ? html`${s.whatToDo} <a href="/migration">Migration guide</a>.`
        : html`Update each tool listed above to a version that signs in with OAuth, or ask its maker for one. <a href="/account/moving">How to move your tools</a>: what to ask the maker, and how to let the new version in.`
      return html`<h3>${s.headline}</h3>
<ul class="notice-clients">${rows}</ul>
<p>What to do: ${todo}</p>`
    })
    return html`<section class="card" id="migration-notice">
<h2>Tools that need to move</h2>
${parts}
${email === null ? html`<p class="muted">You have no contact e-mail, so this notice is not mailed to you: it is shown here. Add an address to be told by mail.</p>` : html`<p class="muted">This notice is also mailed to ${email} as each date comes near.</p>`}
</section>`
  }
}
