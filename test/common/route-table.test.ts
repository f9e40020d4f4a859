// The route table's legacy rules (docs/api-differences.md#legacy-leniency): a read answers
// POST as the same operation, a write never does, and `id` turns a form of "the
// authenticated user" into its `/{id}` form, decided by one function on both sides.
import { expect, test } from 'vitest'
import { allowOf, namesId, operationMatcher, operations, withIdParameter } from '../../src/common/route-table.js'

const match = operationMatcher(operations)

test('every read answers POST as itself; no write is reached by GET, and no read by POST becomes a write', () => {
  for (const o of operations) {
    const path = o.path.replace(/\{[a-z_]+\}/g, '1') + (o.path.endsWith('}') ? '' : '.json')
    const byPost = match('POST', path)
    if (o.method === 'GET' && o.readByPost) {
      expect(byPost?.operation?.name, o.name).toBe(o.name)
      expect(allowOf(o)).toEqual(['GET', 'HEAD', 'POST'])
    }
    if (o.method === 'POST') {
      expect(o.readByPost, o.name).toBeUndefined()
      expect(match('GET', path)?.operation, o.name).toBeNull()
    }
  }
  // The user-information API is not a read of the public API: GET only.
  expect(match('POST', '/applications/my')?.operation).toBeNull()
})

test('namesId: a non-empty id, its name decoded, its value as sent', () => {
  for (const yes of ['id=bob', 'a=1&id=bob', '%69d=bob', 'i%64=b', '%69%64=%20', 'id=+', 'id=&id=bob']) expect(namesId(yes), yes).toBe(true)
  for (const no of ['', 'id=', 'id', 'ID=bob', 'id%00=bob', 'id+=bob', '%2569d=bob', 'xid=bob', 'id%3Dbob', '%E0%A4%A=bob', 'id[]=bob']) expect(namesId(no), no).toBe(false)
})

test('withIdParameter: only the forms of "the authenticated user" turn into their /{id} form', () => {
  const self = operations.filter((o) => o.byId !== undefined)
  expect(self.map((o) => o.name).sort()).toEqual([
    'friendships/show', 'statuses/followers', 'statuses/friends', 'statuses/friends_timeline', 'statuses/keywords', 'statuses/user_timeline',
  ])
  for (const o of self) {
    const byId = withIdParameter(operations, o, () => true)
    expect(byId.name).toBe(`${o.name}/{id}`)
    expect(byId.anonymous).toBe(true)
    expect(withIdParameter(operations, o, () => false)).toBe(o)
  }
  const write = operations.find((o) => o.name === 'friendships/create')!
  expect(withIdParameter(operations, write, () => true)).toBe(write)
})

test('a user ID written id:NAME (docs/api-differences.md#user-ids-written-as-keywords) is one path segment like any other: every /{id} operation matches it, in either spelling of the colon', () => {
  for (const o of operations.filter((op) => op.path.endsWith('/{id}'))) {
    for (const written of ['id:bob', 'id%3Abob']) {
      for (const ext of ['.json', '.xml', '']) {
        expect(match(o.method, o.path.replace('{id}', written) + ext)?.operation?.name, `${o.method} ${written}${ext}`).toBe(o.name)
      }
    }
  }
  // `id` naming a user as a keyword still turns a form of "the authenticated user" into its /{id} form.
  expect(namesId('id=id:bob')).toBe(true)
  expect(namesId('id=id%3Abob')).toBe(true)
})
