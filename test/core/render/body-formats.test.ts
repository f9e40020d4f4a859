import { expect, test } from 'vitest'
import { ApiError } from '../../../src/common/errors.js'
import { parseBodyFormats } from '../../../src/core/render/body-formats.js'

test('comma-separated, trimmed, deduplicated', () => {
  expect(parseBodyFormats(undefined)).toEqual([])
  expect(parseBodyFormats('')).toEqual([])
  expect(parseBodyFormats('html, haiku,html,,html_mobile')).toEqual(['html', 'haiku', 'html_mobile'])
})

test('an unknown value is 400 naming the allowed ones', () => {
  let err: unknown
  try {
    parseBodyFormats('html,markdown')
  } catch (e) {
    err = e
  }
  expect(err).toBeInstanceOf(ApiError)
  expect((err as ApiError).status).toBe(400)
  expect((err as ApiError).message).toContain('markdown')
  expect((err as ApiError).message).toContain('haiku, html, html_touch, html_mobile')
})
