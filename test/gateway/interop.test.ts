// Independent client libraries sign real requests to a running gateway in front of a
// running core (docs/gateway.md#oauth-10a "Interoperate…"), and legacy clients keep working unchanged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { oauth1aClient } from '../helpers/oauth1a.js'
import { OAuth } from 'oauth'
import wsse from 'wsse'
import { XMLParser } from 'fast-xml-parser'
import { startStack, type Stack } from '../helpers/stack.js'

let stack: Stack
let alice: { id: string; api_password: string }
let writer: { consumerKey: string; consumerSecret: string; token: string; tokenSecret: string }
let reader: { consumerKey: string; consumerSecret: string; token: string; tokenSecret: string }

beforeAll(async () => {
  stack = await startStack()
  alice = await stack.addUser('alice', 'Alice Liddell')
  await stack.addUser('bob', 'Bob')
  writer = await stack.addOAuthClient('alice', ['read_public', 'write_public', 'write_private'])
  reader = await stack.addOAuthClient('alice', ['read_public'])
})

afterAll(async () => {
  await stack?.close()
})

function basic(user: string, password: string): string {
  return 'Basic ' + Buffer.from(`${user}:${password}`).toString('base64')
}

function oauth1a(client: typeof writer, method: 'HMAC-SHA1' | 'HMAC-SHA256' = 'HMAC-SHA1') {
  return {
    lib: oauth1aClient({ key: client.consumerKey, secret: client.consumerSecret }, method),
    token: { key: client.token, secret: client.tokenSecret },
  }
}

async function postForm(url: string, form: Record<string, string>, headers: Record<string, string>) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form).toString(),
  })
  return { status: res.status, headers: res.headers, text: await res.text() }
}

describe('legacy clients', () => {
  it('posts with HTTP Basic and the API password', async () => {
    const res = await postForm(`${stack.url}/api/statuses/update.json`, { status: 'kigo=hello from basic' }, { authorization: basic('alice', alice.api_password) })
    expect(res.status).toBe(200)
    const entry = JSON.parse(res.text)
    expect(entry.user.id).toBe('alice')
    expect(entry.user.name).toBe('Alice Liddell')
    expect(entry.keyword).toBe('kigo')
    expect(entry.text).toBe('kigo=hello from basic')
  })

  it('refuses a wrong Basic password with 401 and the three challenges', async () => {
    const res = await postForm(`${stack.url}/api/statuses/update.json`, { status: 'x' }, { authorization: basic('alice', 'wrong') })
    expect(res.status).toBe(401)
    const challenges = res.headers.get('www-authenticate') ?? ''
    expect(challenges).toContain('Basic realm="kigo", charset="UTF-8"')
    expect(challenges).toContain('WSSE realm="kigo", profile="UsernameToken"')
    expect(challenges).toContain('OAuth realm="kigo"')
    expect(JSON.parse(res.text).error.status).toBe(401)
  })

  it('asks for credentials with every challenge when none are sent', async () => {
    const res = await fetch(`${stack.url}/api/statuses/update.xml`, { method: 'POST', body: new URLSearchParams({ status: 'x' }) })
    expect(res.status).toBe(401)
    expect(res.headers.get('content-type')).toMatch(/^application\/xml/)
    const doc = new XMLParser().parse(await res.text())
    expect(doc.error.status).toBe(401)
    // one WWW-Authenticate per accepted method (fetch joins repeated headers with ", ")
    expect((res.headers.get('www-authenticate') ?? '').match(/(^|, )(OAuth|Basic|WSSE) realm=/g)).toHaveLength(3)
  })

  for (const nonceBase64 of [false, true]) {
    it(`posts with WSSE from the npm wsse client (nonceBase64: ${nonceBase64})`, async () => {
      const token = wsse({ username: 'alice', password: alice.api_password })
      const res = await postForm(`${stack.url}/api/statuses/update.xml`, { status: `wsse ${nonceBase64}` }, {
        'x-wsse': token.getWSSEHeader({ nonceBase64 }),
        authorization: 'WSSE profile="UsernameToken"',
      })
      expect(res.status).toBe(200)
      const doc = new XMLParser().parse(res.text)
      expect(doc.status.user.id).toBe('alice')
      expect(doc.status.text).toBe(`wsse ${nonceBase64}`)
    })
  }

  it('refuses a replayed WSSE token', async () => {
    const header = wsse({ username: 'alice', password: alice.api_password }).getWSSEHeader({ nonceBase64: true })
    const first = await postForm(`${stack.url}/api/statuses/update.json`, { status: 'once' }, { 'x-wsse': header })
    expect(first.status).toBe(200)
    const again = await postForm(`${stack.url}/api/statuses/update.json`, { status: 'twice' }, { 'x-wsse': header })
    expect(again.status).toBe(401)
  })
})

describe('OAuth clients', () => {
  for (const method of ['HMAC-SHA1', 'HMAC-SHA256'] as const) {
    it(`posts with oauth-1.0a (${method}) using the same URL and arguments`, async () => {
      const { lib, token } = oauth1a(writer, method)
      const url = `${stack.url}/api/statuses/update.json`
      const data = { keyword: 'oauth', status: `signed with ${method} + ünïcode & more` }
      const auth = lib.toHeader(lib.authorize({ url, method: 'POST', data }, token))
      const res = await postForm(url, data, { authorization: auth.Authorization })
      expect(res.status).toBe(200)
      const entry = JSON.parse(res.text)
      expect(entry.user.id).toBe('alice')
      expect(entry.text).toBe(`oauth=signed with ${method} + ünïcode & more`)
    })
  }

  it('posts with the npm oauth client (form body signed) and reads with a query-string GET', async () => {
    const oa = new OAuth('', '', writer.consumerKey, writer.consumerSecret, '1.0', null, 'HMAC-SHA1')
    const posted = await new Promise<string>((resolve, reject) =>
      oa.post(`${stack.url}/api/statuses/update.json`, writer.token, writer.tokenSecret, { status: 'from npm oauth' }, 'application/x-www-form-urlencoded', (err, data) =>
        err ? reject(new Error(JSON.stringify(err))) : resolve(String(data))),
    )
    const entry = JSON.parse(posted)
    expect(entry.text).toBe('from npm oauth')
    const shown = await new Promise<string>((resolve, reject) =>
      oa.get(`${stack.url}/api/statuses/show/${entry.id}.json?body_formats=haiku`, writer.token, writer.tokenSecret, (err, data) =>
        err ? reject(new Error(JSON.stringify(err))) : resolve(String(data))),
    )
    expect(JSON.parse(shown).id).toBe(entry.id)
    expect(JSON.parse(shown).haiku_text).toBe('from npm oauth')
  })

  it('signs parameters sent in the query string of a POST too', async () => {
    const { lib, token } = oauth1a(writer)
    const url = `${stack.url}/api/statuses/update.json?keyword=query%20kw&status=in%20the%20query`
    const auth = lib.toHeader(lib.authorize({ url, method: 'POST' }, token))
    const res = await fetch(url, { method: 'POST', headers: { authorization: auth.Authorization } })
    expect(res.status).toBe(200)
    expect((await res.json()).text).toBe('query kw=in the query')
  })

  it('refuses a token without write_public with 403 additional_authorization_required', async () => {
    const { lib, token } = oauth1a(reader)
    const url = `${stack.url}/api/statuses/update.json`
    const data = { status: 'not allowed' }
    const res = await postForm(url, data, { authorization: lib.toHeader(lib.authorize({ url, method: 'POST', data }, token)).Authorization })
    expect(res.status).toBe(403)
    expect(JSON.parse(res.text).error.code).toBe('additional_authorization_required')
  })

  it('refuses a replayed OAuth request with nonce_used', async () => {
    const { lib, token } = oauth1a(writer)
    const url = `${stack.url}/api/statuses/update.json`
    const data = { status: 'replayed' }
    const header = lib.toHeader(lib.authorize({ url, method: 'POST', data }, token)).Authorization
    expect((await postForm(url, data, { authorization: header })).status).toBe(200)
    const again = await postForm(url, data, { authorization: header })
    expect(again.status).toBe(401)
    expect(again.headers.get('www-authenticate')).toContain('oauth_problem="nonce_used"')
    expect(JSON.parse(again.text).error.code).toBe('nonce_used')
  })

  it('refuses a signature made for another deployment host', async () => {
    const { lib, token } = oauth1a(writer)
    const data = { status: 'wrong host' }
    const header = lib.toHeader(lib.authorize({ url: `${stack.globalUrl}/api/statuses/update.json`, method: 'POST', data }, token)).Authorization
    const res = await postForm(`${stack.url}/api/statuses/update.json`, data, { authorization: header })
    expect(res.status).toBe(401)
    expect(JSON.parse(res.text).error.code).toBe('signature_invalid')
  })

  it('refuses a revoked token with token_revoked', async () => {
    const client = await stack.addOAuthClient('bob', ['write_public'])
    expect((await stack.admin('POST', `/admin/tokens/${client.token}/revoke`)).status).toBe(200)
    const { lib, token } = oauth1a(client)
    const url = `${stack.url}/api/statuses/update.json`
    const data = { status: 'revoked' }
    const res = await postForm(url, data, { authorization: lib.toHeader(lib.authorize({ url, method: 'POST', data }, token)).Authorization })
    expect(res.status).toBe(401)
    expect(JSON.parse(res.text).error.code).toBe('token_revoked')
  })
})

describe('identity headers', () => {
  it('never lets a client-sent X-Kigo-User reach the core', async () => {
    const res = await postForm(`${stack.url}/api/statuses/update.json`, { status: 'who am i' }, {
      authorization: basic('alice', alice.api_password),
      'x-kigo-user': 'bob',
      'x-kigo-user-name': 'Mallory',
      'x-kigo-identity-signature': 't=1, v1=' + 'A'.repeat(43),
    })
    expect(res.status).toBe(200)
    expect(JSON.parse(res.text).user.id).toBe('alice')
  })

  it('strips a spoofed identity from an anonymous request too', async () => {
    const posted = await postForm(`${stack.url}/api/statuses/update.json`, { status: 'star me' }, { authorization: basic('alice', alice.api_password) })
    const id = JSON.parse(posted.text).id
    const res = await fetch(`${stack.url}/api/statuses/show/${id}.json`, { headers: { 'x-kigo-user': 'alice' } })
    expect(res.status).toBe(200)
    expect((await res.json()).favorited).toBe(0)
  })

  it('the core refuses unsigned identity sent to it directly', async () => {
    const res = await fetch(`${stack.coreUrl}/api/statuses/update.json`, {
      method: 'POST',
      headers: { host: 'localhost:' + new URL(stack.url).port, 'x-kigo-user': 'alice', 'content-type': 'application/x-www-form-urlencoded' },
      body: 'status=forged',
    })
    expect(res.status).toBe(401)
  })

  it('refuses an authorization scheme it does not verify instead of ignoring it', async () => {
    const res = await fetch(`${stack.url}/api/statuses/show/1.json`, { headers: { authorization: 'Negotiate YIIGhgYJKoZIhvcSAQICAQBuggZ1' } })
    expect(res.status).toBe(401)
    expect((await res.json()).error.code).toBe('unsupported_credentials')
    expect(res.headers.get('www-authenticate')).toContain('OAuth realm="kigo"')
  })

  it('refuses two kinds of credentials on one request with 400', async () => {
    const token = wsse({ username: 'alice', password: alice.api_password })
    const res = await postForm(`${stack.url}/api/statuses/update.json`, { status: 'both' }, {
      authorization: basic('alice', alice.api_password),
      'x-wsse': token.getWSSEHeader(),
    })
    expect(res.status).toBe(400)
  })
})
