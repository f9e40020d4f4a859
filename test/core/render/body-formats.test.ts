import { expect, test } from 'vitest'
import { parseBodyFormats } from '../../../src/core/render/body-formats.js'

test('comma-separated, trimmed, deduplicated', () => {
  expect(parseBodyFormats(undefined)).toEqual([])
  expect(parseBodyFormats('')).toEqual([])
  expect(parseBodyFormats('html, haiku,html,,html_mobile')).toEqual(['html', 'haiku', 'html_mobile'])
})

test('unknown values are ignored (clients of the original send `api`); the known ones are kept', () => {
  expect(parseBodyFormats('api')).toEqual([])
  expect(parseBodyFormats('html,markdown, api ,haiku')).toEqual(['html', 'haiku'])
})
