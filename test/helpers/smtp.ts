// A real SMTP server for the mail suites (smtp-server on 127.0.0.1): it keeps what it is
// given, and can be told to hold every new connection without ever greeting it (a mail
// server that accepts and never answers), or be stopped and started again on its port (a
// mail server that is away, then back).
import { SMTPServer } from 'smtp-server'
import { freePort } from './ports.js'

export interface ReceivedMail {
  to: string[]
  /** The raw message, headers and body (quoted-printable soft breaks undone). */
  text: string
  /** The message exactly as received. */
  raw: string
}

export interface TestSmtp {
  port: number
  url: string
  mails: ReceivedMail[]
  /** Connections accepted and not closed yet. */
  readonly open: number
  /** While true, new connections are accepted and never greeted. */
  hang: boolean
  /** Ends the held connections with an error (the client sees its send fail). */
  release(): void
  /** Stops listening (and drops held connections): connecting is refused. */
  stop(): Promise<void>
  /** Listens again on the same port. */
  start(): Promise<void>
  close(): Promise<void>
}

/** The text of a received mail with quoted-printable line breaks and `=3D` undone. */
export const plainText = (text: string) => text.replace(/=\r?\n/g, '').replace(/=3D/g, '=')

/** A message's header fields (unfolded, RFC 5322 §2.2.3) and body. */
function splitMessage(raw: string): { headers: Map<string, string>; body: string } {
  const at = raw.indexOf('\r\n\r\n')
  const head = at < 0 ? raw : raw.slice(0, at)
  const headers = new Map<string, string>()
  for (const line of head.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
    const colon = line.indexOf(':')
    if (colon > 0) headers.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim())
  }
  return { headers, body: at < 0 ? '' : raw.slice(at + 4) }
}

/** A body in its transfer encoding (RFC 2045 §6: quoted-printable, base64, or as is), as UTF-8 text. */
function decodeBody(body: string, encoding: string | undefined): string {
  const e = (encoding ?? '7bit').toLowerCase()
  if (e === 'base64') return Buffer.from(body, 'base64').toString('utf8')
  if (e !== 'quoted-printable') return body
  const pieces = body.replace(/=\r?\n/g, '').split(/(=[0-9A-F]{2})/i)
  return Buffer.concat(pieces.map((p) => (/^=[0-9A-F]{2}$/i.test(p) ? Buffer.from([parseInt(p.slice(1), 16)]) : Buffer.from(p, 'utf8')))).toString('utf8')
}

/** A header's RFC 2047 encoded words (=?UTF-8?Q?…?= and =?UTF-8?B?…?=) decoded. */
function decodeWords(value: string): string {
  return value.replace(/\?=\s+=\?/g, '?==?').replace(/=\?([^?]+)\?([QB])\?([^?]*)\?=/gi, (_w, _charset: string, kind: string, text: string) =>
    kind.toUpperCase() === 'B' ? Buffer.from(text, 'base64').toString('utf8') : decodeBody(text.replace(/_/g, ' '), 'quoted-printable'))
}

/**
 * A received mail as its reader sees it: the subject, the plain text and the HTML
 * alternative (transfer encodings undone, line ends as LF).
 */
export function readMail(raw: string): { subject: string; text: string; html: string | null } {
  const { headers, body } = splitMessage(raw)
  const subject = decodeWords(headers.get('subject') ?? '')
  const type = headers.get('content-type') ?? 'text/plain'
  const parts: Array<{ type: string; text: string }> = []
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1]
  if (boundary === undefined) parts.push({ type, text: decodeBody(body, headers.get('content-transfer-encoding')) })
  else {
    for (const chunk of body.split(`--${boundary}`).slice(1)) {
      if (chunk.startsWith('--')) break
      const part = splitMessage(chunk.replace(/^\r\n/, '').replace(/\r\n$/, ''))
      parts.push({ type: part.headers.get('content-type') ?? 'text/plain', text: decodeBody(part.body, part.headers.get('content-transfer-encoding')) })
    }
  }
  const lf = (s: string) => s.replace(/\r\n/g, '\n')
  const text = parts.find((p) => p.type.startsWith('text/plain'))
  const html = parts.find((p) => p.type.startsWith('text/html'))
  return { subject, text: lf(text?.text ?? ''), html: html === undefined ? null : lf(html.text) }
}

export async function startTestSmtp(): Promise<TestSmtp> {
  const port = await freePort()
  const mails: ReceivedMail[] = []
  let open = 0
  let server: SMTPServer | undefined
  const held = new Set<() => void>()
  const state = { hang: false }
  const make = () =>
    new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      closeTimeout: 50,
      onConnect(_session, callback) {
        open += 1
        if (state.hang) held.add(() => callback(new Error('closing')))
        else callback()
      },
      onClose() {
        open -= 1
      },
      onData(stream, session, callback) {
        let text = ''
        stream.setEncoding('utf8')
        stream.on('data', (chunk: string) => (text += chunk))
        stream.on('end', () => {
          mails.push({ to: session.envelope.rcptTo.map((r) => r.address), text: plainText(text), raw: text })
          callback()
        })
      },
    })
  const start = async () => {
    server = make()
    await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve))
  }
  const release = () => {
    for (const end of held) end()
    held.clear()
  }
  const stop = async () => {
    const s = server
    server = undefined
    if (!s) return
    release()
    await new Promise<void>((resolve) => s.close(() => resolve()))
  }
  await start()
  return {
    port,
    url: `smtp://127.0.0.1:${port}`,
    mails,
    get open() {
      return open
    },
    get hang() {
      return state.hang
    },
    set hang(v: boolean) {
      state.hang = v
    },
    release,
    stop,
    start,
    close: stop,
  }
}
