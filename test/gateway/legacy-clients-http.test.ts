// What real clients of the original service depend on, through a running gateway and core
// (docs/api-differences.md#legacy-leniency): reads by POST, `?id=`, the original's XML
// lists, `target`, replies on statuses/show, lenient body_formats, and public reads signed
// with an OAuth header that names no token.
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { request } from 'undici'
import { operations } from '../../src/common/route-table.js'
import { pngHeader } from '../helpers/image-headers.js'
import { oauth1aClient } from '../helpers/oauth1a.js'
import { startStack, type Stack } from '../helpers/stack.js'
import { element, elements, fields, parseDocument } from '../helpers/xml-client.js'

let stack: Stack
let basic: string
type Client = { consumerKey: string; consumerSecret: string; token: string; tokenSecret: string }
let reader: Client
let rootId: string
const replyIds: string[] = []

beforeAll(async () => {
  stack = await startStack()
  const hana = await stack.addUser('hana', 'Hana')
  const ivo = await stack.addUser('ivo', 'Ivo')
  basic = `Basic ${Buffer.from(`hana:${hana.api_password}`).toString('base64')}`
  const ivoBasic = `Basic ${Buffer.from(`ivo:${ivo.api_password}`).toString('base64')}`
  reader = await stack.addOAuthClient('hana', ['read_public'])
  const post = async (auth: string, body: string) => {
    const res = await call('POST', '/api/statuses/update.json', { authorization: auth }, body)
    expect(res.status, res.text).toBe(200)
    return JSON.parse(res.text) as { id: string }
  }
  rootId = (await post(ivoBasic, 'status=haiku%3Dold+pond')).id
  replyIds.push((await post(basic, `status=a+frog&in_reply_to_status_id=${rootId}`)).id)
  replyIds.push((await post(ivoBasic, `status=the+sound&in_reply_to_status_id=${rootId}`)).id)
  await post(ivoBasic, 'status=on+my+own+keyword')
  // hana follows ivo and the keyword haiku; haiku is related to API.
  expect((await call('POST', '/api/friendships/create/ivo.json', { authorization: basic }, '')).status).toBe(200)
  expect((await call('POST', '/api/keywords/create.json', { authorization: basic }, 'word=haiku')).status).toBe(200)
  expect((await call('POST', '/api/keywords/relation/create.json', { authorization: basic }, 'word1=haiku&word2=API')).status).toBe(200)
}, 60_000)
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

/** An OAuth header over `path` (its query included) and the form `data` of the body. */
function oauth(c: Client, method: string, path: string, data: Record<string, string> = {}): Record<string, string> {
  const client = oauth1aClient({ key: c.consumerKey, secret: c.consumerSecret })
  const auth = client.authorize({ url: `${stack.url}${path}`, method, data }, { key: c.token, secret: c.tokenSecret })
  return { ...client.toHeader(auth) }
}

/** An OAuth header signed with a consumer but no token, as one legacy library signs public reads. */
function tokenless(method: string, path: string, consumer = { key: '', secret: '' }): Record<string, string> {
  const client = oauth1aClient(consumer)
  return { ...client.toHeader(client.authorize({ url: `${stack.url}${path}`, method })) }
}

async function authMetric(labels: string): Promise<number> {
  const text = await (await fetch(`${stack.adminUrl}/metrics`)).text()
  return [...text.matchAll(/^kigo_auth_requests_total\{([^}]*)\} ([0-9.]+)$/gm)]
    .filter((m) => labels.split(',').every((l) => m[1]!.includes(l)))
    .reduce((sum, m) => sum + Number(m[2]), 0)
}

/** Each read of the route table, as a concrete path with its query. */
function concreteReads(): Array<{ name: string; path: string; anonymous: boolean }> {
  const ids: Record<string, string> = { eid: '', id: 'ivo', word: 'haiku' }
  return operations
    .filter((o) => o.readByPost && o.path.startsWith('/api/'))
    .map((o) => {
      const base = o.path.replace(/\{([a-z_]+)\}/g, (_m, n: string) => (n === 'eid' ? rootId : ids[n]!))
      const query = /keyword_timeline$|keywords\/show$/.test(o.path) ? '?word=haiku' : ''
      return { name: o.name, path: `${base}.json${query}`, anonymous: o.anonymous }
    })
}


describe('reads answer POST exactly as GET', () => {
  test('every read of the table: the same status and body by POST (empty body, no content-type; or the query as a form body), in JSON and XML', async () => {
    const reads = concreteReads()
    expect(reads.length).toBeGreaterThanOrEqual(20)
    for (const r of reads) {
      for (const format of ['json', 'xml']) {
        const path = r.path.replace('.json', `.${format}`)
        const auth: Record<string, string> = r.anonymous ? {} : { authorization: basic }
        const get = await call('GET', path, auth)
        expect(get.status, `GET ${path}`).toBe(200)
        const empty = await call('POST', path, auth)
        expect(empty.status, `POST ${path}`).toBe(200)
        expect(empty.text, `POST ${path}`).toBe(get.text)
        expect(empty.headers['content-type']).toBe(get.headers['content-type'])
        const [bare, query] = path.split('?')
        const inBody = await call('POST', bare!, auth, query ?? '')
        expect(inBody.status, `POST ${bare} with ${query}`).toBe(200)
        expect(inBody.text).toBe(get.text)
      }
    }
  }, 60_000)

  test('the same authentication: a form without /{id} refuses anonymous POST as it refuses GET; OAuth read_public signs a POST read with its body', async () => {
    for (const method of ['GET', 'POST']) {
      const anon = await call(method, '/api/statuses/friends_timeline.xml')
      expect(anon.status, method).toBe(401)
      expect(String(anon.headers['www-authenticate'])).toMatch(/OAuth/)
      expect(anon.text).toContain('<status>401</status>')
    }
    const path = '/api/statuses/friends_timeline.json'
    const viaPost = await call('POST', path, oauth(reader, 'POST', path, { count: '1' }), 'count=1')
    expect(viaPost.status, viaPost.text).toBe(200)
    expect(JSON.parse(viaPost.text)).toHaveLength(1)
    // A body that was not signed is refused, as on any POST.
    const tampered = await call('POST', path, oauth(reader, 'POST', path, { count: '1' }), 'count=2')
    expect(tampered.status).toBe(401)
  })

  test('a POST read never needs a write scope and never reaches a write: read_public reads by POST, and a write\'s parameters sent to a read change nothing', async () => {
    const before = JSON.parse((await call('GET', '/api/statuses/public_timeline.json?count=200')).text) as unknown[]
    const show = `/api/statuses/show/${rootId}.json`
    const res = await call('POST', show, oauth(reader, 'POST', show, { status: 'sneaky', keyword: 'x' }), 'status=sneaky&keyword=x')
    expect(res.status).toBe(200)
    expect(JSON.parse(res.text)).toMatchObject({ id: rootId, favorited: 0 })
    const after = JSON.parse((await call('GET', '/api/statuses/public_timeline.json?count=200')).text) as unknown[]
    expect(after).toHaveLength(before.length)
    // The writes themselves keep their scope: read_public posting is 403.
    const update = '/api/statuses/update.json'
    expect((await call('POST', update, oauth(reader, 'POST', update, { status: 'x' }), 'status=x')).status).toBe(403)
    // And the other methods still get 405 with every method the read answers.
    const put = await call('PUT', show)
    expect(put.status).toBe(405)
    expect(put.headers.allow).toBe('GET, HEAD, POST')
  })
})

describe('the XML list rule, read as the original\'s XML clients read it', () => {
  test('statuses/show and the timelines: one <replies> per reply holding its fields, oldest first; none for no reply', async () => {
    const show = await call('GET', `/api/statuses/show/${rootId}.xml`)
    expect(show.status).toBe(200)
    const status = parseDocument(show.text)
    expect(status.name).toBe('status')
    const replies = elements(status, 'replies')
    expect(replies.map((r) => fields(r).id)).toEqual(replyIds)
    expect(fields(replies[0]!)).toMatchObject({ text: 'a frog', in_reply_to_status_id: rootId, in_reply_to_user_id: 'ivo', created_at: expect.stringMatching(/Z$/) })
    expect(fields(element(replies[0]!, 'user'))).toMatchObject({ id: 'hana', screen_name: 'hana' })
    expect(fields(element(replies[1]!, 'user')).id).toBe('ivo')

    const timeline = parseDocument((await call('GET', '/api/statuses/user_timeline/ivo.xml')).text)
    expect(timeline.name).toBe('statuses')
    const entries = elements(timeline, 'status')
    const root = entries.find((e) => fields(e).id === rootId)!
    expect(elements(root, 'replies').map((r) => fields(r).id)).toEqual(replyIds)
    const lone = entries.find((e) => fields(e).text === 'on my own keyword')!
    expect(elements(lone, 'replies')).toEqual([])
    expect(lone.children.map((c) => c.name)).not.toContain('replies')
  })

  test('keywords: one <related_keywords> per related word', async () => {
    const k = parseDocument((await call('GET', '/api/keywords/show.xml?word=haiku')).text)
    expect(elements(k, 'related_keywords').map((r) => r.text)).toEqual(['API'])
    expect(elements(k, 'related_keywords')[0]!.children).toEqual([])
    const json = JSON.parse((await call('GET', '/api/keywords/show.json?word=haiku')).text)
    expect(json.related_keywords).toEqual(['API'])
  })
})

test('statuses/show carries its replies, oldest first, in JSON too', async () => {
  const json = JSON.parse((await call('GET', `/api/statuses/show/${rootId}.json`)).text)
  expect(json.replies.map((r: { id: string }) => r.id)).toEqual(replyIds)
  expect(json.replies[0]).not.toHaveProperty('replies')
  const leaf = JSON.parse((await call('GET', `/api/statuses/show/${replyIds[0]}.json`)).text)
  expect(leaf.replies).toEqual([])
})

test('target on every Entry: {title, word}, and url_name for a user keyword', async () => {
  const list = JSON.parse((await call('GET', '/api/statuses/user_timeline/ivo.json')).text) as Array<{ id: string; keyword: string; target: unknown; replies: Array<{ target: unknown }> }>
  for (const e of list) {
    if (e.keyword.startsWith('id:')) expect(e.target).toEqual({ title: 'id:ivo', url_name: 'ivo', word: 'id:ivo' })
    else expect(e.target).toEqual({ title: e.keyword, word: e.keyword })
  }
  expect(list.find((e) => e.id === rootId)!.replies[0]!.target).toEqual({ title: 'id:hana', url_name: 'hana', word: 'id:hana' })
  const xml = parseDocument((await call('GET', `/api/statuses/show/${rootId}.xml`)).text)
  expect(fields(element(xml, 'target'))).toEqual({ title: 'haiku', word: 'haiku' })
})

test('body_formats=api is ignored; a known value beside it still adds its field', async () => {
  const plain = await call('GET', `/api/statuses/show/${rootId}.json?body_formats=api`)
  expect(plain.status).toBe(200)
  expect(JSON.parse(plain.text)).not.toHaveProperty('html')
  const both = JSON.parse((await call('POST', `/api/statuses/show/${rootId}.json`, {}, 'body_formats=api,haiku')).text)
  expect(both.haiku_text).toBe('old pond')
})

describe('?id= wherever /{id} is accepted', () => {
  const forms = [
    { path: '/api/statuses/user_timeline', check: (body: unknown) => (body as Array<{ user: { id: string } }>).every((e) => e.user.id === 'ivo') && (body as unknown[]).length === 3 },
    { path: '/api/statuses/friends_timeline', check: (body: unknown) => (body as Array<{ user: { id: string } }>).every((e) => e.user.id === 'ivo') },
    { path: '/api/friendships/show', check: (body: unknown) => (body as { id: string }).id === 'ivo' },
    { path: '/api/statuses/friends', check: (body: unknown) => Array.isArray(body) && body.length === 0 },
    { path: '/api/statuses/followers', check: (body: unknown) => (body as Array<{ id: string }>).map((u) => u.id).join() === 'hana' },
    { path: '/api/statuses/keywords', check: (body: unknown) => Array.isArray(body) && body.length === 0 },
  ]

  test('anonymous, in the query or an urlencoded body: the named user\'s read, as the /{id} form answers it', async () => {
    for (const f of forms) {
      const byPath = await call('GET', `${f.path}/ivo.json`)
      expect(byPath.status, f.path).toBe(200)
      for (const [method, path, body] of [['GET', `${f.path}.json?id=ivo`, undefined], ['POST', `${f.path}.json`, 'id=ivo'], ['POST', `${f.path}.json?id=ivo`, ''], ['GET', `${f.path}.json?%69d=ivo`, undefined]] as const) {
        const res = await call(method, path, {}, body)
        expect(res.status, `${method} ${path} ${body ?? ''}`).toBe(200)
        expect(res.text, `${method} ${path}`).toBe(byPath.text)
        expect(f.check(JSON.parse(res.text)), path).toBe(true)
      }
      const xml = await call('GET', `${f.path}.xml?id=ivo`)
      expect(xml.text).toBe((await call('GET', `${f.path}/ivo.xml`)).text)
    }
  })

  test('with credentials, ?id= still names the user, not the requester; an empty id is no id', async () => {
    const path = '/api/statuses/user_timeline.json?id=ivo'
    const signed = await call('GET', path, oauth(reader, 'GET', path))
    expect(signed.status).toBe(200)
    expect((JSON.parse(signed.text) as Array<{ user: { id: string } }>).every((e) => e.user.id === 'ivo')).toBe(true)
    const own = '/api/statuses/user_timeline.json'
    const inBody = await call('POST', own, oauth(reader, 'POST', own, { id: 'ivo' }), 'id=ivo')
    expect(inBody.text).toBe(signed.text)
    // Empty: the form of "the authenticated user", credentials needed as ever.
    expect((await call('GET', '/api/statuses/user_timeline.json?id=')).status).toBe(401)
    expect((await call('POST', own, {}, 'id=')).status).toBe(401)
    const mine = await call('GET', '/api/statuses/user_timeline.json?id=', { authorization: basic })
    expect((JSON.parse(mine.text) as Array<{ user: { id: string } }>).every((e) => e.user.id === 'hana')).toBe(true)
  })

  test('a path id and an id that differ: 400 naming both, in format; the same one is fine; a repeated id is 400', async () => {
    for (const f of forms) {
      const res = await call('GET', `${f.path}/ivo.xml?id=hana`)
      expect(res.status, f.path).toBe(400)
      const err = fields(parseDocument(res.text))
      expect(err.code).toBe('conflicting_id')
      expect(err.message).toContain('ivo')
      expect(err.message).toContain('hana')
      expect((await call('POST', `${f.path}/ivo.json`, {}, 'id=hana')).status, f.path).toBe(400)
      expect((await call('GET', `${f.path}/ivo.json?id=ivo`)).status, f.path).toBe(200)
      expect((await call('GET', `${f.path}.json?id=ivo&id=ivo`)).status, f.path).toBe(400)
      expect((await call('POST', `${f.path}.json?id=ivo`, {}, 'id=hana')).status, f.path).toBe(400)
    }
    // In a multipart body `id` is not seen when the operation is chosen: refused, not ignored.
    const boundary = 'kigo-id'
    const multipart = `--${boundary}\r\nContent-Disposition: form-data; name="id"\r\n\r\nivo\r\n--${boundary}--\r\n`
    const mp = await request(`${stack.url}/api/statuses/user_timeline.json`, { method: 'POST', headers: { authorization: basic, 'content-type': `multipart/form-data; boundary=${boundary}` }, body: multipart })
    expect(mp.statusCode).toBe(400)
    expect(((await mp.body.json()) as { error: { message: string } }).error.message).toContain('query')
    // The writes with /{id} too: nothing is followed when the two disagree.
    const create = await call('POST', '/api/friendships/create/ivo.json', { authorization: basic }, 'id=hana')
    expect(create.status).toBe(400)
    expect(JSON.parse(create.text).error.code).toBe('conflicting_id')
  })
})

describe('an OAuth header that names no token', () => {
  test('on a route open to anonymous reads: answered as anonymous, counted as none / ignored_credentials', async () => {
    const before = await authMetric('method="none",outcome="ignored_credentials",route="statuses/public_timeline"')
    const path = '/api/statuses/public_timeline.json'
    const res = await call('GET', path, tokenless('GET', path))
    expect(res.status, res.text).toBe(200)
    expect(res.text).toBe((await call('GET', path)).text)
    const show = `/api/statuses/show/${rootId}.xml`
    expect((await call('POST', show, tokenless('POST', show, { key: 'some-app', secret: '' }))).status).toBe(200)
    // An empty oauth_token is no token either.
    const emptyToken = tokenless('GET', path).Authorization!.replace('OAuth ', 'OAuth oauth_token="", ')
    expect((await call('GET', path, { Authorization: emptyToken })).status).toBe(200)
    expect(await authMetric('method="none",outcome="ignored_credentials",route="statuses/public_timeline"')).toBe(before + 2)
    expect(await authMetric('method="none",outcome="ignored_credentials",route="statuses/show"')).toBeGreaterThanOrEqual(1)
  })

  test('on a route that needs credentials: refused as before; a header that names a token is verified as always', async () => {
    const own = '/api/statuses/user_timeline.json'
    const refused = await call('GET', own, tokenless('GET', own))
    expect(refused.status).toBe(400)
    expect(JSON.parse(refused.text).error.code).toBe('parameter_absent')
    const path = '/api/statuses/public_timeline.json'
    const forged = oauth({ ...reader, tokenSecret: 'wrong' }, 'GET', path)
    expect((await call('GET', path, forged)).status).toBe(401)
    // Protocol parameters in the query are not a header: verified as always.
    expect((await call('GET', `${path}?oauth_consumer_key=x&oauth_signature=y`)).status).toBeGreaterThanOrEqual(400)
  })
})

test('status with file: the 400 says how to send them', async () => {
  const boundary = 'kigo-boundary'
  const png = pngHeader(1, 1)
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="status"\r\n\r\nhello\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`),
    png,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ])
  const res = await request(`${stack.url}/api/statuses/update.json`, { method: 'POST', headers: { authorization: basic, 'content-type': `multipart/form-data; boundary=${boundary}` }, body })
  expect(res.statusCode).toBe(400)
  const err = (await res.body.json()) as { error: { code: string; message: string } }
  expect(err.error.code).toBe('status_and_file')
  expect(err.error.message).toContain('post the photo with file alone, or the text with status alone')
})
