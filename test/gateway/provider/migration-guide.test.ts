// The default migration guide: the URL the deprecation Link points at answers with a page.
import { afterAll, beforeAll, expect, it } from 'vitest'
import { gatewayApp, type GatewayApp } from '../../helpers/gateway-app.js'

let stack: GatewayApp
beforeAll(async () => {
  stack = await gatewayApp()
})
afterAll(async () => {
  await stack?.close()
})

it('serves the guide the policy links to by default', async () => {
  expect(stack.config.migration.guideUrl).toBe(`${stack.url}/migration`)
  const res = await stack.fetch(stack.config.migration.guideUrl)
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toMatch(/^text\/html/)
  const text = await res.text()
  expect(text).toContain('<h1>Moving off WSSE, Basic and the login API</h1>')
  expect(text).toContain(`${stack.url}/oauth/initiate`)
  // The login API's route is there too: to OpenID Connect, by its discovery document.
  expect(text).toContain('What to do: a site that signs people in with the login API')
  expect(text).toContain(`${stack.url}/.well-known/openid-configuration`)
})

it('writes every date on the page in one format, the policy summary\'s', async () => {
  const set = await stack.admin<any>('PUT', '/admin/policy', {
    basic: { state: 'deprecate', sunset: '2027-06-30T00:00:00Z', schedule: [{ state: 'deny', from: '2027-07-01T00:00:00Z' }] },
  })
  expect(set.status).toBe(200)
  const text = await (await stack.fetch(`${stack.url}/migration`)).text()
  const section = text.slice(text.indexOf('id="policy-basic"'), text.indexOf('</section>', text.indexOf('id="policy-basic"')))
  expect(section).toContain('2027-07-01 00:00 UTC')
  // No second spelling of a date ("1 Jul 2027, 00:00 UTC") beside the summary's.
  expect(section).not.toMatch(/\b\d{1,2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4}/)
  const shown = [...section.matchAll(/<time datetime="[^"]+"[^>]*>([^<]+)<\/time>/g)].map((m) => m[1])
  expect(shown.length).toBeGreaterThan(0)
  for (const t of shown) expect(t).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/)
})

it('offers OAuth 2.0: the device flow for a Basic or WSSE tool, and for an OAuth 1.0a application the token exchange the token endpoint takes', async () => {
  const text = await (await stack.fetch(`${stack.url}/migration`)).text()
  const card = text.slice(text.indexOf('<div class="card" id="oauth2">'), text.indexOf('<div class="card" id="login-api">'))
  expect(card).toContain('<h2>Or OAuth 2.0</h2>')
  expect(card).toContain('href="/developers#oauth2"')
  // A tool on Basic or WSSE: the device flow, at this deployment's addresses.
  const device = card.slice(card.indexOf('id="oauth2-basic-wsse"'), card.indexOf('id="oauth2-exchange"'))
  expect(device).toContain(`<code>${stack.url}/oidc/device/auth</code>`)
  expect(device).toContain(`<code>${stack.url}/device</code>`)
  expect(device).toContain(`<code>${stack.url}/oidc/token</code>`)
  expect(device).toContain('href="/developers#oauth2-device"')
  expect(device).toContain('<code>Authorization: Bearer</code>')
  // The device flow the page describes is what the authorization server publishes.
  const meta = (await (await stack.fetch(`${stack.url}/.well-known/oauth-authorization-server`)).json()) as { device_authorization_endpoint: string; token_endpoint: string; grant_types_supported: string[] }
  expect(meta.device_authorization_endpoint).toBe(`${stack.url}/oidc/device/auth`)
  expect(meta.token_endpoint).toBe(`${stack.url}/oidc/token`)
  // An OAuth 1.0a application: the exchange's request, which the token endpoint takes.
  const exchange = card.slice(card.indexOf('id="oauth2-exchange"'))
  expect(exchange).toContain('grant_type=urn:ietf:params:oauth:grant-type:token-exchange')
  expect(exchange).toContain('subject_token_type=urn:kigo:params:oauth:token-type:oauth1-access-token')
  expect(meta.grant_types_supported).toContain('urn:ietf:params:oauth:grant-type:token-exchange')
  expect(exchange).toContain('Turn on OAuth 2.0')
  expect(exchange).not.toMatch(/not offered/i)
})
