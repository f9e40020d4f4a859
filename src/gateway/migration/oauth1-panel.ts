// The notices panel's part for OAuth 1.0a (docs/gateway.md#oauth-10a-as-a-legacy-method):
// per application of the owners told, its users' tokens exchanged for OAuth 2.0, the users
// who authorized it again with OAuth 2.0, and the users still on OAuth 1.0a.
import { html, joinHtml, type SafeHtml } from '../../common/html.js'
import type { FunnelLine } from '../host/notices.js'

export function oauth1FunnelHtml(effect: readonly FunnelLine[]): SafeHtml | '' {
  const apps = effect.find((e) => e.method === 'oauth1')?.applications ?? []
  if (apps.length === 0) return ''
  const rows = apps.map((a) => html`<tr data-application="${a.application}"><td data-label="Application">${a.name} <span class="muted"><code>${a.application}</code></span>${a.moved ? html` <span class="moved-yes">moved</span>` : ''}</td><td data-label="Owner"><code class="id">${a.owner}</code></td><td class="num" data-label="Tokens exchanged">${a.exchanged}</td><td class="num" data-label="Users who authorized again">${a.authorizedAgain}</td><td class="num" data-label="Users still on OAuth 1.0a">${a.onOauth1}</td></tr>`)
  return html`<h4>OAuth 1.0a applications</h4>
<table id="notices-oauth1" class="cards"><thead><tr><th>Application</th><th>Owner</th><th>Tokens exchanged</th><th>Users who authorized again</th><th>Users still on OAuth 1.0a</th></tr></thead>
<tbody>${joinHtml(rows, '\n')}</tbody></table>
<p class="muted">An application moved when it was seen with OAuth 2.0 after its last OAuth 1.0a request, or when every user's token it used moved: exchanged for OAuth 2.0 tokens, or the user authorized it again with OAuth 2.0 after their last OAuth 1.0a request.</p>`
}
