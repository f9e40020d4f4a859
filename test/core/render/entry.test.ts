import { expect, test } from 'vitest'
import Value from 'typebox/value'
import { xmlDocument } from '../../../src/common/formats.js'
import { renderEntry, renderEntryList, renderEntryWithReplies } from '../../../src/core/render/entry.js'
import { EntryJson } from '../../../src/core/render/schemas.js'
import type { EntryRow } from '../../../src/core/store/types.js'
import { parseXml } from '../helpers/harness.js'
import { element, elements, fields, parseDocument } from '../../helpers/xml-client.js'

const hosts = { domesticHost: 'kigo.example', globalHost: 'global.example:8443', publicScheme: 'https' as const }
const row: EntryRow = {
  id: '17',
  authorId: 'alice',
  authorName: 'Alice <A>',
  keyword: 'tea',
  body: 'green\u0001 & [[matcha]]',
  source: 'API',
  deployment: 'global',
  inReplyToStatusId: null,
  inReplyToUserId: null,
  createdAt: new Date('2026-11-21T09:30:00.789Z'),
}

test('JSON: docs/api.md#objects shape, 0 for no reply, links on the entry\'s deployment, icon on the request\'s', () => {
  const { json } = renderEntry(row, true, ['haiku', 'html'], { hosts, requestDeployment: 'domestic' })
  expect(Value.Check(EntryJson, json)).toBe(true)
  expect(json).toMatchObject({
    id: '17',
    created_at: '2026-11-21T09:30:00Z',
    favorited: 1,
    in_reply_to_status_id: 0,
    in_reply_to_user_id: 0,
    keyword: 'tea',
    link: 'https://global.example:8443/alice/17',
    text: 'tea=green\u0001 & [[matcha]]',
    haiku_text: 'green\u0001 & [[matcha]]',
    html: 'green\u0001 &amp; <a href="https://global.example:8443/keyword/matcha">matcha</a>',
    user: {
      id: 'alice',
      name: 'Alice <A>',
      screen_name: 'alice',
      followers_count: 0,
      profile_image_url: 'https://kigo.example/users/alice/profile.png',
      url: 'https://global.example:8443/alice/',
    },
  })
})

test('XML: empty reply elements, controls replaced by U+FFFD, text escaped', () => {
  const { xml } = renderEntry({ ...row, inReplyToStatusId: '3', inReplyToUserId: 'bob' }, false, [], { hosts, requestDeployment: 'global' })
  const doc = xmlDocument('status', xml)
  expect(doc.startsWith('<?xml version="1.0" encoding="UTF-8"?><status>')).toBe(true)
  const parsed = parseXml(doc).status as Record<string, unknown>
  expect(parsed.in_reply_to_status_id).toBe('3')
  expect(parsed.text).toBe('tea=green\uFFFD & [[matcha]]')
  expect(parsed.favorited).toBe('0')
  const none = parseXml(xmlDocument('status', renderEntry(row, false, [], { hosts, requestDeployment: 'global' }).xml)).status as Record<string, unknown>
  expect(none.in_reply_to_status_id).toBe('')
  expect(none.in_reply_to_user_id).toBe('')
})

test('target: the keyword posted to as {title, word}, with url_name for a user keyword, in JSON and XML', () => {
  const ctx = { hosts, requestDeployment: 'global' as const }
  const plain = renderEntry(row, false, [], ctx)
  expect(plain.json.target).toEqual({ title: 'tea', word: 'tea' })
  const own = renderEntry({ ...row, keyword: 'id:alice' }, false, [], ctx)
  expect(own.json.target).toEqual({ title: 'id:alice', word: 'id:alice', url_name: 'alice' })
  expect(Value.Check(EntryJson, own.json)).toBe(true)
  const target = element(parseDocument(xmlDocument('status', own.xml)), 'target')
  expect(fields(target)).toEqual({ title: 'id:alice', url_name: 'alice', word: 'id:alice' })
})

test('XML lists inside an object: one element per item named after the list, holding its fields; none when empty', () => {
  const ctx = { hosts, requestDeployment: 'global' as const }
  const r1: EntryRow = { ...row, id: '18', authorId: 'bob', authorName: 'Bob', body: 'first', inReplyToStatusId: '17', inReplyToUserId: 'alice', createdAt: new Date('2026-11-21T09:31:00Z') }
  const r2: EntryRow = { ...r1, id: '19', body: 'second', createdAt: new Date('2026-11-21T09:32:00Z') }
  const page = { entries: [row], replies: new Map([['17', [r1, r2]]]), starred: new Set(['19']), stars: new Map(), followers: new Map([['bob', 2]]) }
  const withReplies = renderEntryWithReplies(page, row, [], ctx)
  // A client walking the tree: each <replies> element is one reply, its children the reply's fields.
  const status = parseDocument(xmlDocument('status', withReplies.xml))
  const replies = elements(status, 'replies')
  expect(replies.map((r) => fields(r).id)).toEqual(['18', '19'])
  expect(fields(replies[0]!)).toMatchObject({ id: '18', created_at: '2026-11-21T09:31:00Z', favorited: '0', in_reply_to_status_id: '17', text: 'tea=first' })
  expect(fields(replies[1]!).favorited).toBe('1')
  expect(fields(element(replies[0]!, 'user'))).toMatchObject({ id: 'bob', followers_count: '2' })
  expect(elements(replies[0]!, 'replies')).toEqual([])
  // JSON unchanged: an array of Entries.
  expect((withReplies.json.replies as Array<{ id: string }>).map((r) => r.id)).toEqual(['18', '19'])
  expect(Value.Check(EntryJson, withReplies.json)).toBe(true)
  // No replies: no element at all (an empty one reads as a reply with no date).
  const alone = renderEntryWithReplies({ ...page, replies: new Map() }, row, [], ctx)
  const doc = xmlDocument('status', alone.xml)
  expect(doc).not.toContain('<replies')
  expect(alone.json.replies).toEqual([])
  // A list of a whole page keeps its plural root.
  const list = xmlDocument('statuses', renderEntryList(page, [], ctx).xml)
  expect(list).toMatch(/^<\?xml[^>]*\?><statuses type="array"><status><id>17<\/id>/)
  expect(elements(parseDocument(list), 'status').map((s) => elements(s, 'replies').length)).toEqual([2])
})
