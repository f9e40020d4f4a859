// Image types judged by their bytes, never by a client's name or Content-Type
// (SPEC §2.2 rule 6): the signatures of the WHATWG MIME Sniffing Standard §6.1.

export interface ImageType {
  contentType: string
  /** File extension without the dot. */
  ext: 'jpg' | 'png' | 'gif' | 'webp'
}

function startsWith(bytes: Buffer, signature: string | number[], at = 0): boolean {
  const sig = typeof signature === 'string' ? Buffer.from(signature, 'latin1') : Buffer.from(signature)
  return bytes.length >= at + sig.length && bytes.subarray(at, at + sig.length).equals(sig)
}

export function sniffImage(bytes: Buffer): ImageType | null {
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return { contentType: 'image/jpeg', ext: 'jpg' }
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return { contentType: 'image/png', ext: 'png' }
  if (startsWith(bytes, 'GIF87a') || startsWith(bytes, 'GIF89a')) return { contentType: 'image/gif', ext: 'gif' }
  if (startsWith(bytes, 'RIFF') && startsWith(bytes, 'WEBPVP', 8)) return { contentType: 'image/webp', ext: 'webp' }
  return null
}
