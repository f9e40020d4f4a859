// hatena-haiker (Python 3), a library for the original service's API, run unchanged but for
// its host against a running kigo: every method it has, with OAuth (alice), Basic (bob) and
// no credentials. The assertions are on what the client itself returns: its parsed objects.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../helpers/stack.js'
import { csrfOf, hiddenField, WebClient } from '../gateway/provider/helpers.js'
import { available, checkout, driversDir, run, steps, value, type Step } from './clients.js'

const runtimes = [{ check: ['/usr/bin/python3', '-c', 'import requests, requests_oauthlib'], package: 'python3-requests-oauthlib' }]
const png = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c63f8ffff3f0005fe02fea73581840000000049454e44ae426082', 'hex')
const word = 'interop-haiker'

describe.runIf(available('hatena-haiker', runtimes))('hatena-haiker against kigo', () => {
  let stack: Stack
  let client: { dir: string; remove: () => void }
  let out: Record<string, Step>
  let env: Record<string, string>
  let alicePassword = ''

  async function driver(args: string[], more: Record<string, string> = {}): Promise<Record<string, Step>> {
    const r = await run('/usr/bin/python3', [join(driversDir, 'run_haiker.py'), ...args], { env: { ...env, ...more }, cwd: client.dir, timeout: 60_000 }).catch((e: { stderr?: string; message: string }) => {
      throw new Error(`the driver stopped: ${e.message}\n${e.stderr ?? ''}`)
    })
    return steps(r.stdout)
  }

  beforeAll(async () => {
    stack = await startStack()
    alicePassword = (await stack.addUser('alice', 'Alice')).password
    const bob = await stack.addUser('bob', 'Bob')
    const oauth = await stack.addOAuthClient('alice', ['read_public', 'write_public', 'read_private', 'write_private'])
    client = checkout('hatena-haiker', stack.url)
    const photo = join(client.dir, 'dot.png')
    writeFileSync(photo, png)
    env = {
      KIGO: stack.url,
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      PYTHONPATH: client.dir,
      PYTHONDONTWRITEBYTECODE: '1',
      ALICE_CONSUMER_KEY: oauth.consumerKey,
      ALICE_CONSUMER_SECRET: oauth.consumerSecret,
      ALICE_TOKEN: oauth.token,
      ALICE_TOKEN_SECRET: oauth.tokenSecret,
      BOB_PASSWORD: bob.api_password,
      PHOTO: photo,
      WORD: word,
    }
    out = await driver([])
  }, 90_000)
  afterAll(async () => {
    client?.remove()
    await stack?.close()
  })

  const ok = (name: string) => value(out, name)
  const ids = (list: { id: string }[]) => list.map((s) => s.id)

  it('statuses/update: posts with OAuth and Basic, replies, and a photo with `file`', () => {
    const posted = ok('update_status')
    expect(posted).toMatchObject({ keyword: word, text: `${word}=Hello from haiker`, source: 'haiker', user: { id: 'alice', screen_name: 'alice', name: 'Alice' } })
    expect(posted.id).toMatch(/^\d+$/)
    expect(posted.link).toBe(`${stack.url}/alice/${posted.id}`)
    expect(ok('update_status reply')).toMatchObject({ keyword: word, haiku_text: 'A reply from haiker', in_reply_to_status_id: posted.id, in_reply_to_user_id: 'alice', user: { id: 'bob' } })
    const photo = ok('update_status with a file')
    expect(photo.keyword).toBe('photos')
    expect(photo.text).toMatch(/^photos=http:\/\/.+\.png$/)
  })

  it('statuses/show: the entry with its replies', () => {
    const shown = ok('show_status')
    expect(shown).toMatchObject({ id: ok('update_status').id, haiku_text: 'Hello from haiker', keyword: word })
    expect(ids(shown.replies ?? [])).toEqual([ok('update_status reply').id])
  })

  it('favorites/create and favorites/destroy: the star count the client reads', () => {
    expect(ok('add_star')).toMatchObject({ id: ok('update_status').id, favorited: 1 })
    expect(ok('remove_star')).toMatchObject({ id: ok('update_status').id, favorited: 0 })
  })

  it('statuses/public_timeline (anonymous, body_formats=haiku): every entry, with replies and its target', () => {
    const list = ok('public_timeline')
    const [posted, reply, photo] = [ok('update_status').id, ok('update_status reply').id, ok('update_status with a file').id]
    expect(ids(list)).toEqual([photo, reply, posted])
    expect(list.map((s: { haiku_text: string }) => s.haiku_text)).toContain('Hello from haiker')
    expect(ids(list.find((s: { id: string }) => s.id === posted).replies)).toEqual([reply])
    for (const s of list) expect(s.target).toMatchObject({ title: s.keyword, word: s.keyword })
  })

  it('statuses/keyword_timeline, user_timeline (by id and self) and album', () => {
    const [posted, reply, photo] = [ok('update_status').id, ok('update_status reply').id, ok('update_status with a file').id]
    expect(ids(ok('keyword_timeline'))).toEqual([reply, posted])
    expect(ids(ok('user_timeline alice'))).toEqual([photo, posted])
    expect(ids(ok('user_timeline self'))).toEqual([photo, posted])
    expect(ids(ok('album'))).toEqual([photo])
  })

  it('body_formats: a known value adds its field, an unknown one (api) is ignored', () => {
    const list = ok('keyword_timeline body_formats haiku,api')
    expect(ids(list)).toEqual(ids(ok('keyword_timeline')))
    expect(list.map((s: { haiku_text: string }) => s.haiku_text)).toEqual(['A reply from haiker', 'Hello from haiker'])
  })

  it('a public read signed with the consumer key alone (no token) is answered as anonymous', () => {
    expect(ids(ok('public_timeline signed without a token'))).toEqual(ids(ok('public_timeline')))
  })

  it('friendships/create, statuses/friends_timeline (self and by id), friendships/destroy', () => {
    expect(ok('follow_user')).toMatchObject({ id: 'alice', followers_count: 1 })
    const [posted, reply, photo] = [ok('update_status').id, ok('update_status reply').id, ok('update_status with a file').id]
    expect(ids(ok('friends_timeline self'))).toEqual([photo, reply, posted])
    expect(ids(ok('friends_timeline bob'))).toEqual([photo, reply, posted])
    expect(ok('unfollow_user')).toMatchObject({ id: 'alice', followers_count: 0 })
  })

  it('friendships/show (by id and self)', () => {
    expect(ok('show_user alice')).toMatchObject({ id: 'alice', name: 'Alice', screen_name: 'alice', followers_count: 1, url: `${stack.url}/alice/` })
    expect(ok('show_user self')).toMatchObject({ id: 'bob', name: 'Bob' })
  })

  it('statuses/friends, statuses/followers, statuses/keywords: answered (the client returns its converter unapplied)', () => {
    // The client's own bug: these three return types.list_of(...) without applying it, so
    // all it can report is that the request succeeded and its JSON parsed.
    for (const name of ['friends bob', 'followers alice', 'favorite_keywords bob']) expect(ok(name)).toEqual({ unapplied_converter: 'to_list' })
  })

  it('keywords/show, keywords/hot, keywords/list', () => {
    expect(ok('show_keyword')).toMatchObject({ word, title: word, entry_count: 2, link: `${stack.url}/keyword/${word}` })
    expect(ok('hot_keywords').map((k: { word: string }) => k.word)).toContain(word)
    expect(ok('keyword_list').map((k: { word: string }) => k.word)).toEqual([word])
  })

  it('keywords/create, keywords/destroy, keywords/relation/create and destroy', () => {
    expect(ok('follow_keyword')).toMatchObject({ word, followers_count: 1 })
    expect(ok('unfollow_keyword')).toMatchObject({ word, followers_count: 0 })
    expect(ok('associate_keywords').related_keywords).toEqual(['photos'])
    expect(ok('dissociate_keywords').related_keywords).toEqual([])
  })

  it('statuses/destroy', () => {
    expect(ok('delete_status')).toMatchObject({ id: ok('update_status').id, user: { id: 'alice' } })
  })

  it('OAuth.initiate, auth_url and verify: the three-legged flow with oob, then a post with the new token', async () => {
    const initiated = await driver(['initiate'])
    const [token, secret] = value<[string, string]>(initiated, 'OAuth.initiate')
    expect(token).toMatch(/^[A-Za-z0-9_-]{16,}$/)
    const authorize = value<string>(initiated, 'OAuth.auth_url')
    expect(authorize).toBe(`${stack.url}/oauth/authorize?oauth_token=${token}`)
    // alice allows on the authorize page; the page shows the verifier (oob).
    const web = new WebClient(stack.url)
    await web.signIn('/account/login', 'alice', alicePassword)
    const consent = await web.get(authorize.slice(stack.url.length))
    expect(consent.status).toBe(200)
    const shown = await web.post('/oauth/authorize', { csrf_token: csrfOf(consent.text), oauth_token: hiddenField(consent.text, 'oauth_token')!, decision: 'allow' })
    const verifier = /id="oauth_verifier"[^>]*>([^<]+)</.exec(shown.text)![1]!
    const verified = await driver(['verify'], { REQUEST_TOKEN: token, REQUEST_SECRET: secret, VERIFIER: verifier })
    const [access] = value<[string, string]>(verified, 'OAuth.verify')
    expect(access).toMatch(/^[A-Za-z0-9_-]{16,}$/)
    expect(access).not.toBe(token)
    expect(value(verified, 'update_status with the new token')).toMatchObject({ keyword: word, text: `${word}=Signed with a fresh token`, user: { id: 'alice' } })
  }, 60_000)
})
