// Rhaiker (Ruby), a pure-Ruby binding of the original service's API that reads its XML with
// REXML, run unchanged but for its host against a running kigo: every method it has, the
// reads without credentials, the writes with Basic and the API password. It reads each
// `<replies>` element as one reply with the reply's fields inside, and an empty element
// text as no value. The assertions are on the client's own parsed hashes.
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../helpers/stack.js'
import { available, checkout, driversDir, run, steps, value, type Step } from './clients.js'

const runtimes = [{ check: ['ruby', '-rrexml/document', '-rjson', '-e', 'exit 0'], package: 'ruby' }]
const word = 'interop-rhaiker'

describe.runIf(available('rhaiker', runtimes))('Rhaiker against kigo', () => {
  let stack: Stack
  let client: { dir: string; remove: () => void }
  let out: Record<string, Step>

  beforeAll(async () => {
    stack = await startStack()
    const alice = await stack.addUser('alice', 'Alice')
    const bob = await stack.addUser('bob', 'Bob')
    client = checkout('rhaiker', stack.url)
    const args = ['-I', join(client.dir, 'lib'), '-r', join(driversDir, 'ruby3_uri_escape.rb'), join(driversDir, 'run_rhaiker.rb'), alice.api_password, bob.api_password, word]
    const r = await run('ruby', args, { cwd: client.dir, timeout: 60_000 }).catch((e: { message: string; stderr?: string }) => {
      throw new Error(`the driver stopped: ${e.message}\n${e.stderr ?? ''}`)
    })
    out = steps(r.stdout)
  }, 90_000)
  afterAll(async () => {
    client?.remove()
    await stack?.close()
  })

  const ok = (name: string) => value(out, name)
  const ids = (list: { id: number }[]) => list.map((s) => s.id)
  const all = () => [ok('status_update on another keyword').id, ok('status_update reply').id, ok('status_update').id]

  it('statuses/update: an entry, a reply, an entry on another keyword', () => {
    const posted = ok('status_update')
    expect(posted).toMatchObject({ text: `${word}=Hello from Rhaiker`, source: 'rhaiker', favorited: 0, user: { id: 'alice', name: 'Alice' }, link: `${stack.url}/alice/${posted.id}` })
    expect(posted.in_reply_to).toBeUndefined()
    expect(ok('status_update reply')).toMatchObject({ text: `${word}=A reply from Rhaiker`, in_reply_to: { status_id: posted.id, user_id: 'alice' }, user: { id: 'bob' } })
    expect(ok('status_update on another keyword').text).toBe(`${word}-2=Elsewhere`)
  })

  it('statuses/show: the entry, each <replies> element one reply', () => {
    const shown = ok('get_status')
    expect(shown).toMatchObject({ id: ok('status_update').id, text: `${word}=Hello from Rhaiker` })
    expect(shown.replies).toEqual([expect.objectContaining({ id: ok('status_update reply').id, text: `${word}=A reply from Rhaiker`, user: expect.objectContaining({ id: 'bob' }) })])
  })

  it('favorites/create and favorites/destroy', () => {
    expect(ok('favorites_create')).toMatchObject({ id: ok('status_update').id, favorited: 1 })
    expect(ok('favorites_destroy')).toMatchObject({ id: ok('status_update').id, favorited: 0 })
  })

  it('statuses/public_timeline: every entry, the replies parsed from the repeated <replies>', () => {
    const list = ok('get_public_timeline')
    expect(ids(list)).toEqual(all())
    const first = list.find((s: { id: number }) => s.id === ok('status_update').id)
    expect(ids(first.replies)).toEqual([ok('status_update reply').id])
  })

  it('statuses/keyword_timeline, user_timeline (by id and self), album', () => {
    expect(ids(ok('get_keyword_timeline'))).toEqual([ok('status_update reply').id, ok('status_update').id])
    expect(ids(ok('get_user_timeline alice'))).toEqual([ok('status_update on another keyword').id, ok('status_update').id])
    expect(ids(ok('get_user_timeline self'))).toEqual([ok('status_update on another keyword').id, ok('status_update').id])
    expect(ok('get_album')).toEqual([])
  })

  it('friendships/create and destroy, statuses/friends_timeline (self and by id)', () => {
    expect(ok('friendship_create')).toMatchObject({ id: 'alice', followers_count: 1 })
    expect(ids(ok('get_friends_timeline self'))).toEqual(all())
    expect(ids(ok('get_friends_timeline bob'))).toEqual(all())
    expect(ok('friendship_destroy')).toMatchObject({ id: 'alice', followers_count: 0 })
  })

  it('statuses/friends, statuses/followers (self and by id), friendships/show', () => {
    for (const name of ['get_friends self', 'get_friends bob']) expect(ok(name).map((u: { id: string }) => u.id)).toEqual(['alice'])
    for (const name of ['get_followers self', 'get_followers alice']) expect(ok(name).map((u: { id: string }) => u.id)).toEqual(['bob'])
    expect(ok('get_friend')).toMatchObject({ id: 'alice', name: 'Alice', followers_count: 1, url: `${stack.url}/alice/` })
  })

  it('keywords/create and destroy, keywords/hot, keywords/list', () => {
    expect(ok('keyword_create')).toMatchObject({ title: word, entry_count: 2, followers_count: 1, related_keywords: [] })
    expect(ok('keyword_destroy')).toMatchObject({ title: word, followers_count: 0, related_keywords: [] })
    expect(ok('get_hot_keywords').map((k: { title: string }) => k.title)).toContain(word)
    expect(ok('get_keyword_list').map((k: { title: string }) => k.title)).toContain(word)
  })

  it('keywords/relation/create and destroy', () => {
    expect(ok('keyword_relation_create')).toMatchObject({ title: word, related_keywords: [`${word}-2`] })
    expect(ok('keyword_relation_destroy')).toMatchObject({ title: word, related_keywords: [] })
  })

  // The client's own paths are wrong for these three (statuses/keywrods, keywords/show/WORDxml,
  // statuses/status/destroy/ID): kigo answers 404 as the original did, and the client reports false.
  it('statuses/keywords, keywords/show, statuses/destroy: the client asks for paths that do not exist', () => {
    for (const name of ['get_keywords self', 'get_keywords bob', 'get_keyword', 'status_destroy']) expect(ok(name)).toBe(false)
  })
})
