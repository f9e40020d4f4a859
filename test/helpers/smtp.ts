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
          mails.push({ to: session.envelope.rcptTo.map((r) => r.address), text: plainText(text) })
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
