// The core's outage lines (docs/operations.md#what-an-outage-looks-like) around a core that
// closes: it answers the requests it holds while it refuses new ones, so an answer to a
// forward sent before the outage started does not end it; one sent afterwards does.
import { randomBytes } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DependencyWatch } from '../../src/common/dependency-watch.js'
import { identityKey } from '../../src/common/identity.js'
import { registerForwarding } from '../../src/gateway/proxy/forward.js'

describe('the core watch', () => {
  const lines: string[] = []
  const watch = new DependencyWatch('core', { warn: (_o, message) => lines.push(message) })
  let core: Server
  let gateway: FastifyInstance
  let base: string
  /** Answers the held request ("/held") when called. */
  let release: () => void = () => undefined
  let arrived: () => void = () => undefined
  const heldArrived = new Promise<void>((resolve) => (arrived = resolve))

  beforeAll(async () => {
    core = createServer((req, res) => {
      const answer = () => res.end('{}')
      if (req.url !== '/held') return answer()
      release = answer
      arrived()
    })
    await new Promise<void>((resolve) => core.listen(0, '127.0.0.1', resolve))
    gateway = Fastify()
    const forward = registerForwarding(gateway, {
      coreUrl: `http://127.0.0.1:${(core.address() as AddressInfo).port}`,
      timeoutMs: 10_000,
      identityKey: identityKey(randomBytes(32).toString('base64')),
      stripCredentials: false,
      watch,
    })
    gateway.get('/*', (request, reply) => forward(request, reply, { identity: null, host: 'localhost', scheme: 'http', clientIp: '127.0.0.1', operation: '', bodySha256: '' }))
    base = await gateway.listen({ port: 0, host: '127.0.0.1' })
  })

  afterAll(async () => {
    watch.close()
    await gateway.close()
    core.closeAllConnections()
    await new Promise<void>((resolve) => core.close(() => resolve()))
  })

  it('stays down when a forward sent before the outage is answered, and ends on one sent after', async () => {
    const held = fetch(`${base}/held`)
    await heldArrived
    await new Promise((resolve) => setTimeout(resolve, 5))
    watch.failed(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))
    release()
    expect((await held).status).toBe(200)
    expect(watch.down).toBe(true)
    expect(lines).toEqual(['core outage started'])
    expect((await fetch(`${base}/later`)).status).toBe(200)
    expect(watch.down).toBe(false)
    expect(lines).toEqual(['core outage started', 'core outage ended'])
  })
})
