// Image types judged by their bytes, never by a client's name or Content-Type
// (docs/api.md#statusesupdate rule 6). A signature (WHATWG MIME Sniffing Standard §6.1) is not enough: an
// upload is an image only when its header decodes, with dimensions of at least one pixel
// and at most `maxSide` a side (docs/security.md#bodies-and-uploads): eight bytes of a
// PNG signature followed by nothing, or a decompression bomb that declares 100,000 ×
// 100,000 pixels, is not an image kigo keeps. Only the header is read: PNG's IHDR
// (PNG §11.2.2), JPEG's first SOFn segment (ITU T.81 §B.2.2), GIF's logical screen
// descriptor (GIF89a §18) and WebP's first chunk, VP8 (RFC 6386 §9.1), VP8L or VP8X
// (RFC 9649 §2.5–2.7). Every read is bounds-checked; the JPEG walk is linear in the bytes.

export interface ImageType {
  contentType: string
  /** File extension without the dot. */
  ext: 'jpg' | 'png' | 'gif' | 'webp'
}

export interface ImageHeader extends ImageType {
  width: number
  height: number
}

/** The largest side accepted by default, in pixels (config core.limits.imageMaxSide). */
export const defaultImageMaxSide = 16_384

function startsWith(bytes: Buffer, signature: string | number[], at = 0): boolean {
  const sig = typeof signature === 'string' ? Buffer.from(signature, 'latin1') : Buffer.from(signature)
  return bytes.length >= at + sig.length && bytes.subarray(at, at + sig.length).equals(sig)
}

const pngSignature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]

/** PNG: the first chunk is IHDR, 13 bytes: width, height (4 bytes each, big-endian, 1..2^31-1), then bit depth and colour type. */
function png(bytes: Buffer): { width: number; height: number } | null {
  if (bytes.length < 8 + 8 + 13) return null
  if (bytes.readUInt32BE(8) !== 13 || !startsWith(bytes, 'IHDR', 12)) return null
  const width = bytes.readUInt32BE(16)
  const height = bytes.readUInt32BE(20)
  const depth = bytes[24]!
  const colour = bytes[25]!
  // The combinations PNG §11.2.2 allows.
  const depths: Record<number, number[]> = { 0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16] }
  if (!depths[colour]?.includes(depth)) return null
  return { width, height }
}

/** GIF: the logical screen descriptor follows the six-byte signature: width, height (2 bytes each, little-endian). */
function gif(bytes: Buffer): { width: number; height: number } | null {
  if (bytes.length < 13) return null
  return { width: bytes.readUInt16LE(6), height: bytes.readUInt16LE(8) }
}

/**
 * JPEG: from SOI, marker segments up to the first start-of-frame (SOF0–SOF15 but DHT C4,
 * JPG C8 and DAC CC), whose header gives height then width (2 bytes each, big-endian). A
 * scan (SOS) or the end (EOI) before any frame, or bytes that run out, is not an image.
 */
function jpeg(bytes: Buffer): { width: number; height: number } | null {
  let i = 2
  while (i + 4 <= bytes.length) {
    if (bytes[i] !== 0xff) return null
    const marker = bytes[i + 1]!
    // Fill bytes: any number of 0xFF before a marker (T.81 §B.1.1.2).
    if (marker === 0xff) {
      i++
      continue
    }
    // Markers without a length: TEM and RST0–7 (and SOI again, which is not valid here).
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      i += 2
      continue
    }
    if (marker === 0xd8 || marker === 0xd9 || marker === 0xda || marker === 0x00) return null
    const length = bytes.readUInt16BE(i + 2)
    if (length < 2) return null
    const isFrame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc
    if (isFrame) {
      // Precision (1), height (2), width (2), component count (1).
      if (length < 8 || i + 10 > bytes.length) return null
      return { height: bytes.readUInt16BE(i + 5), width: bytes.readUInt16BE(i + 7) }
    }
    i += 2 + length
  }
  return null
}

/** WebP: RIFF, its size, WEBP, then the first chunk: VP8 (lossy), VP8L (lossless) or VP8X (extended). */
function webp(bytes: Buffer): { width: number; height: number } | null {
  if (bytes.length < 20) return null
  const chunk = bytes.toString('latin1', 12, 16)
  const size = bytes.readUInt32LE(16)
  if (chunk === 'VP8 ') {
    // Frame tag (3 bytes; bit 0 clear on a key frame), start code 9D 01 2A, then 14-bit width and height.
    if (size < 10 || bytes.length < 30) return null
    if ((bytes[20]! & 1) !== 0 || !startsWith(bytes, [0x9d, 0x01, 0x2a], 23)) return null
    return { width: bytes.readUInt16LE(26) & 0x3fff, height: bytes.readUInt16LE(28) & 0x3fff }
  }
  if (chunk === 'VP8L') {
    // Signature 0x2F, then width − 1 and height − 1 in 14 bits each, least significant first.
    if (size < 5 || bytes.length < 25 || bytes[20] !== 0x2f) return null
    const bits = bytes.readUInt32LE(21)
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 }
  }
  if (chunk === 'VP8X') {
    // Flags (1), reserved (3), canvas width − 1 and height − 1 (3 bytes each, little-endian).
    if (size < 10 || bytes.length < 30) return null
    return { width: bytes.readUIntLE(24, 3) + 1, height: bytes.readUIntLE(27, 3) + 1 }
  }
  return null
}

/**
 * The image type and declared dimensions of `bytes`, or null when they are not an image
 * kigo accepts: no known signature, a header that does not decode, or a side of zero or
 * larger than `maxSide` pixels.
 */
export function decodeImageHeader(bytes: Buffer, maxSide = defaultImageMaxSide): ImageHeader | null {
  let type: ImageType
  let size: { width: number; height: number } | null
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) {
    type = { contentType: 'image/jpeg', ext: 'jpg' }
    size = jpeg(bytes)
  } else if (startsWith(bytes, pngSignature)) {
    type = { contentType: 'image/png', ext: 'png' }
    size = png(bytes)
  } else if (startsWith(bytes, 'GIF87a') || startsWith(bytes, 'GIF89a')) {
    type = { contentType: 'image/gif', ext: 'gif' }
    size = gif(bytes)
  } else if (startsWith(bytes, 'RIFF') && startsWith(bytes, 'WEBPVP', 8)) {
    type = { contentType: 'image/webp', ext: 'webp' }
    size = webp(bytes)
  } else {
    return null
  }
  if (size === null) return null
  const { width, height } = size
  if (width < 1 || height < 1 || width > maxSide || height > maxSide) return null
  return { ...type, width, height }
}

/** The type of an image whose header decodes within `maxSide` (decodeImageHeader), else null. */
export function sniffImage(bytes: Buffer, maxSide = defaultImageMaxSide): ImageType | null {
  const header = decodeImageHeader(bytes, maxSide)
  return header === null ? null : { contentType: header.contentType, ext: header.ext }
}
