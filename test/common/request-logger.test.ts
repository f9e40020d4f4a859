import { Writable } from 'node:stream'
import Fastify, { type FastifyBaseLogger } from 'fastify'
import pino from 'pino'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { loggerOptions } from '../../src/common/logger.js'
import { requestLogging } from '../../src/common/request-logger.js'

function capture(): { lines: Array<Record<string, unknown>>; stream: Writable } {
  const lines: Array<Record<string, unknown>> = []
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString('utf8').split('\n')) if (l.trim()) lines.push(JSON.parse(l) as Record<string, unknown>)
      done()
    },
  })
  return { lines, stream }
}

const apps: Array<{ close(): Promise<unknown> }> = []
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()))
})

async function appWith(level: string) {
  const { lines, stream } = capture()
  const logger = pino(loggerOptions(level, 'test'), stream) as unknown as FastifyBaseLogger
  const childSpy = vi.spyOn(logger, 'child')
  const app = Fastify({ loggerInstance: logger, ...requestLogging(), genReqId: () => 'req-1' })
  apps.push(app)
  app.get('/quiet', async (request) => {
    request.log.info('an info line')
    request.log.debug({ detail: 1 }, 'a debug line')
    return { ok: true }
  })
  app.get('/warns', async (request) => {
    request.log.warn({ headers: { authorization: 'Basic c2VjcmV0OnNlY3JldA==' } }, 'something odd')
    return { ok: true }
  })
  app.get('/chatty', { logLevel: 'info' }, async (request) => {
    request.log.info('route-level info')
    return { ok: true }
  })
  app.get('/raised', async (request) => {
    const before = (request.log as FastifyBaseLogger & { isLevelEnabled(l: string): boolean }).isLevelEnabled('debug')
    request.log.level = 'debug'
    request.log.debug('now at debug')
    return { before, after: (request.log as FastifyBaseLogger & { isLevelEnabled(l: string): boolean }).isLevelEnabled('debug') }
  })
  app.get('/nested', async (request) => {
    request.log.child({ part: 'store' }).error('from a child')
    return { level: request.log.level }
  })
  await app.ready()
  // Lines written while starting are not the requests' lines.
  await new Promise((r) => setImmediate(r))
  lines.length = 0
  childSpy.mockClear()
  return { app, lines, childSpy }
}

describe('request logger', () => {
  it('writes nothing and makes no pino child for a request that logs below the level', async () => {
    const { app, lines, childSpy } = await appWith('warn')
    expect((await app.inject('/quiet')).statusCode).toBe(200)
    expect(lines).toEqual([])
    expect(childSpy).not.toHaveBeenCalled()
  })

  it('writes a line at an enabled level with the request ID, redacted as before', async () => {
    const { app, lines } = await appWith('warn')
    expect((await app.inject('/warns')).statusCode).toBe(200)
    await new Promise((r) => setImmediate(r))
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatchObject({ level: 40, name: 'test', reqId: 'req-1', msg: 'something odd', headers: { authorization: '[redacted]' } })
  })

  it('follows a route-level log level', async () => {
    const { app, lines } = await appWith('warn')
    await app.inject('/chatty')
    await app.inject('/quiet')
    await new Promise((r) => setImmediate(r))
    expect(lines.map((l) => l.msg)).toEqual(['route-level info'])
    expect(lines[0]).toMatchObject({ reqId: 'req-1', level: 30 })
  })

  it('gives children the request ID and reports the level', async () => {
    const { app, lines } = await appWith('info')
    const res = await app.inject('/nested')
    await new Promise((r) => setImmediate(r))
    expect(res.json()).toEqual({ level: 'info' })
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatchObject({ reqId: 'req-1', part: 'store', msg: 'from a child', level: 50 })
  })

  it('answers isLevelEnabled, and a level raised for one request applies to that request only', async () => {
    const { app, lines } = await appWith('warn')
    expect((await app.inject('/raised')).json()).toEqual({ before: false, after: true })
    await app.inject('/quiet')
    await new Promise((r) => setImmediate(r))
    expect(lines.map((l) => [l.msg, l.reqId])).toEqual([['now at debug', 'req-1']])
  })

  it('writes info lines when the level is info', async () => {
    const { app, lines } = await appWith('info')
    await app.inject('/quiet')
    await new Promise((r) => setImmediate(r))
    expect(lines.map((l) => [l.msg, l.reqId])).toEqual([['an info line', 'req-1']])
  })
})
