// The user-information API (docs/gateway.md#the-oauth-provider-and-the-account-pages, docs/gateway.md#which-credentials-each-operation-accepts): GET /applications/my.{format}, OAuth only,
// any scope, errors in the path's format.
import { XMLParser } from 'fast-xml-parser'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../../helpers/stack.js'
import { oauthChallenge, oauthFetch } from './helpers.js'

let stack: Stack
let alice: { api_password: string }
let reader: { consumerKey: string; consumerSecret: string; token: string; tokenSecret: string }

beforeAll(async () => {
  stack = await startStack()
  alice = await stack.addUser('alice', 'Alice "A" Liddell')
  reader = await stack.addOAuthClient('alice', ['read_public'])
})

afterAll(async () => {
  await stack?.close()
})

const my = (path: string, base = stack.url) =>
  oauthFetch({ method: 'GET', url: `${base}${path}`, consumer: { key: reader.consumerKey, secret: reader.consumerSecret }, token: { token: reader.token, secret: reader.tokenSecret } })

describe('GET /applications/my', () => {
  it('answers the signed-in user in JSON, with a token of any scope', async () => {
    const res = await my('/applications/my.json')
    expect(res.status, res.text).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8')
    const port = new URL(stack.url).port
    expect(res.json()).toEqual({
      url_name: 'alice',
      display_name: 'Alice "A" Liddell',
      profile_image_url: `http://localhost:${port}/users/alice/profile.png`,
    })
  })

  it('names the deployment the request came to in the icon URL, and the icon is served', async () => {
    const res = await my('/applications/my.json', stack.globalUrl)
    const url = res.json().profile_image_url as string
    expect(url).toBe(`${stack.globalUrl}/users/alice/profile.png`)
    const icon = await fetch(url)
    expect(icon.status).toBe(200)
    expect(icon.headers.get('content-type')).toBe('image/png')
  })

  it('answers in XML', async () => {
    const res = await my('/applications/my.xml')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/xml; charset=utf-8')
    expect(res.text.startsWith('<?xml version="1.0" encoding="UTF-8"?>')).toBe(true)
    const doc = new XMLParser().parse(res.text)
    expect(doc.user).toMatchObject({ url_name: 'alice', display_name: 'Alice "A" Liddell' })
  })

  it('wraps JSON in a valid callback and refuses an invalid one', async () => {
    const res = await my('/applications/my.json?callback=cb.done')
    expect(res.status).toBe(200)
    expect(res.text).toMatch(/^cb\.done\(\{"url_name":"alice",/)
    expect(res.headers.get('content-type')).toBe('application/javascript; charset=utf-8')
    expect((await my('/applications/my.json?callback=alert(1)')).status).toBe(400)
  })

  it('is OAuth only: no credentials or Basic credentials get 401 with the OAuth challenge, in format', async () => {
    const anonymous = await fetch(`${stack.url}/applications/my.xml`)
    expect(anonymous.status).toBe(401)
    expect(anonymous.headers.get('www-authenticate')).toBe('OAuth realm="kigo"')
    expect(await anonymous.text()).toContain('<code>authentication_required</code>')

    const legacy = await fetch(`${stack.url}/applications/my.json`, { headers: { authorization: 'Basic ' + Buffer.from(`alice:${alice.api_password}`).toString('base64') } })
    expect(legacy.status).toBe(401)
    expect(legacy.headers.get('www-authenticate')).toBe('OAuth realm="kigo"')
    expect((await legacy.json()).error.code).toBe('method_not_accepted')
  })

  it('refuses a bad signature with the OAuth problem', async () => {
    const res = await oauthFetch({ method: 'GET', url: `${stack.url}/applications/my.json`, consumer: { key: reader.consumerKey, secret: reader.consumerSecret }, token: { token: reader.token, secret: 'wrong' } })
    expect(res.status).toBe(401)
    expect(oauthChallenge(res.headers).oauth_problem).toBe('signature_invalid')
  })

  it('answers an unknown extension with 404 and other methods with 405', async () => {
    expect((await my('/applications/my.txt')).status).toBe(404)
    const post = await fetch(`${stack.url}/applications/my.json`, { method: 'POST' })
    expect(post.status).toBe(405)
    expect(post.headers.get('allow')).toBe('GET, HEAD')
  })
})
