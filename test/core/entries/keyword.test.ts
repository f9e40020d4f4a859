import { describe, expect, test } from 'vitest'
import { chooseKeyword, userKeyword } from '../../../src/core/entries/keyword.js'
import { entryText } from '../../../src/core/entries/text.js'

describe('chooseKeyword (docs/api.md#statusesupdate rule 3)', () => {
  test('an explicit keyword wins, trimmed, and the status stays whole', () => {
    expect(chooseKeyword({ keyword: '  coffee ', status: 'tea=green', poster: 'alice' })).toEqual({ keyword: 'coffee', body: 'tea=green' })
  })

  test('a blank explicit keyword is no keyword', () => {
    expect(chooseKeyword({ keyword: '   ', status: 'tea=green', poster: 'alice' })).toEqual({ keyword: 'tea', body: 'green' })
  })

  test('the part before the first = is the keyword, removed with the = from the body', () => {
    expect(chooseKeyword({ status: ' spring rain = falls = softly', poster: 'alice' })).toEqual({ keyword: 'spring rain', body: ' falls = softly' })
  })

  test('an empty part before = is not a keyword', () => {
    expect(chooseKeyword({ status: '  =x', poster: 'alice' })).toEqual({ keyword: 'id:alice', body: '  =x' })
  })

  test("without either, the poster's user keyword", () => {
    expect(chooseKeyword({ status: 'plain words', poster: 'bob' })).toEqual({ keyword: 'id:bob', body: 'plain words' })
    expect(userKeyword('bob')).toBe('id:bob')
  })

  test('a leading @id is plain text', () => {
    expect(chooseKeyword({ status: '@carol hi', poster: 'bob' })).toEqual({ keyword: 'id:bob', body: '@carol hi' })
  })
})

describe('entryText (docs/api.md#objects)', () => {
  test("the body alone on the author's own user keyword", () => {
    expect(entryText({ keyword: 'id:alice', body: 'hi', authorId: 'alice' })).toBe('hi')
  })

  test('{keyword}={body} elsewhere, including on another user keyword', () => {
    expect(entryText({ keyword: 'tea', body: 'green', authorId: 'alice' })).toBe('tea=green')
    expect(entryText({ keyword: 'id:bob', body: 'hello', authorId: 'alice' })).toBe('id:bob=hello')
  })
})
