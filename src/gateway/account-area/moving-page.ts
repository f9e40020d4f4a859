// /account/moving (docs/gateway.md#moving-your-tools): the page for a person who uses a
// tool (a phone app, a script someone gave them) that signs in with WSSE or HTTP Basic.
// What breaks and when, in the words every policy surface uses (policy/outlook.ts);
// which of their own tools still use it (signed in: from their usage, as the account page
// shows it; a visitor is asked to sign in); a text to send the tool's maker; what
// authorizing a new version looks like and how to take old access away. Anyone may read
// it; /migration is the developers' page. Links are relative, or name the deployment the
// page was asked at, so it reads the same on every host name of the deployment.
import type { FastifyInstance } from 'fastify'
import { datesHtml, html, timeHtml, type SafeHtml } from '../../common/html.js'
import { methodNames } from '../policy/evaluate.js'
import { policyOutlook } from '../policy/outlook.js'
import type { LegacyMethod, Policies } from '../policy/types.js'
import type { AccountContext } from './context.js'
import { page, sendPage } from './html.js'
import { legacyClients, type LegacyClientView } from './legacy-usage.js'

export const movingPath = '/account/moving'

/** The methods a tool signs in with using the user's API password. */
const toolMethods: LegacyMethod[] = ['basic', 'wsse']

/** Each method's outlook as one sentence: "HTTP Basic authentication: It stops working on …". */
const outlookLines = (policies: Policies, methods: LegacyMethod[], now: number) =>
  methods.map((m) => ({ method: m, name: methodNames[m], summary: policyOutlook(policies[m], now).summary }))

/** The message a user sends the maker of their tool (plain text, to copy). */
export function askTheMaker(o: { base: string; tools: string[]; lines: Array<{ name: string; summary: string }> }): string {
  const tool = o.tools.length === 0 ? 'your tool' : o.tools.length === 1 ? o.tools[0]! : `your tools (${o.tools.join(', ')})`
  return [
    'Hello,',
    '',
    `I use ${tool} with kigo (${o.base}/). kigo is retiring the way it signs in: with my user ID and API password, by ${o.lines.map((l) => l.name).join(' or ')}.`,
    ...o.lines.map((l) => `${l.name}: ${l.summary}`),
    '',
    `Could you release a version that signs in with OAuth 1.0a instead? kigo's developer guide shows how, with examples: ${o.base}/developers`,
    `The schedule: ${o.base}/migration`,
    '',
    'Thank you!',
  ].join('\n')
}

function toolsSection(o: { signedIn: boolean; tools: LegacyClientView[]; sites: LegacyClientView[] }): SafeHtml {
  if (!o.signedIn) {
    return html`<section class="card" id="your-tools">
<h2>Which of your tools</h2>
<p><a href="/account/login?next=${encodeURIComponent(movingPath)}">Sign in</a> to see which of your tools still sign in the old way: this page then lists each one kigo saw with your API password, when it was last seen, and what will happen to it.</p>
</section>`
  }
  const waiting = o.tools.filter((t) => t.movedAs === null)
  const moved = o.tools.filter((t) => t.movedAs !== null)
  const row = (t: LegacyClientView) => html`<li><strong>${t.client}</strong> <span class="muted">(${t.methodName}, last seen ${timeHtml(t.lastSeen)})</span><br>${datesHtml(t.fate)}</li>`
  return html`<section class="card" id="your-tools">
<h2>Which of your tools</h2>
${waiting.length === 0
    ? html`<p>None of your tools has signed in the old way lately: nothing to do.</p>`
    : html`<p>These tools signed in with your API password lately. Each needs a new version from its maker (or a replacement):</p>
<ul class="tools-to-move">${waiting.map(row)}</ul>`}
${moved.length > 0 ? html`<p class="muted">Already moved:</p><ul class="tools-moved">${moved.map(row)}</ul>` : ''}
${o.sites.length > 0 ? html`<p class="muted">Sites that sign you in with kigo the old way (${o.sites.map((s, i) => html`${i > 0 ? ', ' : ''}<strong>${s.client}</strong>`)}): nothing to do on your side; each site's owner moves it.</p>` : ''}
<p class="muted">The same list is on <a href="/account#legacy">your account page</a>.</p>
</section>`
}

export function movingPage(o: { base: string; policies: Policies | null; now: number; tools: LegacyClientView[] | null; sites: LegacyClientView[]; user?: { id: string; name: string }; csrfToken?: string }): string {
  const signedIn = o.user !== undefined
  const toMove = (o.tools ?? []).filter((t) => t.movedAs === null)
  // The methods the user's own tools use when we know them, else both.
  const methods = toMove.length > 0 ? toolMethods.filter((m) => toMove.some((t) => t.method === m)) : toolMethods
  const lines = o.policies ? outlookLines(o.policies, methods, o.now) : []
  const schedule = o.policies ? outlookLines(o.policies, toolMethods, o.now) : []
  const ask = askTheMaker({ base: o.base, tools: [...new Set(toMove.map((t) => t.client))], lines })
  const body = html`<h1>Moving your tools to the new sign-in</h1>
<p>Some apps and scripts sign in to kigo with your user ID and your <strong>API password</strong>, by one of two older methods, WSSE or HTTP Basic. kigo is retiring both: such a tool needs a new version that signs in with OAuth, where you allow it on a kigo page and never give it a password.</p>
<section class="card" id="what-breaks">
<h2>What stops working, and when</h2>
${schedule.length === 0
    ? html`<p class="muted">The schedule is not available here.</p>`
    : html`<ul>${schedule.map((l) => html`<li><strong>${l.name}</strong>: ${datesHtml(l.summary)}</li>`)}</ul>
<p class="muted">Times are UTC.</p>`}
</section>
${toolsSection({ signedIn, tools: o.tools ?? [], sites: o.sites })}
<section class="card" id="ask-the-maker">
<h2>What to ask the tool's maker</h2>
<p>Send the maker of each tool (its support address, its app store page, or whoever gave you the script) this text, or your own words:</p>
<label for="ask-text">A message to copy</label>
<textarea id="ask-text" readonly rows="12">${ask}</textarea>
</section>
<section class="card" id="authorize">
<h2>Letting the new version in</h2>
<ol>
<li><p>Install the new version and choose to sign in (it may say “Connect”, “Log in with kigo” or “Authorize”).</p></li>
<li><p>It opens a kigo page in your browser. Check that its address starts with <code>${o.base}/oauth/authorize</code>. If you are not signed in, sign in there with your kigo sign-in password, on that page only.</p></li>
<li><p>The page names the application, its maker's home page if it gave one, and what it asks to do (read your entries, post for you…). Choose <strong>Allow</strong> if that is the tool you installed, <strong>Deny</strong> if not.</p></li>
<li><p>Some tools then ask you to type a short code back into them: the page shows it in large letters.</p></li>
</ol>
<p>A tool that asks for your password in its own window is not using the new sign-in: do not give it.</p>
</section>
<section class="card" id="afterwards">
<h2>Afterwards: take old access away</h2>
<p>Your <a href="/account#authorized">account page</a> lists every application you allowed, under “Applications with access to your account”: <strong>Revoke…</strong> takes access away from one you no longer use.</p>
<p>The old version used your API password. Once none of your tools needs it, choose <strong>Reset API password…</strong> under <a href="/account#api-password">API password</a>, so that a copy of it left in an old tool stops working.</p>
</section>
<p class="muted">Do you write the tool yourself? The <a href="/migration">migration guide</a> is for developers: the code and the full schedule.</p>`
  return page({ title: 'Moving your tools', body, ...(o.user ? { user: o.user } : {}), ...(o.csrfToken ? { csrfToken: o.csrfToken } : {}) })
}

export function registerMovingPage(app: FastifyInstance, ctx: AccountContext): void {
  app.get(movingPath, async (request, reply) => {
    request.routeName = 'account'
    const deployment = request.deployment!
    const now = ctx.now()
    const viewer = await ctx.sessions.viewer(request)
    const policies = ctx.migration?.policy.current() ?? null
    const usage = viewer.user && ctx.migration ? await ctx.migration.usage.list({ user: viewer.user.id, limit: 200 }) : []
    const all = viewer.user && policies ? legacyClients(usage, policies, viewer.user.id, now) : null
    return sendPage(reply, 200, movingPage({
      base: deployment.baseUrl,
      policies,
      now,
      tools: all === null ? null : all.filter((t) => t.method !== 'login_api'),
      sites: (all ?? []).filter((t) => t.method === 'login_api' && t.movedAs === null),
      ...viewer,
    }))
  })
}
