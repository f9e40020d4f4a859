// The developer guide's section on signing people in with OpenID Connect (/developers#oidc):
// the endpoints of this deployment, registering a site, and the sample site of
// examples/guide/oidc-site.mjs, which test/guide runs against a running gateway. The
// provider's guide shows it as one of the features' `guideSections` (oidc/feature.ts).
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { projectRoot } from '../../common/config.js'
import { sampleBaseUrl, type GuideSection } from '../host/guide.js'
import { html, type SafeHtml } from '../../common/html.js'

export const oidcSampleFile = 'oidc-site.mjs'

let sampleText: string | undefined

function render(base: string): SafeHtml {
  sampleText ??= readFileSync(join(projectRoot, 'examples', 'guide', oidcSampleFile), 'utf8')
  return html`<section class="card sample" id="oidc">
<h2>Signing people in to your site with OpenID Connect</h2>
<p>A site that lets its visitors sign in with their kigo account uses OpenID Connect: the authorization code flow with PKCE (<code>S256</code>, required of every client), the scopes <code>openid profile</code>, and the claims <code>sub</code> (the kigo user ID), <code>preferred_username</code>, <code>name</code>, <code>picture</code> (the user's icon) and <code>profile</code> (their page). Any certified relying-party library works from the discovery document alone.</p>
<dl>
<dt>Discovery</dt><dd><code>${base}/.well-known/openid-configuration</code></dd>
<dt>Authorization</dt><dd><code>GET ${base}/oidc/auth</code></dd>
<dt>Token</dt><dd><code>POST ${base}/oidc/token</code> (client authentication: HTTP Basic with the client secret, or none for a public client)</dd>
<dt>Userinfo</dt><dd><code>GET ${base}/oidc/userinfo</code></dd>
<dt>Keys</dt><dd><code>${base}/oidc/jwks</code> (ID tokens are signed with RS256; fetch the keys by <code>kid</code>, they rotate)</dd>
<dt>Sign-out</dt><dd><code>GET ${base}/oidc/session/end</code></dd>
</dl>
<p><strong>Register the site</strong> with its exact redirect URI (compared character for character): an operator runs <code>npx kigo oidc-clients add "My site" --owner YOU --redirect-uri https://my.example/callback</code>, which prints the <code>client_id</code> and the <code>client_secret</code> once; <code>--public</code> registers an app that cannot keep a secret (PKCE alone). Refresh tokens are issued only when the site asks for <code>offline_access</code> with <code>prompt=consent</code>. Users see the sites they signed in to on their account page and can revoke each.</p>
<p class="muted">With openid-client (npm install openid-client), Node 20 or later: a whole site in one file.</p>
<pre><code>KIGO=${base} CLIENT_ID=… CLIENT_SECRET=… node ${oidcSampleFile}   # then open http://127.0.0.1:3000/</code></pre>
<pre class="source" data-file="${oidcSampleFile}"><code>${sampleText.replaceAll(sampleBaseUrl, base)}</code></pre>
</section>`
}

export const oidcGuideSection: GuideSection = { id: 'oidc', title: 'Sign-in for sites (OpenID Connect)', render }
