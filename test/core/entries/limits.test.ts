import { describe, expect, test } from 'vitest'
import { ApiError } from '../../../src/common/errors.js'
import { checkBody, checkKeyword, checkSource, chooseSource, countChars } from '../../../src/core/entries/limits.js'

const limits = { bodyChars: 10, keywordChars: 5, sourceChars: 3 }

function failure(fn: () => void): { status: number; code: string } | null {
  try {
    fn()
    return null
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError)
    return { status: (err as ApiError).status, code: (err as ApiError).code }
  }
}

describe('limits (docs/api.md#statusesupdate rule 7)', () => {
  test('characters are code points: an astral character counts once', () => {
    expect(countChars('😀😀a')).toBe(3)
    expect(failure(() => checkBody('😀'.repeat(10), limits))).toBeNull()
    expect(failure(() => checkBody('😀'.repeat(11), limits))).toEqual({ status: 400, code: 'status_too_long' })
  })

  test('keyword and source lengths', () => {
    expect(failure(() => checkKeyword('abcde', limits))).toBeNull()
    expect(failure(() => checkKeyword('abcdef', limits))).toEqual({ status: 400, code: 'keyword_too_long' })
    expect(failure(() => checkSource('abc', limits))).toBeNull()
    expect(failure(() => checkSource('abcd', limits))).toEqual({ status: 400, code: 'source_too_long' })
  })

  test('newline and tab are allowed in keyword and source; other controls are not', () => {
    expect(failure(() => checkKeyword('a\nb\tc', limits))).toBeNull()
    for (const c of ['\u0001', '\r', '\u001b', '\u007f', '\u0085']) {
      expect(failure(() => checkKeyword(`a${c}`, limits))).toEqual({ status: 400, code: 'invalid_keyword' })
      expect(failure(() => checkSource(`a${c}`, limits))).toEqual({ status: 400, code: 'invalid_source' })
    }
  })

  test('source defaults to API when blank, and is trimmed', () => {
    expect(chooseSource(undefined)).toBe('API')
    expect(chooseSource('  ')).toBe('API')
    expect(chooseSource(' app ')).toBe('app')
  })
})
