// `kigo apps add … --oauth2` and `kigo apps oauth2 KEY` (docs/oauth2.md#for-an-oauth-10a-application)
// run in-process against a started gateway's operator API: what they print, and that the
// client they make exchanges the application's OAuth 1.0a tokens.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cliOf } from '../../helpers/cli.js'
import { startStack, type Stack } from '../../helpers/stack.js'
import { issueOAuth1Token, registerExchangeApp, signedExchangeBody, tokenPost } from './helpers.js'

let stack: Stack

const { kigo: run } = cliOf(() => ({ KIGO_ADMIN_URL: stack.adminUrl, KIGO_ADMIN_TOKEN: stack.config.adminToken }))
const kigo = (args: string[]) => run(...args)

beforeAll(async () => {
  stack = await startStack()
  await stack.addUser('alice', 'Alice')
})

afterAll(async () => {
  await stack?.close()
})

describe('kigo apps … --oauth2', () => {
  it('apps add --oauth2 prints consumer_key, consumer_secret, client_id and client_secret; --public has no client_secret', async () => {
    const r = await kigo(['apps', 'add', 'Glass', '--owner', 'alice', '--scopes', 'read_public,write_public', '--oauth2', '--redirect-uri', 'https://glass.example/cb', '--json'])
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    const out = JSON.parse(r.stdout) as Record<string, unknown>
    expect(Object.keys(out).slice(0, 4)).toEqual(['consumer_key', 'consumer_secret', 'client_id', 'client_secret'])
    expect(out).toMatchObject({ name: 'Glass', owner: 'alice', scopes: ['read_public', 'write_public'], type: 'confidential', redirect_uris: ['https://glass.example/cb'] })
    const client = await stack.admin<Record<string, unknown>>('GET', `/admin/oidc-clients/${out.client_id as string}`)
    expect(client.body).toMatchObject({ name: 'Glass', api_scopes: ['read_public', 'write_public'] })

    const pub = await kigo(['apps', 'add', 'Phone', '--owner', 'alice', '--scopes', 'read_public', '--oauth2', '--redirect-uri', 'http://127.0.0.1:8765/cb', '--public', '--json'])
    expect(pub.code).toBe(0)
    const p = JSON.parse(pub.stdout) as Record<string, unknown>
    expect(p).toMatchObject({ type: 'public' })
    expect(p).not.toHaveProperty('client_secret')
    expect(typeof p.consumer_secret).toBe('string')
  })

  it('readable output, and all or nothing: a refused redirect URI leaves no application behind', async () => {
    const r = await kigo(['apps', 'add', 'Readable', '--owner', 'alice', '--scopes', 'read_public', '--oauth2', '--redirect-uri', 'https://readable.example/cb'])
    expect(r.code).toBe(0)
    expect(r.stdout.split('\n').slice(0, 4).map((l) => l.split(/\s+/)[0])).toEqual(['consumer_key', 'consumer_secret', 'client_id', 'client_secret'])
    const before = (await stack.admin<{ apps: unknown[] }>('GET', '/admin/apps?owner=alice')).body.apps.length
    const bad = await kigo(['apps', 'add', 'Bad', '--owner', 'alice', '--scopes', 'read_public', '--oauth2', '--redirect-uri', 'javascript:alert(1)'])
    expect(bad.code).toBe(1)
    expect(bad.stdout).toBe('')
    expect(bad.stderr).toMatch(/invalid_redirect_uri/)
    expect((await stack.admin<{ apps: unknown[] }>('GET', '/admin/apps?owner=alice')).body.apps.length).toBe(before)
    const misuse = await kigo(['apps', 'add', 'X', '--owner', 'alice', '--scopes', 'read_public', '--public'])
    expect(misuse.code).toBe(2)
  })

  it('apps oauth2 KEY --redirect-uri turns OAuth 2.0 on for an existing application, once', async () => {
    const a = await stack.admin<{ consumer_key: string }>('POST', '/admin/apps', { name: 'Existing', owner: 'alice', scopes: ['read_public'] })
    const r = await kigo(['apps', 'oauth2', a.body.consumer_key, '--redirect-uri', 'https://existing.example/cb', '--json'])
    expect(r.stderr).toBe('')
    const out = JSON.parse(r.stdout) as Record<string, unknown>
    expect(out).toMatchObject({ consumer_key: a.body.consumer_key, name: 'Existing', scopes: ['read_public'], client_id: expect.any(String), client_secret: expect.any(String), redirect_uris: ['https://existing.example/cb'] })
    const again = await kigo(['apps', 'oauth2', a.body.consumer_key, '--redirect-uri', 'https://existing.example/cb'])
    expect(again.code).toBe(1)
    expect(again.stderr).toMatch(/409 conflict/)
    expect((await kigo(['apps', 'oauth2', a.body.consumer_key])).code).toBe(2)
  })
})

describe('kigo tokens introspect', () => {
  it('prints an access token as the gateway sees it, and why one is not active', async () => {
    const app = await registerExchangeApp(stack, 'Introspected', 'alice', ['read_public'])
    const endpoint = `${stack.url}/oidc/token`
    const exchanged = await tokenPost(endpoint, app, signedExchangeBody(endpoint, app, await issueOAuth1Token(stack, app, 'alice', ['read_public'])))
    const live = await kigo(['tokens', 'introspect', exchanged.body.access_token as string, '--json'])
    expect(live.code).toBe(0)
    expect(JSON.parse(live.stdout)).toMatchObject({ active: true, sub: 'alice', client_id: app.clientId, scope: 'read_public' })
    const unknown = await kigo(['tokens', 'introspect', 'not-a-token'])
    expect(unknown.code).toBe(0)
    expect(unknown.stdout).toMatch(/^active\s+false$/m)
    expect(unknown.stdout).toMatch(/^reason\s+unknown$/m)
    expect((await kigo(['tokens', 'introspect'])).code).toBe(2)
  })
})
