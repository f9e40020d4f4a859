import { expect, test } from 'vitest'
import { mayDelete } from '../../../src/core/entries/rights.js'

test('the author may delete (docs/api.md#statusesshow-and-statusesdestroy)', () => {
  expect(mayDelete({ authorId: 'alice', keyword: 'tea' }, 'alice')).toBe(true)
})

test('the owner of the user keyword id:X may delete what others posted there', () => {
  expect(mayDelete({ authorId: 'alice', keyword: 'id:bob' }, 'bob')).toBe(true)
})

test('nobody else may', () => {
  expect(mayDelete({ authorId: 'alice', keyword: 'tea' }, 'bob')).toBe(false)
  expect(mayDelete({ authorId: 'alice', keyword: 'id:bob' }, 'carol')).toBe(false)
  expect(mayDelete({ authorId: 'alice', keyword: 'id:bobby' }, 'bob')).toBe(false)
  expect(mayDelete({ authorId: 'alice', keyword: 'ID:bob' }, 'bob')).toBe(false)
})
