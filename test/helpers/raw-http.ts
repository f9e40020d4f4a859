// HTTP over a raw socket, for the tests that need a request head exactly as written (no
// Host, two Host fields, odd spellings), which Node's clients would tidy up.
import { connect } from 'node:net'

/** Writes `text` to 127.0.0.1:`port` exactly as written and resolves with all that came back once the server ends or closes. */
export function rawRequest(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port })
    let out = ''
    socket.setEncoding('latin1')
    socket.on('data', (d: string) => (out += d))
    socket.on('end', () => resolve(out))
    socket.on('close', () => resolve(out))
    socket.on('error', reject)
    socket.write(text)
  })
}

/** A GET of `path` with `host` as its one Host field (none when null) and `extra` header lines. */
export const rawGet = (port: number, path: string, host: string | null, extra: string[] = []) =>
  rawRequest(port, [`GET ${path} HTTP/1.1`, ...(host === null ? [] : [`Host: ${host}`]), ...extra, 'Connection: close', '', ''].join('\r\n'))

export const statusOf = (response: string) => Number(/^HTTP\/1\.[01] (\d{3})/.exec(response)?.[1] ?? 0)
export const bodyOf = (response: string) => response.slice(response.indexOf('\r\n\r\n') + 4)
