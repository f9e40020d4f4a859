import { describe, expect, it, test } from 'vitest'
import { decodeImageHeader, sniffImage } from '../../../src/core/photos/sniff.js'
import { images } from '../helpers/harness.js'
import { gifHeader, jpegHeader, pngHeader, webpHeader } from '../../helpers/image-headers.js'

test('images are judged by their bytes (docs/api.md#statusesupdate rule 6)', () => {
  expect(sniffImage(images.jpg)).toEqual({ contentType: 'image/jpeg', ext: 'jpg' })
  expect(sniffImage(images.png)).toEqual({ contentType: 'image/png', ext: 'png' })
  expect(sniffImage(images.gif)).toEqual({ contentType: 'image/gif', ext: 'gif' })
  expect(sniffImage(images.webp)).toEqual({ contentType: 'image/webp', ext: 'webp' })
})

test('anything else is not an image', () => {
  for (const bytes of [Buffer.alloc(0), Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'), Buffer.from('RIFF\0\0\0\0WAVEfmt '), Buffer.from([0xff, 0xd8]), Buffer.from('%PDF-1.7')]) {
    expect(sniffImage(bytes)).toBeNull()
  }
})

describe('each format: its smallest valid header is accepted with its dimensions', () => {
  it.each([
    ['PNG IHDR', pngHeader(640, 480), 'png'],
    ['JPEG SOF0', jpegHeader(640, 480), 'jpg'],
    ['GIF logical screen descriptor', gifHeader(640, 480), 'gif'],
    ['WebP VP8', webpHeader('VP8 ', 640, 480), 'webp'],
    ['WebP VP8L', webpHeader('VP8L', 640, 480), 'webp'],
    ['WebP VP8X', webpHeader('VP8X', 640, 480), 'webp'],
  ])('%s', (_name, bytes, ext) => {
    expect(decodeImageHeader(bytes)).toMatchObject({ ext, width: 640, height: 480 })
  })

  it('a progressive JPEG (SOF2) after other segments and fill bytes', () => {
    const sof0 = jpegHeader(300, 200)
    const progressive = Buffer.concat([sof0.subarray(0, 20), Buffer.from([0xff, 0xff]), Buffer.from([0xff, 0xfe, 0x00, 0x05, 0x61, 0x62, 0x63]), sof0.subarray(20)])
    progressive[progressive.length - 18] = 0xc2
    expect(decodeImageHeader(progressive)).toMatchObject({ ext: 'jpg', width: 300, height: 200 })
  })

  it('a side of exactly the maximum is accepted', () => {
    expect(decodeImageHeader(pngHeader(16_384, 1))).toMatchObject({ width: 16_384, height: 1 })
    expect(decodeImageHeader(webpHeader('VP8X', 16_384, 16_384))).toMatchObject({ width: 16_384, height: 16_384 })
  })
})

describe('a signature whose header does not decode is not an image', () => {
  it('eight bytes of a PNG signature followed by nothing', () => {
    expect(sniffImage(pngHeader(1, 1).subarray(0, 8))).toBeNull()
  })

  it.each([
    ['PNG cut inside IHDR', pngHeader(1, 1).subarray(0, 24)],
    ['PNG whose first chunk is not IHDR', Buffer.concat([pngHeader(1, 1).subarray(0, 12), Buffer.from('IDAT'), pngHeader(1, 1).subarray(16)])],
    ['PNG with an impossible bit depth', (() => { const b = pngHeader(1, 1); b[24] = 7; return b })()],
    ['JPEG SOI and APP0, no frame', jpegHeader(1, 1).subarray(0, 20)],
    ['JPEG cut inside its frame header', jpegHeader(1, 1).subarray(0, 26)],
    ['JPEG whose scan comes before any frame', Buffer.from([0xff, 0xd8, 0xff, 0xda, 0x00, 0x08, 0, 0, 0, 0, 0, 0])],
    ['JPEG with a segment length running past the end', Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0xff, 0xff, 0, 0])],
    ['GIF signature alone', Buffer.from('GIF89a')],
    ['WebP with no chunk', Buffer.from('RIFF\x04\x00\x00\x00WEBPVP8 ', 'latin1')],
    ['WebP VP8 without its start code', (() => { const b = webpHeader('VP8 ', 1, 1); b[23] = 0; return b })()],
    ['WebP VP8L without its signature byte', (() => { const b = webpHeader('VP8L', 1, 1); b[20] = 0; return b })()],
    ['WebP VP8X cut short', webpHeader('VP8X', 1, 1).subarray(0, 26)],
  ])('%s', (_name, bytes) => {
    expect(sniffImage(bytes)).toBeNull()
  })

  it.each([
    ['PNG', pngHeader(0, 10)],
    ['JPEG (height to come in a DNL segment)', jpegHeader(10, 0)],
    ['GIF', gifHeader(0, 0)],
  ])('a side of zero pixels: %s', (_name, bytes) => {
    expect(sniffImage(bytes)).toBeNull()
  })
})

describe('a decompression bomb: a declared size beyond the maximum is not an image', () => {
  it.each([
    ['PNG 100,000 × 100,000', pngHeader(100_000, 100_000)],
    ['PNG 16,385 × 1', pngHeader(16_385, 1)],
    ['JPEG 65,535 × 65,535', jpegHeader(65_535, 65_535)],
    ['GIF 65,535 × 65,535', gifHeader(65_535, 65_535)],
    ['WebP VP8X 16,777,216 × 16,777,216', webpHeader('VP8X', 16_777_216, 16_777_216)],
  ])('%s', (_name, bytes) => {
    expect(sniffImage(bytes)).toBeNull()
  })

  it('the maximum is configurable', () => {
    expect(sniffImage(pngHeader(2000, 1000), 1000)).toBeNull()
    expect(sniffImage(pngHeader(1000, 1000), 1000)).toEqual({ contentType: 'image/png', ext: 'png' })
    expect(sniffImage(webpHeader('VP8L', 16_384, 16_384), 100_000)).toEqual({ contentType: 'image/webp', ext: 'webp' })
  })
})
