// The developer guide's OAuth 2.0 part (/developers#oauth2): this deployment's endpoints,
// registering a client, the scopes, Bearer and its errors, refresh and revocation, the
// device flow for the command-line tools that send Basic or WSSE today, and the samples
// of examples/guide/oauth2-*, which test/guide/oauth2-samples.test.ts runs against a
// running gateway with each language's OAuth 2.0 library.
import { html, type SafeHtml } from '../account-area/html.js'

export interface OAuth2Sample {
  id: string
  title: string
  library: string
  file: string
  run: string
  /** Confidential (a server keeping the client secret) or public (no secret). */
  client: 'confidential' | 'public'
  /** Has a `revoke` step. */
  revoke?: boolean
}

export const oauth2Samples: OAuth2Sample[] = [
  { id: 'oauth2-python', title: 'Python', library: 'requests-oauthlib’s OAuth2Session (pip install requests-oauthlib, or Debian’s python3-requests-oauthlib)', file: 'oauth2-python.py', run: 'python3 oauth2-python.py', client: 'confidential' },
  { id: 'oauth2-ruby', title: 'Ruby', library: 'the oauth2 gem (gem install oauth2, or Debian’s ruby-oauth2); PKCE computed in the sample', file: 'oauth2-ruby.rb', run: 'ruby oauth2-ruby.rb', client: 'confidential' },
  { id: 'oauth2-node', title: 'Node', library: 'openid-client (npm install openid-client), Node 20 or later', file: 'oauth2-node.mjs', run: 'node oauth2-node.mjs', client: 'public', revoke: true },
  { id: 'oauth2-perl', title: 'Perl', library: 'LWP::Authen::OAuth2 (cpan LWP::Authen::OAuth2, or Debian’s liblwp-authen-oauth2-perl), with a small description of kigo for the module; PKCE computed in the sample', file: 'oauth2-perl.pl', run: 'perl oauth2-perl.pl', client: 'public' },
]

/** The device-flow sample for command-line tools (curl and jq). */
export const oauth2DeviceSample = { id: 'oauth2-device', file: 'oauth2-device.sh', run: 'bash oauth2-device.sh' } as const

/** The token exchange of an OAuth 1.0a application's stored tokens (requests-oauthlib; the migration page's exchange step links it). */
export const oauth2ExchangeSample = { file: 'oauth2-exchange.py', library: 'requests-oauthlib' } as const

/** Every OAuth 2.0 sample file, as /developers/samples/:file serves them. */
export const oauth2SampleFiles = [...oauth2Samples.map((s) => s.file), oauth2DeviceSample.file, oauth2ExchangeSample.file]

/** The redirect URI the samples use by default: nothing listens there; the user copies the address. */
export const sampleRedirectUri = 'http://127.0.0.1:8000/callback'

/** The OAuth 2.0 part of the guide for the deployment at `base`; `show` gives a sample's text written for it. */
export function oauth2GuideHtml(base: string, show: (file: string) => string): SafeHtml {
  return html`<section class="card" id="oauth2">
<h2>OAuth 2.0</h2>
<p>The API also takes OAuth 2.0 access tokens, sent as <code>Authorization: Bearer …</code>: no signature to compute, every operation OAuth 1.0a may call, with the same URLs, parameters, responses and scopes. kigo's OpenID Connect provider is the authorization server: the user signs in and allows on kigo's own pages, as for OAuth 1.0a. A new client can start here; a client on Basic or WSSE can move straight here (a command-line tool with <a href="#oauth2-device">the device flow</a>); an OAuth 1.0a application keeps its users by <a href="/migration#oauth2-exchange">exchanging their tokens</a> (<a class="download" href="/developers/samples/${oauth2ExchangeSample.file}" download="${oauth2ExchangeSample.file}">Download ${oauth2ExchangeSample.file}</a>, with ${oauth2ExchangeSample.library}).</p>
<h3 id="oauth2-endpoints">Endpoints</h3>
<p>Libraries find them in the metadata, <code>${base}/.well-known/oauth-authorization-server</code> (RFC 8414; also in <code>${base}/.well-known/openid-configuration</code>). Each deployment is its own issuer: a token of one is refused by the other.</p>
<dl>
<dt>Authorization (the user's browser)</dt><dd><code>GET ${base}/oidc/auth</code></dd>
<dt>Token</dt><dd><code>POST ${base}/oidc/token</code></dd>
<dt>Device authorization</dt><dd><code>POST ${base}/oidc/device/auth</code>; the user types the code at <code>${base}/device</code></dd>
<dt>Revocation</dt><dd><code>POST ${base}/oidc/token/revocation</code></dd>
<dt>Introspection</dt><dd><code>POST ${base}/oidc/token/introspection</code></dd>
<dt>API (the tokens' audience)</dt><dd><code>${base}/api</code></dd>
</dl>
<h3 id="oauth2-register">Register your client</h3>
<p>Sign in on your account page and open <a href="/account/oidc-clients">OpenID Connect clients</a>: give a name, the exact redirect URI (compared character for character), the type, and tick the API scopes the client may ask for. <strong>Confidential</strong> is a server that keeps the <code>client_secret</code> (shown once); it authenticates at the token endpoint with HTTP Basic. <strong>Public</strong> is a program on the user's machine or phone, with no secret: it sends its <code>client_id</code> alone. Every client uses PKCE (<code>S256</code>). The samples use the redirect URI <code>${sampleRedirectUri}</code>: nothing needs to listen there; after Allow, the browser shows it cannot connect, and its address bar holds the code to paste into the sample.</p>
<h3 id="oauth2-scopes">Scopes</h3>
<p>The scopes are OAuth 1.0a's (<a href="#scope-table">which operations each opens</a>), and the user is asked in the same words: <code>read_public</code> to read, <code>write_public</code> to post, delete and star, <code>write_private</code> to upload a photo alone. Ask for them in <code>scope</code>, separated by spaces; a client gets only scopes it is registered for. A token lacking the scope an operation needs is refused with <code>403 insufficient_scope</code>, whose challenge names the scope.</p>
<h3 id="oauth2-bearer">Calling the API</h3>
<pre><code>GET /api/statuses/friends_timeline.json HTTP/1.1
Host: ${base.replace(/^https?:\/\//, '')}
Authorization: Bearer ACCESS_TOKEN</code></pre>
<p>Exactly that header: never the token in the URL or a form body (<code>access_token=</code>), which is refused; and one credential per request, no Basic, WSSE or OAuth 1.0a beside it. An access token lives one hour (<code>expires_in</code>); treat it as opaque. Refusals carry <code>WWW-Authenticate: Bearer realm="…", error="…"</code> (RFC 6750):</p>
<ul>
<li><code>401 invalid_token</code>: expired, revoked, or not for this deployment's API. Refresh it, or send the user through the authorization again.</li>
<li><code>403 insufficient_scope</code>: the token lacks the scope named in the challenge's <code>scope</code>. Ask the user for it.</li>
<li><code>400 invalid_request</code>: the header is not exactly <code>Bearer &lt;token&gt;</code>, or the token came in the URL or body.</li>
</ul>
<h3 id="oauth2-refresh">Refresh and revocation</h3>
<p>Every token for the API comes with a refresh token. Each refresh (<code>grant_type=refresh_token</code>) answers a new access token and a <strong>new refresh token</strong>: store it, the old one is spent. A spent refresh token used again is taken as stolen, and the whole grant is revoked; the user must allow again. To sign out, <code>POST</code> either token to the revocation endpoint: the grant ends, its access token is refused within seconds on every gateway. The user can revoke your client on their account page at any time, with the same effect.</p>
<h3 id="oauth2-device">The device flow, for a command-line tool on Basic or WSSE</h3>
<p>A tool that sends the user's password today (<code>Authorization: Basic</code> or <code>X-WSSE</code>) and has no browser or callback uses the device flow (RFC 8628), as a public client:</p>
<ol>
<li><p><code>POST ${base}/oidc/device/auth</code> with <code>client_id</code> and <code>scope</code> answers a <code>device_code</code> (the tool keeps it), a <code>user_code</code> like <code>WDJB-MJHT</code>, the <code>verification_uri</code> <code>${base}/device</code>, <code>expires_in</code> (10 minutes) and <code>interval</code>.</p></li>
<li><p>The tool shows the code and the address. The user opens it on any device (a phone will do), signs in, types the code, checks the tool's name and allows.</p></li>
<li><p>Meanwhile the tool polls <code>POST ${base}/oidc/token</code> with <code>grant_type=urn:ietf:params:oauth:grant-type:device_code</code>, <code>device_code</code> and <code>client_id</code>, every <code>interval</code> seconds: <code>authorization_pending</code> means wait, <code>slow_down</code> means wait 5 seconds longer; <code>access_denied</code> or <code>expired_token</code> end it. Then the tokens come.</p></li>
<li><p>The tool calls the API as before, with <code>Authorization: Bearer</code> in place of Basic or WSSE, and refreshes the token when it expires. The password is no longer stored anywhere.</p></li>
</ol>
<pre><code>export KIGO=${base} CLIENT_ID=your-client-id
${oauth2DeviceSample.run} login        # shows the code and ${base}/device, waits, prints the tokens
ACCESS_TOKEN=… ${oauth2DeviceSample.run} post haiku 'an old silent pond'
ACCESS_TOKEN=… ${oauth2DeviceSample.run} read ENTRY_ID
REFRESH_TOKEN=… ${oauth2DeviceSample.run} refresh
TOKEN=… ${oauth2DeviceSample.run} revoke</code></pre>
<p><a class="download" href="/developers/samples/${oauth2DeviceSample.file}" download="${oauth2DeviceSample.file}">Download ${oauth2DeviceSample.file}</a> <span class="muted">(curl and jq; written for ${base})</span></p>
<pre class="source" data-file="${oauth2DeviceSample.file}"><code>${show(oauth2DeviceSample.file)}</code></pre>
</section>

${oauth2Samples.map((s) => html`<section class="card sample" id="${s.id}">
<h2>OAuth 2.0 in ${s.title}</h2>
<p class="muted">With ${s.library}. A ${s.client} client: the authorization code with PKCE. <code>login</code> prints the page to open; sign in there, allow, and paste the address the browser is sent to.</p>
<pre><code>export KIGO=${base} CLIENT_ID=your-client-id${s.client === 'confidential' ? ' CLIENT_SECRET=your-secret' : ''} REDIRECT_URI=${sampleRedirectUri}
${s.run} login                                # prints access_token, refresh_token, scope, expires_in
ACCESS_TOKEN=… ${s.run} post haiku 'an old silent pond'   # write_public
ACCESS_TOKEN=… ${s.run} read ENTRY_ID                     # read_public
REFRESH_TOKEN=… ${s.run} refresh${s.revoke ? html`
TOKEN=… ${s.run} revoke` : ''}</code></pre>
<p><a class="download" href="/developers/samples/${s.file}" download="${s.file}">Download ${s.file}</a> <span class="muted">(written for ${base})</span></p>
<pre class="source" data-file="${s.file}"><code>${show(s.file)}</code></pre>
</section>`)}`
}
