// Relying parties and signing keys through the `kigo` command line against a running
// gateway (docs/oidc.md#by-the-operator): add (confidential and public), list, show,
// rotate-secret, delete, rotate-key; secrets shown once and stored encrypted; every
// change audited; bad input refused with a clear error and nothing created.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main } from '../../../src/cli/kigo.js'
import { openDb } from '../../../src/common/sql.js'
import { startStack, type Stack } from '../../helpers/stack.js'
import { browse, discover, oidc, startSignIn } from './helpers.js'

let stack: Stack
let alice: { id: string; password: string }

beforeAll(async () => {
  stack = await startStack()
  alice = await stack.addUser('alice', 'Alice')
})

afterAll(async () => {
  await stack?.close()
})

async function kigo(args: string[]) {
  let stdout = ''
  let stderr = ''
  const code = await main(args, { KIGO_ADMIN_URL: stack.adminUrl, KIGO_ADMIN_TOKEN: stack.config.adminToken }, {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
  })
  return { code, stdout, stderr }
}

async function kigoJson(args: string[]) {
  const r = await kigo([...args, '--json'])
  expect(r.stderr).toBe('')
  expect(r.code).toBe(0)
  return JSON.parse(r.stdout)
}

async function clientCount(): Promise<number> {
  return ((await kigoJson(['oidc-clients', 'list'])) as { clients: unknown[] }).clients.length
}

describe('kigo oidc-clients', () => {
  it('adds a confidential client: client_id and client_secret printed once, the secret encrypted at rest, and the client works', async () => {
    const added = await kigoJson(['oidc-clients', 'add', 'Tea Party', '--owner', 'alice', '--redirect-uri', 'https://tea.example/cb'])
    expect(added).toMatchObject({ client_id: expect.any(String), client_secret: expect.any(String), name: 'Tea Party', owner: 'alice', type: 'confidential', redirect_uris: ['https://tea.example/cb'] })
    const shown = await kigoJson(['oidc-clients', 'show', added.client_id])
    expect(shown).not.toHaveProperty('client_secret')
    expect(JSON.stringify(await kigoJson(['oidc-clients', 'list']))).not.toContain(added.client_secret)
    // At rest: not in plain text anywhere in the row.
    const db = await openDb({ dataDir: stack.config.dataDir })
    const rows = await db.query<Record<string, unknown>>('SELECT * FROM kigo_gateway.oidc_clients WHERE client_id = $1', [added.client_id])
    expect(JSON.stringify(rows)).not.toContain(added.client_secret)
    const keys = await db.query<{ jwk: string }>('SELECT jwk FROM kigo_gateway.oidc_keys')
    expect(keys.length).toBeGreaterThan(0)
    for (const k of keys) expect(k.jwk).toMatch(/^v1\./)
    await db.close()

    const config = await discover(stack.url, added)
    const s = await startSignIn(config, 'https://tea.example/cb')
    const { callback } = await browse(s.url, 'https://tea.example/cb', alice)
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: s.verifier, expectedState: s.state, expectedNonce: s.nonce })
    expect(tokens.claims()!.sub).toBe('alice')

    // A rotated secret without overlap: the old one is refused at the token endpoint, the new one works.
    const rotated = await kigoJson(['oidc-clients', 'rotate-secret', added.client_id, '--overlap', '0'])
    expect(rotated.client_secret).not.toBe(added.client_secret)
    const s2 = await startSignIn(config, 'https://tea.example/cb')
    const { callback: cb2 } = await browse(s2.url, 'https://tea.example/cb', alice)
    const old = await oidc.authorizationCodeGrant(config, cb2, { pkceCodeVerifier: s2.verifier, expectedState: s2.state, expectedNonce: s2.nonce }).catch((e: unknown) => e)
    expect(old).toBeInstanceOf(oidc.WWWAuthenticateChallengeError)
    expect((old as oidc.WWWAuthenticateChallengeError).status).toBe(401)
    expect((old as oidc.WWWAuthenticateChallengeError).cause[0]!.parameters.error).toBe('invalid_client')
    const fresh = await discover(stack.url, { ...added, client_secret: rotated.client_secret })
    const ok = await oidc.authorizationCodeGrant(fresh, cb2, { pkceCodeVerifier: s2.verifier, expectedState: s2.state, expectedNonce: s2.nonce })
    expect(ok.claims()!.sub).toBe('alice')

    // Deleted: its tokens stop working and the authorization endpoint no longer knows it.
    const deleted = await kigoJson(['oidc-clients', 'delete', added.client_id])
    expect(deleted).toMatchObject({ deleted: true, client_id: added.client_id })
    const after = await oidc.fetchUserInfo(fresh, ok.access_token, 'alice').catch((e: unknown) => e)
    expect(after).toBeInstanceOf(oidc.WWWAuthenticateChallengeError)
    const s3 = await startSignIn(fresh, 'https://tea.example/cb')
    const page = await fetch(s3.url, { redirect: 'manual' })
    expect(page.status).toBe(400)
    expect(page.headers.get('location')).toBeNull()

    const audit = await stack.admin<{ events: Array<{ action: string; target: string; after: unknown }> }>('GET', '/admin/audit?kind=oidc')
    expect(audit.status).toBe(200)
    const actions = audit.body.events.filter((e) => e.target === added.client_id).map((e) => e.action)
    expect(actions.sort()).toEqual(['oidc_client.create', 'oidc_client.delete', 'oidc_client.rotate_secret'])
    expect(JSON.stringify(audit.body)).not.toContain(added.client_secret)
    expect(JSON.stringify(audit.body)).not.toContain(rotated.client_secret)
  })

  it('adds a public client: no secret; PKCE alone signs in', async () => {
    const added = await kigoJson(['oidc-clients', 'add', 'Phone app', '--owner', 'alice', '--redirect-uri', 'http://127.0.0.1:8765/cb', '--public'])
    expect(added.type).toBe('public')
    expect(added).not.toHaveProperty('client_secret')
    const rotate = await kigo(['oidc-clients', 'rotate-secret', added.client_id])
    expect(rotate.code).not.toBe(0)
    expect(rotate.stderr).toMatch(/public client/)
    const config = await discover(stack.url, added)
    const s = await startSignIn(config, 'http://127.0.0.1:8765/cb')
    const { callback } = await browse(s.url, 'http://127.0.0.1:8765/cb', alice)
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: s.verifier, expectedState: s.state, expectedNonce: s.nonce })
    expect(tokens.claims()!.sub).toBe('alice')
    const readable = await kigo(['oidc-clients', 'list'])
    expect(readable.stdout).toMatch(/^CLIENT_ID\s+NAME\s+OWNER\s+TYPE/)
    expect(readable.stdout).toContain('Phone app')
  })

  it('refuses bad input with a clear error and creates nothing', async () => {
    const before = await clientCount()
    for (const [args, message] of [
      [['--owner', 'nobody', '--redirect-uri', 'https://x.example/cb'], /No user "nobody"/],
      [['--owner', 'alice', '--redirect-uri', 'not a url'], /redirect_uri must be an absolute http or https URL/],
      [['--owner', 'alice', '--redirect-uri', 'https://x.example/cb#frag'], /must not have a fragment/],
      [['--owner', 'alice', '--redirect-uri', 'javascript:alert(1)'], /must use http or https/],
      [['--owner', 'alice', '--redirect-uri', 'https://u:p@x.example/cb'], /must not carry credentials/],
    ] as const) {
      const r = await kigo(['oidc-clients', 'add', 'Bad', ...args])
      expect(r.code, args.join(' ')).not.toBe(0)
      expect(r.stdout).toBe('')
      expect(r.stderr).toMatch(message)
    }
    const raw = await stack.admin('POST', '/admin/oidc-clients', { name: 'x', owner: 'alice', redirect_uris: 'https://x.example/cb' })
    expect(raw.status).toBe(400)
    const extra = await stack.admin('POST', '/admin/oidc-clients', { name: 'x', owner: 'alice', redirect_uris: ['https://x.example/cb'], grant_types: ['implicit'] })
    expect(extra.status).toBe(400)
    expect(await clientCount()).toBe(before)
    const unknown = await kigo(['oidc-clients', 'show', 'no-such-client'])
    expect(unknown.code).not.toBe(0)
    expect(unknown.stderr).toMatch(/No OpenID Connect client/)
  })
})

describe('the operator API\'s error answers for OpenID Connect clients', () => {
  it('are catalogue codes (docs/api.md#errors), in the operator API\'s JSON, and change nothing', async () => {
    const before = await clientCount()
    const error = (status: number, code: string, message: RegExp) => ({ status, body: { error: { status, code, message: expect.stringMatching(message) } } })
    const uris = { name: 'x', owner: 'alice', redirect_uris: ['https://x.example/cb'] }
    expect(await stack.admin('POST', '/admin/oidc-clients', [uris])).toEqual(error(400, 'invalid_parameter', /must be a JSON object/))
    expect(await stack.admin('POST', '/admin/oidc-clients', { ...uris, grant_types: ['implicit'] })).toEqual(error(400, 'invalid_parameter', /unknown field "grant_types"/))
    expect(await stack.admin('POST', '/admin/oidc-clients', { ...uris, owner: 'no one' })).toEqual(error(400, 'invalid_parameter', /"owner" must be a user ID/))
    expect(await stack.admin('POST', '/admin/oidc-clients', { ...uris, redirect_uris: 'https://x.example/cb' })).toEqual(error(400, 'invalid_parameter', /"redirect_uris" must be an array/))
    expect(await stack.admin('POST', '/admin/oidc-clients', { ...uris, redirect_uris: ['https://x.example/cb#frag'] })).toEqual(error(400, 'invalid_redirect_uri', /fragment/))
    expect(await stack.admin('GET', '/admin/oidc-clients?owner=no%20one')).toEqual(error(400, 'invalid_parameter', /^Invalid query: "owner" must be a user ID: /))
    expect(await stack.admin('POST', '/admin/oidc-clients', { ...uris, public: 'yes' })).toEqual(error(400, 'invalid_parameter', /"public" must be a boolean/))
    expect(await stack.admin('POST', '/admin/oidc-clients', { ...uris, api_scopes: 'read' })).toEqual(error(400, 'invalid_parameter', /"api_scopes" must be an array/))
    expect(await stack.admin('POST', '/admin/oidc-clients', { owner: 'alice', redirect_uris: ['https://x.example/cb'] })).toEqual(error(400, 'invalid_parameter', /"name" is required/))
    expect(await stack.admin('PATCH', '/admin/oidc-clients/no-such-client', {})).toEqual(error(400, 'invalid_parameter', /must give name, redirect_uris or post_logout_redirect_uris/))
    expect(await stack.admin('PATCH', '/admin/oidc-clients/no-such-client', { public: true })).toEqual(error(400, 'invalid_parameter', /unknown field "public"/))
    expect(await stack.admin('PATCH', '/admin/oidc-clients/no-such-client', { name: 5 })).toEqual(error(400, 'invalid_parameter', /"name" must be a string/))
    expect(await stack.admin('GET', '/admin/oidc-clients/no-such-client')).toEqual(error(404, 'client_not_found', /No OpenID Connect client/))
    expect(await stack.admin('POST', '/admin/oidc-clients/no-such-client/rotate-secret')).toEqual(error(404, 'client_not_found', /No OpenID Connect client/))
    expect(await stack.admin('DELETE', '/admin/oidc-clients/no-such-client')).toEqual(error(404, 'client_not_found', /No OpenID Connect client/))
    const phone = await kigoJson(['oidc-clients', 'add', 'Phone', '--owner', 'alice', '--redirect-uri', 'http://127.0.0.1:8765/cb', '--public'])
    expect(await stack.admin('POST', `/admin/oidc-clients/${phone.client_id}/rotate-secret`)).toEqual(error(409, 'conflict', /public client: it has no secret/))
    expect(await clientCount()).toBe(before + 1)
  })
})

describe('kigo oidc rotate-key', () => {
  it('publishes the new key first and keeps the old one, and is audited', async () => {
    const before = (await (await fetch(`${stack.url}/oidc/jwks`)).json()) as { keys: Array<{ kid: string }> }
    const rotated = await kigoJson(['oidc', 'rotate-key'])
    expect(rotated.retired).toEqual(before.keys.filter((_, i) => i === 0).map((k) => k.kid))
    const after = (await (await fetch(`${stack.url}/oidc/jwks`)).json()) as { keys: Array<{ kid: string }> }
    expect(after.keys[0]!.kid).toBe(rotated.kid)
    expect(after.keys.map((k) => k.kid)).toEqual(expect.arrayContaining(before.keys.map((k) => k.kid)))
    const audit = await stack.admin<{ events: Array<{ action: string; target: string }> }>('GET', '/admin/audit?kind=oidc')
    expect(audit.body.events.some((e) => e.action === 'oidc_key.rotate' && e.target === rotated.kid)).toBe(true)
  })
})
