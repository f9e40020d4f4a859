// The gateway app is built from named plugins that declare what they need: the public app
// has every one, the operator app only the error answers and health, and a plugin registered without what it
// depends on is refused at start-up rather than running without it.
import Fastify from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import authentication from '../../src/gateway/plugins/authentication.js'
import forwarding from '../../src/gateway/plugins/forwarding.js'
import { gatewayApp, type GatewayApp } from '../helpers/gateway-app.js'

describe('the gateway as named plugins', () => {
  let gateway: GatewayApp
  beforeAll(async () => {
    gateway = await gatewayApp()
  })
  afterAll(async () => {
    await gateway?.close()
  })

  const all = ['kigo-body-parsers', 'kigo-error-answers', 'kigo-request-log', 'kigo-health', 'kigo-origin', 'kigo-authentication', 'kigo-forwarding']

  it('gives the public app every plugin and the operator app only the error answers and health', () => {
    for (const name of all) expect(gateway.app.hasPlugin(name), name).toBe(true)
    expect(all.filter((name) => gateway.operator.hasPlugin(name))).toEqual(['kigo-error-answers', 'kigo-health'])
  })

  it('refuses a plugin whose dependencies are not registered', async () => {
    for (const [plugin, missing] of [
      [forwarding, 'kigo-body-parsers'],
      [authentication, 'kigo-origin'],
    ] as const) {
      const app = Fastify()
      // Never reached: the dependency check comes first, so the options do not matter.
      await expect(app.register(plugin as never, {} as never).ready()).rejects.toThrow(missing)
      await app.close().catch(() => undefined)
    }
  })
})
