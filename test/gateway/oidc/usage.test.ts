// The usage report counts OpenID Connect sign-ins (method "oidc") by user and site name,
// and a legacy row of the same user and client name reads as moved once the site signs
// its visitors in with OpenID Connect (docs/oidc.md#metrics-and-usage).
import { afterAll, beforeAll, expect, it } from 'vitest'
import { startStack, type Stack } from '../../helpers/stack.js'
import { browse, discover, oidc, registerClient, startSignIn } from './helpers.js'

let stack: Stack
let alice: { id: string; password: string; api_password: string }

beforeAll(async () => {
  stack = await startStack()
  alice = await stack.addUser('alice', 'Alice')
})

afterAll(async () => {
  await stack?.close()
})

interface Row { method: string; user: string; client: string; accepted: number; moved: boolean | null }
const records = async () => (await stack.admin<{ records: Row[] }>('GET', '/admin/usage')).body.records

it('counts the sign-in under the site name and shows the Basic client of the same name as moved', async () => {
  // The site's server used Basic with source=Tea Party before.
  const basic = await fetch(`${stack.url}/api/statuses/update.json`, {
    method: 'POST',
    headers: { authorization: 'Basic ' + Buffer.from(`alice:${alice.api_password}`).toString('base64'), 'content-type': 'application/x-www-form-urlencoded' },
    body: 'status=tea%3Dtime&source=Tea%20Party',
  })
  expect(basic.status).toBe(200)
  await basic.text()
  const before = (await records()).find((r) => r.method === 'basic' && r.client === 'Tea Party')
  expect(before).toMatchObject({ user: 'alice', moved: false })

  await new Promise((r) => setTimeout(r, 1100)) // the sign-in is later than the last Basic use
  const site = await registerClient(stack, { name: 'Tea Party', owner: 'alice', redirect_uris: ['https://tea.example/cb'] })
  const config = await discover(stack.url, site)
  const s = await startSignIn(config, 'https://tea.example/cb')
  const { callback } = await browse(s.url, 'https://tea.example/cb', alice)
  await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: s.verifier, expectedState: s.state, expectedNonce: s.nonce })

  const after = await records()
  expect(after.find((r) => r.method === 'oidc')).toMatchObject({ user: 'alice', client: 'Tea Party', accepted: 1, moved: null })
  expect(after.find((r) => r.method === 'basic' && r.client === 'Tea Party')).toMatchObject({ moved: true })
})
