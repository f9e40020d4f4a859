// A streamed (JSON or multipart) body, read only to explain a failed OAuth signature
// (auth/oauth/advice.ts): the request is refused afterwards, so nothing else needs it.

/** A streamed body read whole up to `limit` bytes (null beyond, or when it is not a stream). */
export function readStreamedBody(body: unknown, limit: number): Promise<Buffer | null> {
  const stream = body as NodeJS.ReadableStream | undefined
  if (!stream || typeof stream.on !== 'function') return Promise.resolve(null)
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    let size = 0
    stream.on('data', (c: Buffer) => {
      size += c.length
      if (size > limit) return resolve(null)
      chunks.push(c)
    })
    stream.on('end', () => resolve(Buffer.concat(chunks)))
    stream.on('error', () => resolve(null))
    // A client gone mid-body: settled all the same (a second resolve is ignored).
    stream.on('close', () => resolve(null))
  })
}
