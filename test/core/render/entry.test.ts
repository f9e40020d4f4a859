import { expect, test } from 'vitest'
import Value from 'typebox/value'
import { xmlDocument } from '../../../src/common/formats.js'
import { renderEntry } from '../../../src/core/render/entry.js'
import { EntryJson } from '../../../src/core/render/schemas.js'
import type { EntryRow } from '../../../src/core/store/types.js'
import { parseXml } from '../helpers/harness.js'

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

test('JSON: SPEC §2.1 shape, 0 for no reply, links on the entry\'s deployment, icon on the request\'s', () => {
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
