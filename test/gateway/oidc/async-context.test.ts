// A gateway that has served OpenID Connect must not make every later request pay for the
// provider's request context. On Node 20, an AsyncLocalStorage that has run once keeps
// async hooks on for the whole process, and every promise of every later request is then
// tracked (given an async ID of its own); the gateway switches the library's storage off
// whenever no provider request is in flight (src/gateway/oidc/library.ts). On Node 24 the
// storage is built on the async context frame and tracks no promise in any case.
import { executionAsyncId } from 'node:async_hooks'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { startStack, type Stack } from '../../helpers/stack.js'
import { browse, discover, oidc, registerClient, startSignIn } from './helpers.js'

let stack: Stack
const redirectUri = 'https://site.example/callback'

/** The async ID a promise continuation runs in: 0 unless async hooks track promises. */
const continuationId = async () => {
  await Promise.resolve()
  return executionAsyncId()
}

beforeAll(async () => {
  stack = await startStack()
})

afterAll(async () => {
  await stack?.close()
})

it('leaves no async hook tracking promises after discovery and a whole sign-in', async () => {
  expect(await continuationId(), 'async hooks were on before the provider served anything').toBe(0)
  const alice = await stack.addUser('alice', 'Alice Liddell')
  const site = await registerClient(stack, { name: 'Tea Party', owner: 'alice', redirect_uris: [redirectUri] })
  const config = await discover(stack.url, site)
  const started = await startSignIn(config, redirectUri)
  const { callback } = await browse(started.url, redirectUri, alice)
  const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: started.verifier, expectedState: started.state, expectedNonce: started.nonce })
  expect(tokens.id_token).toBeTruthy()
  // An ordinary request after the provider's.
  const show = await fetch(`${stack.url}/api/statuses/public_timeline.json`)
  expect(show.status).toBe(200)
  expect(await continuationId()).toBe(0)
})
