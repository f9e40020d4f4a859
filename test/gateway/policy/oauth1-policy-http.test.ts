// OAuth 1.0a under the migration policy through a whole kigo (docs/gateway.md#oauth-10a-as-a-legacy-method):
// `oauth1` in PUT /admin/policy governs verified OAuth 1.0a requests (counted as method
// oauth), with the deprecation headers, the refusal in the request's format pointing to
// OAuth 2.0, exceptions by application, and its state in kigo_policy_state; "oauth" and an
// application on another method are refused with a message.
import { afterAll, beforeAll, expect, it } from 'vitest'
import { main } from '../../../src/cli/kigo.js'
import { startStack, type Stack } from '../../helpers/stack.js'
import { basicHeader, form, oauthHeader, type OAuthClient } from './signers.js'

let clock = Date.parse('2027-02-01T08:00:00Z')
let stack: Stack
let alice: { api_password: string }
let mine: OAuthClient
let other: OAuthClient

beforeAll(async () => {
  stack = await startStack({ now: () => clock })
  alice = await stack.addUser('alice', 'Alice')
  mine = await stack.addOAuthClient('alice', ['write_public'])
  other = await stack.addOAuthClient('alice', ['write_public'])
})

afterAll(async () => {
  await stack?.close()
})

const post = async (headers: Record<string, string>) => {
  const res = await fetch(`${stack.url}/api/statuses/update.json`, { method: 'POST', headers: { ...form, ...headers }, body: new URLSearchParams({ status: 'hello' }) })
  return { status: res.status, deprecation: res.headers.get('deprecation'), sunset: res.headers.get('sunset'), body: await res.text() }
}
const viaOAuth = (client: OAuthClient) => post(oauthHeader(client, { url: `${stack.url}/api/statuses/update.json`, method: 'POST', data: { status: 'hello' } }, clock))
const viaBasic = () => post(basicHeader('alice', alice.api_password))
const metric = async (line: RegExp) => line.test(await (await fetch(`${stack.adminUrl}/metrics`)).text())

it('oauth1 is allow by default, and its state is a metric', async () => {
  expect((await viaOAuth(mine)).deprecation).toBeNull()
  const r = await stack.admin<{ oauth1: { state: string; effective: { state: string } } }>('GET', '/admin/policy')
  expect(r.body.oauth1).toMatchObject({ state: 'allow', effective: { state: 'allow' } })
  expect(await metric(/^kigo_policy_state\{method="oauth1",state="allow"\} 1$/m)).toBe(true)
})

it('refuses "oauth", an application on another method and registration closed on another method, changing nothing', async () => {
  const bad: Array<[unknown, RegExp]> = [
    [{ oauth: { state: 'deny' } }, /"oauth1"/],
    [{ basic: { state: 'deny', exceptions: [{ application: mine.consumerKey, until: '2027-06-01T00:00:00Z' }] } }, /only oauth1 exceptions name an application/],
    [{ wsse: { state: 'allow', registration_closed: true } }, /only oauth1 closes registrations/],
    [{ oauth1: { state: 'deny', exceptions: [{ client: 'Poster/1.0', until: '2027-06-01T00:00:00Z' }] } }, /or an "application"/],
  ]
  for (const [body, message] of bad) {
    const r = await stack.admin<{ error: { code: string; message: string } }>('PUT', '/admin/policy', body)
    expect(r.status, JSON.stringify(body)).toBe(400)
    expect(r.body.error.message).toMatch(message)
  }
  expect((await stack.admin<{ oauth1: { state: string } }>('GET', '/admin/policy')).body.oauth1.state).toBe('allow')
})

it('deprecate: OAuth 1.0a requests carry Deprecation and Sunset; Basic untouched', async () => {
  const r = await stack.admin('PUT', '/admin/policy', { oauth1: { state: 'deprecate', sunset: '2027-06-30T00:00:00Z' } })
  expect(r.status).toBe(200)
  clock += 60_000
  const res = await viaOAuth(mine)
  expect(res.status).toBe(200)
  expect(res.deprecation).toBe(`@${Date.parse('2027-02-01T08:00:00Z') / 1000}`)
  expect(res.sunset).toBe('Wed, 30 Jun 2027 00:00:00 GMT')
  expect((await viaBasic()).deprecation).toBeNull()
})

it('deny: refused with 403 method_retired pointing to OAuth 2.0, except the application excepted', async () => {
  const r = await stack.admin('PUT', '/admin/policy', { oauth1: { state: 'deny', exceptions: [{ application: mine.consumerKey, until: '2027-03-01T00:00:00Z' }] } })
  expect(r.status).toBe(200)
  clock += 60_000
  const refused = await viaOAuth(other)
  expect(refused.status).toBe(403)
  expect(JSON.parse(refused.body).error).toMatchObject({ code: 'method_retired', message: expect.stringContaining('OAuth 1.0a has been retired; use OAuth 2.0') })
  const excepted = await viaOAuth(mine)
  expect(excepted.status).toBe(200)
  // The exception's end is this application's sunset.
  expect(excepted.sunset).toBe('Mon, 01 Mar 2027 00:00:00 GMT')
  expect((await viaBasic()).status).toBe(200)
  expect(await metric(/^kigo_policy_state\{method="oauth1",state="deny"\} 1$/m)).toBe(true)
  expect(await metric(/^kigo_auth_requests_total\{method="oauth",outcome="policy_denied",route="statuses\/update"\} 1$/m)).toBe(true)
  // After the exception's end, refused too.
  clock = Date.parse('2027-03-02T00:00:00Z')
  expect((await viaOAuth(mine)).status).toBe(403)
})

it('kigo policy set oauth1 --except-app adds an application exception; --except-app and --close-registration are for oauth1 only', async () => {
  const kigo = async (...args: string[]) => {
    let stdout = ''
    let stderr = ''
    const code = await main(args, { KIGO_ADMIN_URL: stack.adminUrl, KIGO_ADMIN_TOKEN: stack.config.adminToken }, { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) } })
    return { code, stdout, stderr }
  }
  const set = await kigo('policy', 'set', 'oauth1', 'deny', '--except-app', other.consumerKey, '--until', '2027-04-01T00:00:00Z', '--close-registration')
  expect(set.stderr).toBe('')
  expect(set.code).toBe(0)
  expect(set.stdout).toContain(`exception application ${other.consumerKey} (every user's token) until 2027-04-01T00:00:00Z`)
  expect(set.stdout).toContain('registration of new applications closed')
  expect((await viaOAuth(other)).status).toBe(200)
  expect(await kigo('policy', 'set', 'basic', 'deny', '--except-app', other.consumerKey, '--until', '2027-04-01T00:00:00Z')).toMatchObject({ code: 2, stderr: expect.stringContaining('only for oauth1') })
  expect(await kigo('policy', 'set', 'wsse', 'deprecate', '--close-registration')).toMatchObject({ code: 2, stderr: expect.stringContaining('are for oauth1') })
  expect((await stack.admin<{ wsse: { state: string } }>('GET', '/admin/policy')).body.wsse.state).toBe('allow')
})
