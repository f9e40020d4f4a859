// OAuth base strings use the public scheme and host (docs/gateway.md#oauth-10a): behind a trusted proxy
// those come from X-Forwarded-Proto/Host; from anyone else those headers are ignored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { oauth1aClient } from '../helpers/oauth1a.js'
import { request } from 'undici'
import { startStack, type Stack } from '../helpers/stack.js'

const publicHost = 'kigo.example'

async function signedPost(stack: Stack, client: { consumerKey: string; consumerSecret: string; token: string; tokenSecret: string }) {
  const lib = oauth1aClient({ key: client.consumerKey, secret: client.consumerSecret })
  const data = { status: 'behind a proxy' }
  // The client signs the URL it addressed: https on the public host.
  const auth = lib.toHeader(lib.authorize({ url: `https://${publicHost}/api/statuses/update.json`, method: 'POST', data }, { key: client.token, secret: client.tokenSecret }))
  const res = await request(`${stack.globalUrl}/api/statuses/update.json`, {
    method: 'POST',
    headers: {
      host: new URL(stack.globalUrl).host,
      'x-forwarded-proto': 'https',
      'x-forwarded-host': publicHost,
      'x-forwarded-for': '198.51.100.9',
      authorization: auth.Authorization,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams(data).toString(),
  })
  return { status: res.statusCode, body: (await res.body.json()) as Record<string, any> }
}

describe.each([
  ['a trusted proxy', ['127.0.0.1'], 200],
  ['an untrusted client', [], 401],
])('forwarded headers from %s', (_name, trustedProxies, expected) => {
  let stack: Stack
  beforeAll(async () => {
    stack = await startStack({ overrides: { gateway: { host: '127.0.0.1' }, trustedProxies, domesticHost: publicHost } })
    await stack.addUser('gina', 'Gina')
  })
  afterAll(async () => {
    await stack?.close()
  })

  it(`are ${expected === 200 ? 'believed' : 'ignored'} in the signature base string`, async () => {
    const client = await stack.addOAuthClient('gina', ['write_public'])
    const res = await signedPost(stack, client)
    expect(res.status).toBe(expected)
    if (expected === 200) {
      // The entry belongs to the deployment the proxy named; links use KIGO_PUBLIC_SCHEME.
      expect(res.body.link).toMatch(/^http:\/\/kigo\.example\/gina\/[0-9]+$/)
    } else {
      expect(res.body.error.code).toBe('signature_invalid')
    }
  })
})
