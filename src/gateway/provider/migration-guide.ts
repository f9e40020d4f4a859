// The migration guide the policy's `Link: <…>; rel="deprecation"` points at by default
// (SPEC §6.1): what a client developer needs to move from WSSE or Basic to OAuth 1.0a.
import type { FastifyInstance } from 'fastify'
import { html, page, sendPage } from './html.js'

export function registerMigrationGuide(app: FastifyInstance): void {
  app.get('/migration', async (request, reply) => {
    const origin = app.publicOrigin(request)
    const base = `${origin.scheme}://${origin.host}`
    const body = html`<h1>Moving from WSSE or Basic to OAuth</h1>
<p>WSSE and HTTP Basic authentication are being retired. Clients keep the same URLs, the
same parameters and the same responses: only the credentials change.</p>
<ol>
<li><p><strong>Register your client as an application</strong> on your
<a href="/account">account page</a>, with the scopes it needs: <code>write_public</code> to
post, star and delete entries, <code>write_private</code> to post photos,
<code>read_public</code> to read with credentials.</p></li>
<li><p><strong>Obtain an access token</strong> for each user with the OAuth 1.0a flow:
<code>POST ${base}/oauth/initiate</code>, send the user to
<code>${base}/oauth/authorize</code>, then <code>POST ${base}/oauth/token</code> with the
verifier.</p></li>
<li><p><strong>Sign every request with OAuth 1.0a</strong> (RFC 5849, HMAC-SHA1 or
HMAC-SHA256) instead of sending <code>Authorization: Basic</code> or
<code>X-WSSE</code>. Sign the URL exactly as you send it, host and port included.</p></li>
</ol>
<p>Responses to WSSE and Basic requests carry a <code>Deprecation</code> header now, and a
<code>Sunset</code> header once the date they stop working is set. During brownouts those
requests are refused with <code>403 method_retired_temporarily</code> for a while: that is
the moment to check that your client is ready.</p>`
    return sendPage(reply, 200, page({ title: 'Migrating to OAuth', body }))
  })
}
