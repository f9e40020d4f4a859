import { expect, test } from 'vitest'
import { sniffImage } from '../../../src/core/photos/sniff.js'
import { images } from '../helpers/harness.js'

test('images are judged by their bytes (SPEC §2.2 rule 6)', () => {
  expect(sniffImage(images.jpg)).toEqual({ contentType: 'image/jpeg', ext: 'jpg' })
  expect(sniffImage(images.png)).toEqual({ contentType: 'image/png', ext: 'png' })
  expect(sniffImage(images.gif)).toEqual({ contentType: 'image/gif', ext: 'gif' })
  expect(sniffImage(Buffer.from('GIF87a...'))).toEqual({ contentType: 'image/gif', ext: 'gif' })
  expect(sniffImage(images.webp)).toEqual({ contentType: 'image/webp', ext: 'webp' })
})

test('anything else is not an image', () => {
  for (const bytes of [Buffer.alloc(0), Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'), Buffer.from('RIFF\0\0\0\0WAVEfmt '), Buffer.from([0xff, 0xd8]), Buffer.from('%PDF-1.7')]) {
    expect(sniffImage(bytes)).toBeNull()
  }
})
