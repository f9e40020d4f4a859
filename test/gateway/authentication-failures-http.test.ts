// A credential check that cannot finish (docs/operations.md#dependability): the identity
// store away is a 503 with Retry-After that clients retry, logged where the outage starts
// and ends only; a programming error in the check is kigo's own fault, a 500
// internal_error logged with its stack, never a 503 that tells clients to wait it out.
import { rmSync } from 'node:fs'
import { Writable } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig, type Config } from '../../src/common/config.js'
import { buildGatewayApp } from '../../src/gateway/app.js'
import type { CredentialLookup } from '../../src/gateway/domain/auth.js'
import { createMetrics } from '../../src/gateway/metrics/metrics.js'
import { createReplayCaches } from '../../src/gateway/replay/create.js'
import { createFailureThrottle } from '../../src/gateway/throttle/create.js'
import { stackEnv } from '../helpers/stack.js'
import { embeddedDataDir } from '../helpers/embedded-template.js'

let dir: string
let config: Config

beforeAll(async () => {
  dir = embeddedDataDir('auth-failures')
  config = loadConfig({ env: (await stackEnv(dir)).env, overrides: { gateway: { host: '127.0.0.1' } } })
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** The public gateway over an identity store whose every lookup fails with `failure()`, and its log lines. */
async function gatewayOver(failure: () => unknown): Promise<{ app: FastifyInstance; lines: Array<Record<string, unknown>> }> {
  const fail = async (): Promise<never> => {
    throw failure()
  }
  const lookup: CredentialLookup = { apiPassword: fail, consumer: fail, accessToken: fail }
  const lines: Array<Record<string, unknown>> = []
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>)
      done()
    },
  })
  const app = await buildGatewayApp({
    config,
    lookup,
    replay: createReplayCaches(config.auth, undefined),
    throttle: createFailureThrottle(config.auth, undefined),
    metrics: createMetrics({ processMetrics: false }),
    ready: async () => ({}),
    logger: pino({ level: 'debug' }, sink),
  })
  return { app, lines }
}

const basic = `Basic ${Buffer.from('alice:an-api-password').toString('base64')}`
const timeline = (app: FastifyInstance, format: 'json' | 'xml') =>
  app.inject({ method: 'GET', url: `/api/statuses/friends_timeline.${format}`, headers: { host: config.domesticHost, authorization: basic } })

describe('a credential check that cannot finish', () => {
  it('the identity store refusing connections: 503 store_unavailable with Retry-After, in format, no error line', async () => {
    const { app, lines } = await gatewayOver(() => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }))
    try {
      const json = await timeline(app, 'json')
      expect(json.statusCode).toBe(503)
      expect(json.headers['retry-after']).toBe('5')
      expect(json.json()).toEqual({ error: { status: 503, code: 'store_unavailable', message: 'Credentials cannot be checked right now; try again shortly' } })
      const xml = await timeline(app, 'xml')
      expect(xml.statusCode).toBe(503)
      expect(xml.headers['content-type']).toBe('application/xml; charset=utf-8')
      expect(xml.body).toContain('<code>store_unavailable</code>')
      expect(lines.filter((l) => (l.level as number) >= 50)).toEqual([])
    } finally {
      await app.close()
    }
  })

  it('a TypeError in the check: 500 internal_error without detail and without Retry-After, logged with its stack', async () => {
    const { app, lines } = await gatewayOver(() => new TypeError("Cannot read properties of undefined (reading 'secret')"))
    try {
      const res = await timeline(app, 'json')
      expect(res.statusCode).toBe(500)
      expect(res.headers['retry-after']).toBeUndefined()
      expect(res.json()).toEqual({ error: { status: 500, code: 'internal_error', message: 'Internal error' } })
      const errorLines = lines.filter((l) => (l.level as number) >= 50)
      expect(errorLines).toHaveLength(1)
      expect(errorLines[0]!.msg).toBe('authentication failed')
      expect(JSON.stringify(errorLines[0]!.err)).toMatch(/TypeError.*reading 'secret'.*"stack"/)
    } finally {
      await app.close()
    }
  })
})
