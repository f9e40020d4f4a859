// The smallest headers of each image type kigo accepts (src/core/photos/sniff.ts), built
// field by field from their formats, for any width and height: a valid image is one of
// these followed by anything, and a bomb is one declaring a huge size.

/** PNG signature and IHDR (PNG §11.2.2): 8-bit RGBA, CRC included. */
export function pngHeader(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(width, 0)
  ihdr.writeUInt32BE(height, 4)
  ihdr[8] = 8
  ihdr[9] = 6
  const type = Buffer.from('IHDR', 'latin1')
  const length = Buffer.alloc(4)
  length.writeUInt32BE(13)
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(Buffer.concat([type, ihdr])))
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), length, type, ihdr, crc])
}

/** JPEG: SOI, a JFIF APP0 segment, then a baseline SOF0 of three components (T.81 §B.2.2). */
export function jpegHeader(width: number, height: number): Buffer {
  const app0 = Buffer.from([0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00])
  const sof = Buffer.from([0xff, 0xc0, 0x00, 0x11, 0x08, 0, 0, 0, 0, 0x03, 0x01, 0x22, 0x00, 0x02, 0x11, 0x01, 0x03, 0x11, 0x01])
  sof.writeUInt16BE(height, 5)
  sof.writeUInt16BE(width, 7)
  return Buffer.concat([Buffer.from([0xff, 0xd8]), app0, sof])
}

/** GIF89a signature and logical screen descriptor. */
export function gifHeader(width: number, height: number): Buffer {
  const lsd = Buffer.alloc(7)
  lsd.writeUInt16LE(width, 0)
  lsd.writeUInt16LE(height, 2)
  return Buffer.concat([Buffer.from('GIF89a', 'latin1'), lsd])
}

/** WebP: RIFF container and a first chunk of the kind asked. */
export function webpHeader(kind: 'VP8 ' | 'VP8L' | 'VP8X', width: number, height: number): Buffer {
  let payload: Buffer
  if (kind === 'VP8 ') {
    // Key frame tag (version 0, shown, first partition size 0), start code, 14-bit sizes.
    payload = Buffer.from([0x10, 0x00, 0x00, 0x9d, 0x01, 0x2a, 0, 0, 0, 0])
    payload.writeUInt16LE(width & 0x3fff, 6)
    payload.writeUInt16LE(height & 0x3fff, 8)
  } else if (kind === 'VP8L') {
    payload = Buffer.alloc(5)
    payload[0] = 0x2f
    payload.writeUInt32LE(((width - 1) & 0x3fff) | (((height - 1) & 0x3fff) << 14), 1)
  } else {
    payload = Buffer.alloc(10)
    payload.writeUIntLE(width - 1, 4, 3)
    payload.writeUIntLE(height - 1, 7, 3)
  }
  const chunkSize = Buffer.alloc(4)
  chunkSize.writeUInt32LE(payload.length)
  const body = Buffer.concat([Buffer.from('WEBP', 'latin1'), Buffer.from(kind, 'latin1'), chunkSize, payload])
  const riffSize = Buffer.alloc(4)
  riffSize.writeUInt32LE(body.length)
  return Buffer.concat([Buffer.from('RIFF', 'latin1'), riffSize, body])
}

function crc32(bytes: Buffer): number {
  let crc = 0xffffffff
  for (const byte of bytes) {
    crc ^= byte
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1
  }
  return (crc ^ 0xffffffff) >>> 0
}
