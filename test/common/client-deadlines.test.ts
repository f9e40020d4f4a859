// The idle deadline (gateway.http.idleTimeoutMs): a connection with no byte either way for
// that long is closed, found by a sweep rather than a timer Node moves at every read and
// write. The sweep is judged on an injected clock; the last test shows it closing a real
// connection whose request the app never answers.
import { connect } from 'node:net'
import Fastify from 'fastify'
import { describe, expect, it } from 'vitest'
import { closeSilentConnections, idleSweepMs, sweepIdle } from '../../src/common/client-deadlines.js'

const socket = (bytesRead: number, bytesWritten: number) => {
  const s = { bytesRead, bytesWritten, destroyed: false, destroy: () => ((s.destroyed = true), s) }
  return s
}

describe('sweepIdle', () => {
  it('closes a connection silent both ways for the whole deadline, and only then', () => {
    const quiet = socket(100, 2000)
    const open = new Map([[quiet, { bytes: 2100, since: 0 }]])
    sweepIdle(open, 60_000, 59_999)
    expect(quiet.destroyed).toBe(false)
    sweepIdle(open, 60_000, 60_000)
    expect(quiet.destroyed).toBe(true)
  })

  it('counts bytes in either direction as activity: the deadline starts again from the pass that saw them', () => {
    const reading = socket(100, 2000)
    const writing = socket(100, 2000)
    const open = new Map([
      [reading, { bytes: 2100, since: 0 }],
      [writing, { bytes: 2100, since: 0 }],
    ])
    reading.bytesRead += 1
    writing.bytesWritten += 1
    sweepIdle(open, 60_000, 50_000)
    sweepIdle(open, 60_000, 100_000)
    expect([reading.destroyed, writing.destroyed]).toEqual([false, false])
    sweepIdle(open, 60_000, 110_000)
    expect([reading.destroyed, writing.destroyed]).toEqual([true, true])
  })

  it('sweeps twelve times per deadline, between 100 ms and 5 s apart', () => {
    expect(idleSweepMs(60_000)).toBe(5000)
    expect(idleSweepMs(12_000)).toBe(1000)
    expect(idleSweepMs(500)).toBe(100)
  })
})

it('closes a real connection whose request is never answered, once the idle deadline has passed', async () => {
  const app = Fastify()
  closeSilentConnections(app, 300)
  app.get('/never', () => new Promise(() => undefined))
  await app.listen({ port: 0, host: '127.0.0.1' })
  try {
    const { port } = app.server.address() as { port: number }
    const client = connect(port, '127.0.0.1')
    const closed = new Promise<string>((resolve) => {
      let got = ''
      client.on('data', (d: Buffer) => (got += d.toString()))
      client.on('close', () => resolve(got))
    })
    client.write('GET /never HTTP/1.1\r\nHost: x\r\n\r\n')
    // Closed without an answer: nothing was ever written back.
    expect(await closed).toBe('')
  } finally {
    await app.close()
  }
})
