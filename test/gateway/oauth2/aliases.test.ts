// OAuth 2.0 on a deployment's aliases (docs/oauth2.md#endpoints, docs/gateway.md#deployments):
// an access token is for one deployment's issuer, its main URL. Issued on the main host, it
// is taken on the deployment's alias, and refused (401 invalid_token, nothing forwarded) on
// the other deployment's host and alias. The metadata and the token endpoint reached through
// an alias name and issue for the same issuer; the token exchange through an alias is signed
// for the URL the client used, as any OAuth 1.0a request on an alias is.
import { decodeJwt } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../../helpers/stack.js'
import { bearer, issueOAuth1Token, rawRequest, registerExchangeApp, signedExchangeBody, tokenPost, type ExchangeApp } from './helpers.js'

const domesticAlias = 'api.kigo.test'
const globalAlias = 'global.kigo.test'
const timeline = '/api/statuses/user_timeline.json'

let stack: Stack
let main: string
let app: ExchangeApp

beforeAll(async () => {
  stack = await startStack({ overrides: { domesticHostAliases: [domesticAlias], globalHostAliases: [globalAlias] } })
  main = stack.url
  await stack.addUser('alice', 'Alice')
  await stack.addUser('bobby', 'Bob')
  app = await registerExchangeApp(stack, 'Looking Glass', 'bobby', ['read_public', 'write_public'])
})

afterAll(async () => {
  await stack?.close()
})

/** An access token exchanged at the main host's token endpoint. */
async function exchangedAtMain(): Promise<{ access_token: string; refresh_token: string }> {
  const endpoint = `${main}/oidc/token`
  const r = await tokenPost(endpoint, app, signedExchangeBody(endpoint, app, await issueOAuth1Token(stack, app, 'alice', ['read_public', 'write_public'])))
  expect(r.status).toBe(200)
  return r.body as { access_token: string; refresh_token: string }
}

describe('a Bearer token on the deployments\' hosts', () => {
  it('issued on the main host, is taken on the deployment\'s alias', async () => {
    const { access_token: token } = await exchangedAtMain()
    expect(decodeJwt(token).iss).toBe(main)
    const posted = await bearer(main, 'POST', '/api/statuses/update.json', token, { status: 'Posted through the alias' }, domesticAlias)
    expect(posted.status).toBe(200)
    const read = await bearer(main, 'GET', timeline, token, undefined, domesticAlias)
    expect(read.status).toBe(200)
    expect(JSON.stringify(read.body)).toContain('Posted through the alias')
  })

  it('is refused on the other deployment\'s host and alias, 401 invalid_token, and nothing is forwarded', async () => {
    const { access_token: token } = await exchangedAtMain()
    for (const [base, host] of [[stack.globalUrl, undefined], [main, globalAlias]] as const) {
      const text = `Sent to the other deployment at ${host ?? base}`
      const r = await bearer(base, 'POST', '/api/statuses/update.json', token, { status: text }, host)
      expect(r.status, host ?? base).toBe(401)
      expect(r.body).toMatchObject({ error: { code: 'invalid_token' } })
      expect(r.challenge).toContain('error="invalid_token"')
      expect(JSON.stringify((await bearer(main, 'GET', timeline, token)).body)).not.toContain(text)
    }
  })
})

describe('the authorization server through an alias', () => {
  it('publishes the deployment\'s issuer and endpoints in the metadata', async () => {
    for (const [host, issuer] of [[domesticAlias, main], [globalAlias, stack.globalUrl]] as const) {
      const r = await rawRequest(main, 'GET', '/.well-known/oauth-authorization-server', [], undefined, host)
      expect(r.status, host).toBe(200)
      const metadata = JSON.parse(r.text) as { issuer: string; token_endpoint: string }
      expect(metadata, host).toMatchObject({ issuer, token_endpoint: `${issuer}/oidc/token` })
    }
  })

  it('refreshes through the alias for the same issuer: the new token is taken on the main host and the alias', async () => {
    const { refresh_token } = await exchangedAtMain()
    const r = await tokenPost(`${main}/oidc/token`, app, { grant_type: 'refresh_token', refresh_token }, { host: domesticAlias })
    expect(r.status).toBe(200)
    const token = r.body.access_token as string
    expect(decodeJwt(token)).toMatchObject({ iss: main, aud: `${main}/api` })
    expect((await bearer(main, 'GET', timeline, token)).status).toBe(200)
    expect((await bearer(main, 'GET', timeline, token, undefined, domesticAlias)).status).toBe(200)
  })

  it('exchanges an OAuth 1.0a token signed for the alias\'s URL, for the deployment\'s issuer', async () => {
    const aliasEndpoint = `http://${domesticAlias}/oidc/token`
    const stored = await issueOAuth1Token(stack, app, 'alice', ['read_public'])
    const r = await tokenPost(`${main}/oidc/token`, app, signedExchangeBody(aliasEndpoint, app, stored), { host: domesticAlias })
    expect(r.status).toBe(200)
    expect(decodeJwt(r.body.access_token as string)).toMatchObject({ iss: main, aud: `${main}/api`, sub: 'alice', scope: 'read_public' })
    expect((await bearer(main, 'GET', timeline, r.body.access_token as string, undefined, domesticAlias)).status).toBe(200)
    // Signed for the main host's URL but sent to the alias: the signature is not over the request's URL.
    const other = await issueOAuth1Token(stack, app, 'alice', ['read_public'])
    const mismatched = await tokenPost(`${main}/oidc/token`, app, signedExchangeBody(`${main}/oidc/token`, app, other), { host: domesticAlias })
    expect(mismatched.status).toBe(400)
    expect(mismatched.body.error).toBe('invalid_grant')
  })

  it('exchanges at the other deployment for its own issuer, whose token the first deployment refuses', async () => {
    const endpoint = `${stack.globalUrl}/oidc/token`
    const r = await tokenPost(endpoint, app, signedExchangeBody(endpoint, app, await issueOAuth1Token(stack, app, 'alice', ['read_public'])))
    expect(r.status).toBe(200)
    const token = r.body.access_token as string
    expect(decodeJwt(token).iss).toBe(stack.globalUrl)
    expect((await bearer(stack.globalUrl, 'GET', timeline, token)).status).toBe(200)
    expect((await bearer(main, 'GET', timeline, token, undefined, globalAlias)).status).toBe(200)
    expect((await bearer(main, 'GET', timeline, token, undefined, domesticAlias)).status).toBe(401)
  })
})
