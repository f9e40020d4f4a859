// The developer guide and the migration guide as HTTP pages: the live host names, every
// sample exactly as examples/guide/ holds it (the files test/guide runs) with this
// deployment's URL, the links between the pages, and /migration's live policy.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { gatewayApp, type GatewayApp } from '../../helpers/gateway-app.js'
import escapeHtml from 'escape-html'

let stack: GatewayApp
beforeAll(async () => {
  stack = await gatewayApp()
})
afterAll(() => stack?.close())

describe('/developers', () => {
  it('names the live hosts and endpoints and shows every sample as run by the tests', async () => {
    const res = await stack.fetch(`${stack.url}/developers`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^text\/html/)
    const text = await res.text()
    expect(text).toContain(`<code>http://${stack.config.domesticHost}</code>`)
    expect(text).toContain(`<code>http://${stack.config.globalHost}</code>`)
    expect(text).toContain(`POST ${stack.url}/oauth/initiate`)
    for (const file of ['curl.sh', 'python.py', 'node.mjs', 'perl.pl', 'ruby.rb']) {
      const source = readFileSync(join(process.cwd(), 'examples', 'guide', file), 'utf8').replaceAll('http://localhost:8080', stack.url)
      expect(text).toContain(`<pre class="source" data-file="${file}"><code>${escapeHtml(source)}</code></pre>`)
    }
    for (const anchor of ['register', 'flow', 'signing', 'mistakes', 'tell-your-developer']) expect(text).toContain(`id="${anchor}"`)
  })

  it('offers each sample as a download, the file the page shows, written for the address it came from', async () => {
    const page = await (await stack.fetch(`${stack.url}/developers`)).text()
    for (const file of ['curl.sh', 'python.py', 'node.mjs', 'perl.pl', 'ruby.rb']) {
      expect(page).toContain(`<a class="download" href="/developers/samples/${file}" download="${file}">`)
      const res = await stack.fetch(`${stack.url}/developers/samples/${file}`)
      expect(res.status).toBe(200)
      expect(res.headers.get('content-disposition')).toBe(`attachment; filename="${file}"`)
      const source = readFileSync(join(process.cwd(), 'examples', 'guide', file), 'utf8').replaceAll('http://localhost:8080', stack.url)
      expect(await res.text()).toBe(source)
    }
    for (const bad of ['nothing.sh', '..%2Fpackage.json', 'curl.sh%00']) expect((await stack.fetch(`${stack.url}/developers/samples/${bad}`)).status).toBe(404)
  })

  it('shows the scope table: statuses/update with photos needs write_public, write_private is for photos/create', async () => {
    const page = await (await stack.fetch(`${stack.url}/developers`)).text()
    const row = (scope: string) => page.slice(page.indexOf(`<tr data-scope="${scope}">`), page.indexOf('</tr>', page.indexOf(`<tr data-scope="${scope}">`)))
    expect(row('write_public')).toContain('<code class="op">statuses/update</code>')
    expect(row('write_private')).toContain('<code class="op">photos/create</code>')
    expect(row('write_private')).not.toContain('statuses/update')
  })

  it('has an OAuth 2.0 part: the endpoints the metadata publishes, Bearer, the device flow, and every OAuth 2.0 sample as run by the tests', async () => {
    const text = await (await stack.fetch(`${stack.url}/developers`)).text()
    for (const anchor of ['oauth2', 'oauth2-endpoints', 'oauth2-register', 'oauth2-scopes', 'oauth2-bearer', 'oauth2-refresh', 'oauth2-device', 'oauth2-python', 'oauth2-ruby', 'oauth2-node', 'oauth2-perl']) expect(text).toContain(`id="${anchor}"`)
    const toc = /<nav class="toc card">[\s\S]*?<\/nav>/.exec(text)![0]
    for (const anchor of ['oauth2', 'oauth2-device', 'oauth2-python', 'oauth2-ruby', 'oauth2-node', 'oauth2-perl']) expect(toc).toContain(`href="#${anchor}"`)
    // The endpoints the page names are the ones the authorization server publishes.
    const meta = (await (await stack.fetch(`${stack.url}/.well-known/oauth-authorization-server`)).json()) as Record<string, string>
    expect(text).toContain(`<code>${stack.url}/.well-known/oauth-authorization-server</code>`)
    expect(text).toContain(`<code>GET ${meta.authorization_endpoint}</code>`)
    expect(text).toContain(`<code>POST ${meta.token_endpoint}</code>`)
    expect(text).toContain(`<code>POST ${meta.device_authorization_endpoint}</code>`)
    expect(text).toContain(`<code>POST ${meta.revocation_endpoint}</code>`)
    expect(text).toContain(`<code>POST ${meta.introspection_endpoint}</code>`)
    expect(text).toContain(`<code>${stack.url}/device</code>`)
    expect(text).toContain('Authorization: Bearer ACCESS_TOKEN')
    expect(text).toContain('grant_type=urn:ietf:params:oauth:grant-type:device_code')
    for (const file of ['oauth2-python.py', 'oauth2-ruby.rb', 'oauth2-node.mjs', 'oauth2-perl.pl', 'oauth2-device.sh']) {
      const source = readFileSync(join(process.cwd(), 'examples', 'guide', file), 'utf8').replaceAll('http://localhost:8080', stack.url)
      expect(text).toContain(`<pre class="source" data-file="${file}"><code>${escapeHtml(source)}</code></pre>`)
      expect(text).toContain(`<a class="download" href="/developers/samples/${file}" download="${file}">`)
      const res = await stack.fetch(`${stack.url}/developers/samples/${file}`)
      expect(res.status).toBe(200)
      expect(res.headers.get('content-disposition')).toBe(`attachment; filename="${file}"`)
      expect(await res.text()).toBe(source)
    }
    // The libraries each sample uses, named where a developer looks first.
    for (const library of ['OAuth2Session', 'the oauth2 gem', 'openid-client', 'LWP::Authen::OAuth2', 'curl and jq']) expect(text).toContain(library)
  })

  it('uses the host the reader addressed', async () => {
    const text = await (await stack.fetch(`${stack.globalUrl}/developers`)).text()
    expect(text).toContain(`export KIGO=${stack.globalUrl} `)
  })
})

describe('/migration with a live policy', () => {
  it('shows each method\'s state, sunset, scheduled change and brownout windows, and links to the guide', async () => {
    const put = await stack.admin('PUT', '/admin/policy', {
      basic: { state: 'brownout', windows: [{ start: '09:00', end: '12:00' }], sunset: '2031-06-30T00:00:00Z', schedule: [{ state: 'deny', from: '2031-07-01T00:00:00Z' }] },
      wsse: { state: 'deprecate', sunset: '2031-03-31T00:00:00Z' },
    })
    expect(put.status).toBe(200)
    const res = await stack.fetch(`${stack.url}/migration`)
    expect(res.status).toBe(200)
    const text = await res.text()
    const basic = /<section class="card policy" id="policy-basic" data-state="brownout">[\s\S]*?<\/section>/.exec(text)?.[0]
    expect(basic).toBeDefined()
    expect(basic).toContain('<strong class="state">brownout</strong>')
    // The scheduled deny is the sunset (the announced 30 June is not when it stops working).
    expect(basic).toMatch(/<dt>Sunset<\/dt><dd><time datetime="2031-07-01T00:00:00Z" data-local="datetime">2031-07-01 00:00 UTC<\/time>/)
    // (The real clock decides whether a window is open now.)
    expect(basic).toMatch(/<p class="outlook">(Works, except every day 09:00–12:00 UTC \(brownouts\)|Refused now, until 12:00 UTC \(a brownout\); refused every day 09:00–12:00 UTC, working otherwise)\. It stops working on <span class="date">2031-07-01 00:00 UTC<\/span>\.<\/p>/)
    expect(basic).toMatch(/<strong>deny<\/strong> from <time datetime="2031-07-01T00:00:00Z"/)
    expect(basic).toMatch(/data-local="time">09:00<\/time>–<time [^>]*data-local="time">12:00<\/time> UTC every day/)
    expect(text).toMatch(/id="policy-wsse" data-state="deprecate"/)
    expect(text).toContain('href="/developers"')
    // The local-time script runs by its nonce alone.
    const csp = res.headers.get('content-security-policy')!
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)![1]!
    expect(text).toContain(`<script nonce="${nonce}">`)
    expect(csp).toContain("default-src 'none'")
  })
})
