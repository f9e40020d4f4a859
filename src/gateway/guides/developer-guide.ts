// The developer guide at /developers: what a client developer needs to move a client to
// OAuth 1.0a against this deployment — its live host names and endpoints, registering,
// the three-legged flow (oob included), signing, the common mistakes and what the
// gateway says about them, and samples in curl, Python, Node, Perl and Ruby — and to
// OAuth 2.0 (oauth2-guide.ts): endpoints, scopes, Bearer, the device flow and samples.
// The samples are the files of examples/guide/, shown with this deployment's URL;
// test/guide runs exactly those files against a running gateway with each language's
// OAuth library.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { projectRoot } from '../../common/config.js'
import type { GuidesContext } from './context.js'
import { sampleBaseUrl } from '../host/guide.js'
import { html, page, sendPage } from '../account-area/html.js'
import { oauth2GuideHtml, oauth2SampleFiles, oauth2Samples } from './oauth2-guide.js'

export interface GuideSample {
  id: string
  title: string
  library: string
  file: string
  run: string
  /** Has the `status` step: a text status, its form body signed. */
  status?: boolean
}

export const guideSamples: GuideSample[] = [
  { id: 'curl', title: 'curl', library: 'curl and openssl (the signature computed in the shell)', file: 'curl.sh', run: 'bash curl.sh', status: true },
  { id: 'python', title: 'Python', library: 'requests-oauthlib (pip install requests-oauthlib, or Debian’s python3-requests-oauthlib)', file: 'python.py', run: 'python3 python.py', status: true },
  { id: 'node', title: 'Node', library: 'oauth-1.0a (npm install oauth-1.0a), Node 20 or later', file: 'node.mjs', run: 'node node.mjs', status: true },
  { id: 'perl', title: 'Perl', library: 'Net::OAuth and LWP (cpan Net::OAuth, or Debian’s libnet-oauth-perl)', file: 'perl.pl', run: 'perl perl.pl' },
  { id: 'ruby', title: 'Ruby', library: 'the oauth gem (gem install oauth, or Debian’s ruby-oauth)', file: 'ruby.rb', run: 'ruby ruby.rb' },
]

/**
 * The scope table of the guide: which operations each scope opens (an OAuth token needs
 * one of an operation's scopes). Written out for readers; test/guide/scopes.test.ts holds
 * it to the route table (src/common/route-table.ts), so the two cannot drift.
 */
export const guideScopes: Array<{ scope: string; what: string; operations: string[] }> = [
  {
    scope: 'read_public',
    what: 'read with credentials: entries, timelines, friends and followers, keywords (write_public reads too)',
    operations: [
      'statuses/show', 'statuses/public_timeline', 'statuses/keyword_timeline', 'statuses/keyword_timeline/{word}', 'statuses/user_timeline', 'statuses/user_timeline/{id}',
      'statuses/friends_timeline', 'statuses/friends_timeline/{id}', 'statuses/album', 'statuses/album/{word}', 'friendships/show', 'friendships/show/{id}',
      'statuses/friends', 'statuses/friends/{id}', 'statuses/followers', 'statuses/followers/{id}', 'keywords/show', 'keywords/show/{word}', 'keywords/hot',
      'keywords/list', 'statuses/keywords', 'statuses/keywords/{id}',
    ],
  },
  {
    scope: 'write_public',
    what: 'post entries, with or without photos (statuses/update with file parts needs write_public only), delete them, star, follow, keywords',
    operations: [
      'statuses/update', 'statuses/destroy', 'favorites/create', 'favorites/destroy', 'friendships/create', 'friendships/destroy', 'keywords/create',
      'keywords/create/{word}', 'keywords/destroy', 'keywords/destroy/{word}', 'keywords/relation/create', 'keywords/relation/destroy',
    ],
  },
  { scope: 'write_private', what: 'upload a photo alone to the photo service (photos/create), without posting an entry', operations: ['photos/create'] },
  { scope: 'read_private', what: 'reserved: no operation needs it yet', operations: [] },
]

/** The sample of moving a login-API site to OAuth and applications/my (test/guide/login-api-site.test.ts runs it). */
export const loginApiSample = 'login-api-site.mjs'

export { sampleBaseUrl }

export function registerDeveloperGuide(app: FastifyInstance, ctx: GuidesContext): void {
  // Read once: the files do not change while the gateway runs.
  const texts = new Map([...guideSamples.map((s) => s.file), ...oauth2SampleFiles, loginApiSample].map((file) => [file, readFileSync(join(projectRoot, 'examples', 'guide', file), 'utf8')]))

  app.get('/developers', async (request, reply) => {
    request.routeName = 'developers'
    // Links name the deployment's main host, whichever alias was asked (docs/gateway.md#deployments).
    const base = request.deployment!.baseUrl
    const scheme = ctx.config.publicScheme
    const hosts = [...new Set([ctx.config.domesticHost, ctx.config.globalHost])]
    const show = (file: string) => texts.get(file)!.replaceAll(sampleBaseUrl, base)
    const body = html`<h1>Developer guide: kigo's API over OAuth</h1>
<p>Two ways to call the API with a user's consent instead of their password: <a href="#flow">OAuth 1.0a</a> (each request signed) or <a href="#oauth2">OAuth 2.0</a> (a Bearer token; a command-line tool uses <a href="#oauth2-device">the device flow</a>). Both reach the same operations with the same scopes.</p>
<nav class="toc card"><a href="#hosts">Hosts</a><a href="#register">Register</a><a href="#flow">Three-legged flow</a><a href="#signing">Signing</a><a href="#mistakes">When a signature fails</a>${guideSamples.map((s) => html`<a href="#${s.id}">${s.title}</a>`)}<a href="#oauth2">OAuth 2.0</a><a href="#oauth2-device">Device flow</a>${oauth2Samples.map((s) => html`<a href="#${s.id}">OAuth 2.0 in ${s.title}</a>`)}<a href="#login-api">Sites on the login API</a>${ctx.guideSections.map((s) => html`<a href="#${s.id}">${s.title}</a>`)}<a href="#tell-your-developer">For users</a><a href="/migration">Migration schedule</a></nav>

<section class="card" id="hosts">
<h2>Hosts and endpoints</h2>
<p>This deployment answers at ${hosts.map((h, i) => html`${i > 0 ? ', ' : ''}<code>${scheme}://${h}</code>`)}. Sign the URL exactly as you send it: the host and port you address are part of the signature.</p>
<dl>
<dt>Request token</dt><dd><code>POST ${base}/oauth/initiate</code></dd>
<dt>User authorization</dt><dd><code>GET ${base}/oauth/authorize?oauth_token=…</code></dd>
<dt>Access token</dt><dd><code>POST ${base}/oauth/token</code></dd>
<dt>API</dt><dd><code>${base}/api/…</code> (the same URLs and parameters as with Basic or WSSE)</dd>
</dl>
<p class="muted">Signature methods: HMAC-SHA1 and HMAC-SHA256. Parameters in the <code>Authorization: OAuth</code> header (recommended), the form body or the query; a timestamp within ${ctx.config.auth.timestampWindowSeconds} seconds of the server's clock; a fresh nonce each time.</p>
</section>

<section class="card" id="register">
<h2>1. Register your application</h2>
<p>Sign in on <a href="/account">your account page</a>, fill in <em>Register an application</em> with a name, a callback URL (or none, to use <code>oob</code>), and the scopes your client needs (below). The answer shows its <strong>consumer key</strong> and <strong>consumer secret</strong>; copy the secret then, as it is shown only once (a lost one is replaced with <em>Make a new secret…</em> on the application's page, where you choose how long the old one keeps working). An operator can do the same with <code>npx kigo apps add NAME --owner YOU --scopes read_public,write_public</code>.</p>
<table id="scope-table" class="cards"><thead><tr><th>Scope</th><th>Lets the client</th><th>Operations</th></tr></thead>
<tbody>${guideScopes.map((g) => html`<tr data-scope="${g.scope}"><td data-label="Scope"><code>${g.scope}</code></td><td data-label="Lets the client">${g.what}</td><td data-label="Operations">${g.operations.length === 0 ? html`<span class="muted">none</span>` : g.operations.map((o, i) => html`${i > 0 ? ', ' : ''}<code class="op">${o}</code>`)}</td></tr>`)}</tbody></table>
<p class="muted">Posting an entry with photos through <code>statuses/update</code> needs <code>write_public</code> only; <code>write_private</code> is for <code>photos/create</code>.</p>
</section>

<section class="card" id="flow">
<h2>2. The three-legged flow</h2>
<ol>
<li><p><strong>Request token.</strong> <code>POST ${base}/oauth/initiate</code>, signed with the consumer key and secret (no token), with <code>oauth_callback</code>: your callback URL, or <code>oob</code> when your client cannot receive one (a desktop or command-line tool). Optionally a form parameter <code>scope</code> naming fewer scopes than registered. The answer is <code>oauth_token</code>, <code>oauth_token_secret</code>, <code>oauth_callback_confirmed=true</code>; the request token is good for 10 minutes, once.</p></li>
<li><p><strong>The user allows.</strong> Send the user to <code>${base}/oauth/authorize?oauth_token=…</code>. They sign in and choose Allow or Deny. With a callback, kigo redirects to it with <code>oauth_token</code> and <code>oauth_verifier</code>. With <code>oob</code> the user is shown an <strong>8-character code</strong> (no 0, O, 1, I or L; capitals or small letters both work) to type into your client.</p></li>
<li><p><strong>Access token.</strong> <code>POST ${base}/oauth/token</code>, signed with the consumer secret and the request token's secret, with <code>oauth_token</code> and <code>oauth_verifier</code>. The answer is the access token and its secret: keep them; they do not expire, and the user can revoke them on their account page.</p></li>
</ol>
<p>This is OAuth 1.0a (RFC 5849): a client written for OAuth 1.0 that sends no <code>oauth_callback</code> or no <code>oauth_verifier</code> is told so.</p>
</section>

<section class="card" id="signing">
<h2>3. Signing requests</h2>
<p>Each API request carries the consumer key, the access token, a timestamp, a nonce and the signature, computed over the <em>signature base string</em> (RFC 5849 §3.4.1): the method, the URL without its query (scheme, host and port as you address them, path), and every parameter — the <code>oauth_</code> ones, the query, and the fields of an <code>application/x-www-form-urlencoded</code> body — each name and value percent-encoded, sorted, joined. The key is the consumer secret and the token secret, each encoded, joined by <code>&amp;</code>.</p>
<p>A body of another type is not signed: a JSON or <code>multipart/form-data</code> body (a photo upload) contributes none of its fields. Libraries that add <code>oauth_body_hash</code> to such bodies may do so; kigo checks it.</p>
</section>

<section class="card" id="mistakes">
<h2>When a signature fails</h2>
<p>A <code>401 signature_invalid</code> explains itself: the <code>WWW-Authenticate</code> header's <code>oauth_problem_advice</code> (and the error message) say what the server signed — method, base string URI, the parameter names in the order used — and name the mistake when it recognises one:</p>
<ul>
<li>the wrong host or port (for example the other deployment's host, or the port left out);</li>
<li><code>http</code> signed where the request went over <code>https</code>, or the reverse;</li>
<li>the query parameters left out of the signature;</li>
<li>the fields of a JSON or multipart body signed;</li>
<li>values percent-encoded twice;</li>
<li>the token secret left out of the key.</li>
</ul>
<p>A refused timestamp (<code>timestamp_refused</code>) states the server's time and how far off your clock is. ${ctx.config.auth.signatureBaseStringHeader ? html`This deployment also sends the whole base string it computed in the <code>X-OAuth-Signature-Base-String</code> header, so you can compare it with yours character by character.` : html`On a development instance (<code>npm start</code>), the whole base string comes in the <code>X-OAuth-Signature-Base-String</code> header too.`}</p>
</section>

${guideSamples.map((s) => html`<section class="card sample" id="${s.id}">
<h2>${s.title}</h2>
<p class="muted">With ${s.library}. Register first; then run the steps in order, passing what each prints to the next.</p>
<pre><code>export KIGO=${base} CONSUMER_KEY=your-key CONSUMER_SECRET=your-secret
${s.run} initiate                      # prints oauth_token, oauth_token_secret and the page for the user
REQUEST_TOKEN=… REQUEST_SECRET=… VERIFIER=CODE ${s.run} token
${s.status ? html`TOKEN=… TOKEN_SECRET=… ${s.run} status haiku 'an old silent pond'   # a text status: the form body is signed
` : ''}TOKEN=… TOKEN_SECRET=… ${s.run} post photos dot.png
TOKEN=… TOKEN_SECRET=… ${s.run} read ENTRY_ID</code></pre>
<p><a class="download" href="/developers/samples/${s.file}" download="${s.file}">Download ${s.file}</a> <span class="muted">(written for ${base})</span></p>
<pre class="source" data-file="${s.file}"><code>${show(s.file)}</code></pre>
</section>`)}

${oauth2GuideHtml(base, show)}

${ctx.guideSections.map((s) => s.render(base))}

<section class="card" id="login-api">
<h2>Moving a site off the login API</h2>
<p>A site that signs its visitors in with the login API (<code>${base}/auth?api_key=…&amp;api_sig=…</code>, then <code>${base}/api/auth.json</code> with the <code>cert</code>) moves to one of its two successors. Both tell the site who signed in; neither needs the MD5 <code>api_sig</code>.</p>
<h3 id="login-api-oauth">OAuth 1.0a and <code>applications/my</code></h3>
<ol>
<li><p>Register the site as an application (<a href="#register">above</a>) with the scope <code>read_public</code> and its callback URL.</p></li>
<li><p>Where the site redirected to <code>/auth</code>, it gets a request token and redirects to <code>${base}/oauth/authorize?oauth_token=…</code>. Extra parameters it passed through <code>/auth</code> go into its own callback URL (or its session).</p></li>
<li><p>Where its callback exchanged <code>cert</code>, it exchanges <code>oauth_token</code> and <code>oauth_verifier</code> for an access token and reads <code>GET ${base}/applications/my.json</code>, signed.</p></li>
</ol>
<table>
<thead><tr><th>/api/auth.json</th><th>/applications/my.json</th></tr></thead>
<tbody>
<tr><td><code>user.name</code></td><td><code>url_name</code></td></tr>
<tr><td><code>user.image_url</code></td><td><code>profile_image_url</code></td></tr>
<tr><td><code>user.thumbnail_url</code></td><td><code>profile_image_url</code> with <code>profile_s.png</code> in place of <code>profile.png</code></td></tr>
</tbody>
</table>
<pre><code>export KIGO=${base} CONSUMER_KEY=your-key CONSUMER_SECRET=your-secret CALLBACK=https://your.site/login/callback
node ${loginApiSample} start      # prints the request token, its secret and the page to send the visitor to
REQUEST_TOKEN=… REQUEST_SECRET=… VERIFIER=… node ${loginApiSample} finish   # in the callback</code></pre>
<pre class="source" data-file="${loginApiSample}"><code>${show(loginApiSample)}</code></pre>
<!-- login-api-oidc: the OpenID Connect route of this section -->
<h3 id="login-api-oidc">OpenID Connect</h3>
<ol>
<li><p>Register the site as an OpenID Connect client with its exact callback URL: <code>npx kigo oidc-clients add "My site" --owner YOU --redirect-uri https://your.site/login/callback</code> prints its <code>client_id</code> and <code>client_secret</code>.</p></li>
<li><p>Where the site redirected to <code>/auth</code>, it redirects to the authorization endpoint with PKCE (<code>code_challenge</code>, <code>S256</code>), <code>scope=openid profile</code> and a <code>state</code>; extra parameters it passed through <code>/auth</code> go into its own session, keyed by that state.</p></li>
<li><p>Where its callback exchanged <code>cert</code>, it exchanges the <code>code</code> with its verifier at the token endpoint and reads the ID token and userinfo.</p></li>
</ol>
<table>
<thead><tr><th>/api/auth.json</th><th>OpenID Connect claim</th></tr></thead>
<tbody>
<tr><td><code>user.name</code></td><td><code>sub</code> (and <code>preferred_username</code>); the display name is <code>name</code></td></tr>
<tr><td><code>user.image_url</code></td><td><code>picture</code></td></tr>
<tr><td><code>user.thumbnail_url</code></td><td><code>picture</code> with <code>profile_s.png</code> in place of <code>profile.png</code></td></tr>
</tbody>
</table>
<p>The whole site, with a library that does discovery, PKCE and the ID token's signature for you: <a href="#oidc">Signing people in to your site with OpenID Connect</a>.</p>
</section>

<section class="card" id="tell-your-developer">
<h2>For users: what to tell your client's developer</h2>
<p>If your account page lists a tool that still uses your API password (WSSE or HTTP Basic), send its developer this page's address, <code>${base}/developers</code>, and the <a href="/migration">migration schedule</a>: the tool keeps every URL and parameter and changes only how it signs in (OAuth 1.0a or OAuth 2.0, this guide; a command-line tool can use <a href="#oauth2-device">the device flow</a>, where you approve it on kigo's page and it never sees your password). Until then, the dates on the schedule say when it will stop working.</p>
</section>`
    return sendPage(reply, 200, page({ title: 'Developer guide', body, wide: true, ...(await ctx.sessions.viewer(request)) }))
  })

  // Each sample as a file, written for the address it is downloaded from (as the page shows it).
  app.get('/developers/samples/:file', async (request, reply) => {
    request.routeName = 'developers'
    const file = (request.params as { file: string }).file
    const text = guideSamples.some((s) => s.file === file) || oauth2SampleFiles.includes(file) ? texts.get(file) : undefined
    if (text === undefined) return sendPage(reply, 404, page({ title: 'No such sample', body: html`<div class="card"><h1>No such sample</h1><p><a href="/developers">The developer guide</a> lists them.</p></div>` }))
    return reply
      .header('content-disposition', `attachment; filename="${file}"`)
      .header('x-content-type-options', 'nosniff')
      .header('cache-control', 'no-cache')
      .type('text/plain; charset=utf-8')
      .send(text.replaceAll(sampleBaseUrl, request.deployment!.baseUrl))
  })
}
