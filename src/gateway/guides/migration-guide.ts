// The migration guide the policy's `Link: <…>; rel="deprecation"` points at by default
// (docs/gateway.md#the-migration-policy): what a client developer needs to move from WSSE
// or Basic to OAuth 1.0a or OAuth 2.0 (a command-line tool by the device flow), and an
// OAuth 1.0a application to OAuth 2.0 (docs/oauth2.md#moving-to-oauth-20), with the live policy — each legacy method's state, sunset, scheduled changes and
// brownout windows, in UTC and (by a small script) in the reader's own time zone.
import { randomBytes } from 'node:crypto'
import type { FastifyInstance, FastifyReply } from 'fastify'
import { methodNames, nextWindow } from '../policy/evaluate.js'
import { policyOutlook } from '../policy/outlook.js'
import { isoSeconds, utcMinute } from '../../common/time.js'
import { clockMinutes } from '../policy/time.js'
import { securePage } from '../../common/security-headers.js'
import { legacyMethods, type LegacyMethod, type MethodPolicy, type PolicyState } from '../policy/types.js'
import type { GuidesContext } from './context.js'
import { html, page, type SafeHtml } from '../account-area/html.js'
import { datesHtml } from '../../common/html.js'

/** What each state means for a client still using the method. */
export const stateMeaning: Record<PolicyState, string> = {
  allow: 'works as before',
  deprecate: 'still works; responses carry Deprecation and Sunset headers',
  brownout: 'switched off during the brownout windows below, working otherwise',
  deny: 'refused (403 method_retired)',
}

/** An instant in the words of every policy surface (`utcMinute`: `2027-07-01 00:00 UTC`), with the reader's own time added by the script. */
const dateTime = (ms: number): SafeHtml => html`<time datetime="${isoSeconds(ms)}" data-local="datetime">${utcMinute(ms)}</time>`

/** A daily window as today's UTC instants (the script shows them in local time). */
function windowText(w: { start: string; end: string }, now: number): SafeHtml {
  const day = now - (now % 86_400_000)
  const start = day + clockMinutes(w.start) * 60_000
  let end = day + clockMinutes(w.end) * 60_000
  if (end <= start) end += 86_400_000
  return html`<li><time datetime="${isoSeconds(start)}" data-local="time">${w.start}</time>–<time datetime="${isoSeconds(end)}" data-local="time">${w.end}</time> UTC every day</li>`
}

/** How each method shows on the wire. */
const methodWire: Record<LegacyMethod, string> = { basic: 'Authorization: Basic', wsse: 'X-WSSE', login_api: 'GET /auth and /api/auth.json', oauth1: 'Authorization: OAuth (OAuth 1.0a signatures)' }

/** One method's policy as a client developer needs it, at `now`. */
export function methodSection(method: LegacyMethod, p: MethodPolicy, now: number): SafeHtml {
  const outlook = policyOutlook(p, now)
  const { state, window: open } = outlook
  const since = outlook.deprecatedSince
  const next = state === 'brownout' && open === null ? nextWindow(p, now) : null
  const upcoming = p.schedule.filter((e) => Date.parse(e.from) > now)
  const end = outlook.endedAt !== null
    ? html`ended ${dateTime(outlook.endedAt)}`
    : outlook.endsAt !== null ? dateTime(outlook.endsAt) : html`<span class="muted">no date set</span>`
  return html`<section class="card policy" id="policy-${method}" data-state="${state}">
<h2>${methodNames[method]} (${methodWire[method]})</h2>
<p class="outlook">${datesHtml(outlook.summary)}</p>
<dl>
<dt>Now</dt><dd><strong class="state">${state}</strong>: ${stateMeaning[state]}${open ? html` — <strong>a brownout is on until ${dateTime(open.end)}</strong>` : ''}</dd>
${since !== null ? html`<dt>Deprecated since</dt><dd>${dateTime(since)}</dd>` : ''}
<dt>Sunset</dt><dd>${end}</dd>
<dt>Scheduled</dt><dd>${upcoming.length === 0 ? html`<span class="muted">no change scheduled</span>` : html`<ul class="plain">${upcoming.map((e) => html`<li><strong>${e.state}</strong> from ${dateTime(Date.parse(e.from))}: ${stateMeaning[e.state]}</li>`)}</ul>`}</dd>
${p.windows.length > 0 ? html`<dt>Brownout windows</dt><dd><ul class="plain">${p.windows.map((w) => windowText(w, now))}</ul>${state === 'brownout' ? '' : html`<span class="muted">(applied while the state is brownout)</span>`}${next ? html`<p class="muted">Next: ${dateTime(next.start)}</p>` : ''}</dd>` : ''}
</dl>
</section>`
}

// Rewrites each <time data-local> to add the reader's local time; without JavaScript
// the UTC text stays, which is complete on its own.
const localTimeScript = `
for (const t of document.querySelectorAll('time[data-local]')) {
  const d = new Date(t.getAttribute('datetime'));
  const text = t.dataset.local === 'time'
    ? d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', timeZoneName: 'short' })
    : d.toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', timeZoneName: 'short' });
  const s = document.createElement('span');
  s.className = 'local';
  s.textContent = ' (' + text + ' your time)';
  t.after(s);
}
const tz = document.getElementById('reader-tz');
if (tz) tz.textContent = Intl.DateTimeFormat().resolvedOptions().timeZone;
`.trim()

/** Sends a page that runs one inline script (allowed by its nonce, nothing else). */
export function sendPageWithScript(reply: FastifyReply, document: (nonce: string) => string): FastifyReply {
  const nonce = randomBytes(16).toString('base64')
  return securePage(reply, { scriptNonce: nonce })
    .code(200)
    .type('text/html; charset=utf-8')
    .send(document(nonce))
}

export function registerMigrationGuide(app: FastifyInstance, ctx: GuidesContext): void {
  app.get('/migration', async (request, reply) => {
    const base = request.deployment!.baseUrl
    const now = ctx.now()
    const policies = ctx.migration?.policy.current()
    const live = policies
      ? html`<h2 id="policy">Where things stand</h2>
<p class="muted">The live policy at ${dateTime(now)}. Times are UTC, with your own time (<span id="reader-tz">your time zone</span>) beside them.</p>
${legacyMethods.map((m) => methodSection(m, policies[m], now))}`
      : ''
    const body = html`<h1>Moving off WSSE, Basic and the login API</h1>
<p>WSSE and HTTP Basic authentication, and the login API that signs people in to other
sites, are being retired. API clients move to OAuth (1.0a or 2.0) and keep the same URLs,
the same parameters and the same responses: only the credentials change. Sites move to
OpenID Connect. The <a href="/developers">developer guide</a> has the code, in curl, Python,
Node, Perl and Ruby.</p>
${live}
<div class="card" id="what-to-do">
<h2>What to do: an API client (WSSE or Basic)</h2>
<ol>
<li><p><strong>Register your client as an application</strong> on your
<a href="/account">account page</a>, with the scopes it needs: <code>write_public</code> to
post, star and delete entries, <code>write_private</code> to post photos,
<code>read_public</code> to read with credentials.</p></li>
<li><p><strong>Obtain an access token</strong> for each user with the OAuth 1.0a flow:
<code>POST ${base}/oauth/initiate</code>, send the user to
<code>${base}/oauth/authorize</code>, then <code>POST ${base}/oauth/token</code> with the
verifier (<a href="/developers#flow">step by step</a>).</p></li>
<li><p><strong>Sign every request with OAuth 1.0a</strong> (RFC 5849, HMAC-SHA1 or
HMAC-SHA256) instead of sending <code>Authorization: Basic</code> or
<code>X-WSSE</code>. Sign the URL exactly as you send it, host and port included
(<a href="/developers#signing">signing a read and a post</a>).</p></li>
</ol>
<p>Responses to WSSE and Basic requests carry a <code>Deprecation</code> header once a method
is deprecated, and a <code>Sunset</code> header once the date it stops working is set. During
brownouts those requests are refused with <code>403 method_retired_temporarily</code> and a
<code>Retry-After</code> until the window ends: that is the moment to check that your client
is ready.</p>
</div>
<div class="card" id="oauth2">
<h2>Or OAuth 2.0</h2>
<p>The API takes OAuth 2.0 access tokens too (<code>Authorization: Bearer …</code>), with the
same operations and scopes as OAuth 1.0a and no signature to compute
(<a href="/developers#oauth2">OAuth 2.0 in the developer guide</a>). Register an OAuth 2.0
client on your account page (<a href="/account/oidc-clients">OpenID Connect clients</a>),
ticking the API scopes it needs.</p>
<h3 id="oauth2-basic-wsse">A command-line or desktop tool on Basic or WSSE: the device flow</h3>
<ol>
<li><p><strong>Register it as a public client</strong> (no secret: a program on the user's
machine cannot keep one).</p></li>
<li><p><strong>Where it asked for the password</strong>, it posts its <code>client_id</code>
and <code>scope</code> to <code>${base}/oidc/device/auth</code> and shows the user a short
code and the address <code>${base}/device</code>. The user opens it on any device, signs in,
types the code and allows; meanwhile the tool polls <code>${base}/oidc/token</code> until
its tokens come (<a href="/developers#oauth2-device">step by step, with a curl
sample</a>).</p></li>
<li><p><strong>Where it sent <code>Authorization: Basic</code> or <code>X-WSSE</code></strong>,
it sends <code>Authorization: Bearer</code> with the access token, and refreshes it with
the refresh token when it expires. It no longer stores the user's password.</p></li>
</ol>
<h3 id="oauth2-exchange">An OAuth 1.0a application: OAuth 2.0 without asking your users again</h3>
<p>Your users stay signed in: each stored OAuth 1.0a token is traded for OAuth 2.0 tokens
for the same user, and the OAuth 1.0a token keeps working until the retirement's dates.</p>
<ol>
<li><p><strong>Turn OAuth 2.0 on</strong> in your application's settings (its page on your
<a href="/account">account page</a>, "Turn on OAuth 2.0"). It keeps its name,
owner, scopes and users; its callback becomes its redirect URI; you get a
<code>client_id</code> and a <code>client_secret</code>.</p></li>
<li><p><strong>Exchange each stored access token</strong> at <code>POST ${base}/oidc/token</code>
with <code>grant_type=urn:ietf:params:oauth:grant-type:token-exchange</code>,
<code>subject_token</code> (the OAuth 1.0a access token) and
<code>subject_token_type=urn:kigo:params:oauth:token-type:oauth1-access-token</code>,
authenticated with the client's Basic credentials and signed with OAuth 1.0a (your consumer
secret and the token's secret; the <code>oauth_</code> parameters in the form body). The
token secret never travels. A sample in Python with requests-oauthlib exchanges a token,
calls the API with it and refreshes it: <a class="download" href="/developers/samples/oauth2-exchange.py"
download="oauth2-exchange.py">Download oauth2-exchange.py</a>.</p></li>
<li><p><strong>Store the answer</strong>: an access token and a refresh token for the same
user, with the scopes the user granted (never more). No user is asked. Exchanging the same
token again is allowed, for a client that crashed before storing the answer; refusals are
<code>invalid_grant</code> (unknown, revoked or expired token, or a bad signature),
<code>invalid_client</code> and <code>unauthorized_client</code> (another application's
token). A public client cannot exchange.</p></li>
</ol>
</div>
<div class="card" id="login-api">
<h2>What to do: a site that signs people in with the login API</h2>
<p>The login API (<code>${base}/auth</code> and <code>${base}/api/auth.json</code>) is
retired the same way. Its successor is OpenID Connect:</p>
<ol>
<li><p><strong>Register the site as an OpenID Connect client</strong> on your
<a href="/account">account page</a>, with its exact redirect URI.</p></li>
<li><p><strong>Point any certified OpenID Connect library at the discovery document</strong>,
<code>${base}/.well-known/openid-configuration</code>, and use the authorization code flow
with PKCE. The ID token's <code>sub</code> is the login API's <code>name</code>, and
<code>picture</code> its <code>image_url</code> (<a href="/developers#oidc">a whole sample
site</a>).</p></li>
<li><p><strong>Keep the site's name</strong>: sign-ins through OpenID Connect under the same
name show the site as moved.</p></li>
</ol>
<p>A site may instead use OAuth and read who signed in from
<code>${base}/applications/my</code> (<a href="/developers#login-api">both routes</a>). Once
the login API is deprecated, its exchange answers carry <code>Deprecation</code> and
<code>Sunset</code> and the sign-in page says so; during brownouts and after deny the
sign-in and the exchange are refused.</p>
</div>
<p>Using a tool rather than writing one? <a href="/account/moving">Moving your tools</a> says what
stops working, which of your tools still sign in the old way, and what to ask their makers.</p>`
    const viewer = await ctx.sessions.viewer(request)
    return sendPageWithScript(reply, (nonce) => page({ title: 'Moving off the legacy methods', body, script: { nonce, code: localTimeScript }, ...viewer }))
  })
}
