// The reads and writes of docs/api.md#timelines, docs/api.md#users-and-follows, docs/api.md#keywords, docs/api.md#pages through a running gateway and core: the one route
// table decides what each path needs (docs/gateway.md#which-credentials-each-operation-accepts), the forms without `/{id}` need
// credentials, OAuth reads need read_public (or write_public), writes write_public.
import { afterAll, beforeAll, expect, test } from 'vitest'
import { request } from 'undici'
import { oauth1aClient } from '../helpers/oauth1a.js'
import { startStack, type Stack } from '../helpers/stack.js'

let stack: Stack
let basic: string
type Client = { consumerKey: string; consumerSecret: string; token: string; tokenSecret: string }
let reader: Client, writer: Client, photographer: Client
let entryId: string

beforeAll(async () => {
  stack = await startStack()
  const frank = await stack.addUser('frank', 'Frank')
  await stack.addUser('gina', 'Gina')
  basic = `Basic ${Buffer.from(`frank:${frank.api_password}`).toString('base64')}`
  reader = await stack.addOAuthClient('frank', ['read_public'])
  writer = await stack.addOAuthClient('frank', ['write_public'])
  photographer = await stack.addOAuthClient('frank', ['write_private'])
  const res = await call('POST', '/api/statuses/update.json', { authorization: basic }, 'status=haiku%3Dthrough+the+gateway')
  expect(res.status).toBe(200)
  entryId = JSON.parse(res.text).id
  // gina posts once (she could be followed without: docs/gateway.md#registered-users-in-the-core).
  const gina = await stack.addOAuthClient('gina', ['write_public'])
  expect((await call('POST', '/api/statuses/update.json', oauth(gina, 'POST', '/api/statuses/update.json', { status: 'hello' }), 'status=hello')).status).toBe(200)
})
afterAll(async () => {
  await stack?.close()
})

async function call(method: string, path: string, headers: Record<string, string> = {}, body?: string) {
  const res = await request(`${stack.url}${path}`, {
    method: method as 'GET',
    headers: body === undefined ? headers : { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    ...(body === undefined ? {} : { body }),
  })
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() }
}

function oauth(c: Client, method: string, path: string, data: Record<string, string> = {}): Record<string, string> {
  const client = oauth1aClient({ key: c.consumerKey, secret: c.consumerSecret })
  const auth = client.authorize({ url: `${stack.url}${path}`, method, data }, { key: c.token, secret: c.tokenSecret })
  return { ...client.toHeader(auth) }
}

test('anonymous reads of the /{id} forms and of the public timeline', async () => {
  const pub = await call('GET', '/api/statuses/public_timeline.json')
  expect(pub.status).toBe(200)
  expect(JSON.parse(pub.text).map((e: { id: string }) => e.id)).toContain(entryId)
  const xml = await call('GET', '/api/statuses/user_timeline/frank.xml')
  expect(xml.status).toBe(200)
  expect(xml.text).toMatch(/<statuses type="array"><status><id>/)
  expect((await call('GET', '/api/keywords/show/haiku.json')).status).toBe(200)
  expect((await call('GET', '/api/friendships/show/frank.json')).status).toBe(200)
})

test('the forms without /{id} need credentials: 401 with challenges anonymously, 200 with Basic or OAuth read_public or write_public', async () => {
  const anon = await call('GET', '/api/statuses/user_timeline.json')
  expect(anon.status).toBe(401)
  expect(String(anon.headers['www-authenticate'])).toMatch(/OAuth|Basic/)
  expect((await call('GET', '/api/statuses/user_timeline.json', { authorization: basic })).status).toBe(200)
  for (const c of [reader, writer]) {
    const res = await call('GET', '/api/statuses/friends_timeline.json', oauth(c, 'GET', '/api/statuses/friends_timeline.json'))
    expect(res.status).toBe(200)
  }
  const narrow = await call('GET', '/api/statuses/keywords.xml', oauth(photographer, 'GET', '/api/statuses/keywords.xml'))
  expect(narrow.status).toBe(403)
  expect(narrow.text).toContain('<status>403</status>')
})

test('writes need write_public: read_public is 403, write_public follows', async () => {
  const path = '/api/friendships/create/gina.json'
  expect((await call('POST', path, oauth(reader, 'POST', path))).status).toBe(403)
  const ok = await call('POST', path, oauth(writer, 'POST', path))
  expect(ok.status).toBe(200)
  expect(JSON.parse(ok.text)).toMatchObject({ id: 'gina', followers_count: 1 })
  expect((await call('POST', path)).status).toBe(401)
  const followers = await call('GET', '/api/statuses/followers/gina.json')
  expect(JSON.parse(followers.text).map((u: { id: string }) => u.id)).toEqual(['frank'])
})

test('the pages behind the links open as HTML through the gateway', async () => {
  const entry = JSON.parse((await call('GET', `/api/statuses/show/${entryId}.json`)).text)
  for (const url of [`${stack.url}/`, entry.link, entry.user.url, `${stack.url}/keyword/haiku`]) {
    const res = await call('GET', new URL(url).pathname)
    expect(res.status, url).toBe(200)
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
  }
  expect((await call('GET', '/nobody-here/')).status).toBe(404)
})
