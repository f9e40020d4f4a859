import { expect, test } from 'vitest'
import { safeEqual } from '../../src/common/secrets.js'

test('safeEqual is true only for the same bytes', () => {
  expect(safeEqual('s3cret-Value', 's3cret-Value')).toBe(true)
  expect(safeEqual(Buffer.from('pässwörd'), 'pässwörd')).toBe(true)
  expect(safeEqual('', '')).toBe(true)
  expect(safeEqual('s3cret-Valuf', 's3cret-Value')).toBe(false)
  expect(safeEqual('S3cret-Value', 's3cret-Value')).toBe(false)
})

test('safeEqual is false whatever the lengths, prefixes included', () => {
  expect(safeEqual('s3cret', 's3cret-Value')).toBe(false)
  expect(safeEqual('s3cret-Value-and-more', 's3cret-Value')).toBe(false)
  expect(safeEqual('', 's3cret-Value')).toBe(false)
  expect(safeEqual('s3cret-Value', '')).toBe(false)
  // Same characters, other encoding: compared as UTF-8 bytes.
  expect(safeEqual(Buffer.from('pässwörd', 'latin1'), 'pässwörd')).toBe(false)
})
