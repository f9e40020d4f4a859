import { inflateSync, crc32 } from 'node:zlib'
import { expect, test } from 'vitest'
import { identiconPng, identiconSize } from '../../../src/core/photos/identicon.js'

/** Reads a PNG as any decoder would: signature, chunks with their CRCs, IHDR, pixels. */
function decode(png: Buffer) {
  expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))
  const chunks: Array<{ type: string; data: Buffer }> = []
  for (let o = 8; o < png.length;) {
    const len = png.readUInt32BE(o)
    const type = png.toString('latin1', o + 4, o + 8)
    const data = png.subarray(o + 8, o + 8 + len)
    expect(png.readUInt32BE(o + 8 + len)).toBe(crc32(png.subarray(o + 4, o + 8 + len)) >>> 0)
    chunks.push({ type, data })
    o += 12 + len
  }
  expect(chunks.map((c) => c.type)).toEqual(['IHDR', 'IDAT', 'IEND'])
  const ihdr = chunks[0]!.data
  const width = ihdr.readUInt32BE(0)
  const height = ihdr.readUInt32BE(4)
  expect([ihdr[8], ihdr[9]]).toEqual([8, 2])
  const raw = inflateSync(chunks[1]!.data)
  expect(raw.length).toBe((1 + width * 3) * height)
  const pixel = (x: number, y: number) => raw.subarray(y * (1 + width * 3) + 1 + x * 3, y * (1 + width * 3) + 4 + x * 3).toString('hex')
  return { width, height, pixel }
}

test('a valid PNG, square, mirrored left to right', () => {
  const img = decode(identiconPng('alice'))
  expect(img.width).toBe(identiconSize)
  expect(img.height).toBe(identiconSize)
  const colours = new Set<string>()
  for (let y = 0; y < img.height; y++) {
    for (let x = 0; x < img.width; x++) {
      expect(img.pixel(x, y)).toBe(img.pixel(img.width - 1 - x, y))
      colours.add(img.pixel(x, y))
    }
  }
  expect(colours.size).toBeLessThanOrEqual(2)
})

test('deterministic per user, different between users', () => {
  expect(identiconPng('alice').equals(identiconPng('alice'))).toBe(true)
  expect(identiconPng('alice').equals(identiconPng('bob'))).toBe(false)
})
