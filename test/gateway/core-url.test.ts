// Embedded mode with KIGO_CORE_PORT set and KIGO_CORE_URL unset: the gateway reaches the
// core on that port (it used to dial 8081 and answer 503 to every forwarded request while
// /healthz said ok), and /readyz fails once the core cannot be reached.
import { randomBytes } from 'node:crypto'
import { rmSync } from 'node:fs'
import { afterAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/common/config.js'
import { startCore, type RunningCore } from '../../src/core/server.js'
import { startGateway, type RunningGateway } from '../../src/gateway/server.js'
import { stackEnv } from '../helpers/stack.js'
import { embeddedDataDir } from '../helpers/embedded-template.js'

const dir = embeddedDataDir('core-url')
let core: RunningCore | undefined
let gateway: RunningGateway | undefined

afterAll(async () => {
  await gateway?.close()
  await core?.close()
  rmSync(dir, { recursive: true, force: true })
})

describe('the core URL follows KIGO_CORE_PORT', () => {
  it('loadConfig derives the core URL from the core port when KIGO_CORE_URL is unset', () => {
    const env = { KIGO_SECRET_KEY: randomBytes(32).toString('base64'), KIGO_ADMIN_TOKEN: 'a'.repeat(24) }
    expect(loadConfig({ env: { ...env, KIGO_CORE_PORT: '18555' } }).gateway.coreUrl).toBe('http://127.0.0.1:18555')
    expect(loadConfig({ env: { ...env, KIGO_CORE_PORT: '18555', KIGO_CORE_URL: 'http://core:9' } }).gateway.coreUrl).toBe('http://core:9')
    expect(loadConfig({ env }).gateway.coreUrl).toBe('http://127.0.0.1:8081')
  })

  it('forwards to the core on KIGO_CORE_PORT, and /readyz fails when the core is gone', async () => {
    const { env, gatewayPort: gwPort } = await stackEnv(dir)
    // What this test is about: no KIGO_CORE_URL, so the gateway derives it from KIGO_CORE_PORT.
    delete env.KIGO_CORE_URL
    const config = loadConfig({ env })
    core = await startCore(config, { logger: false })
    gateway = await startGateway(config, { embedded: true, logger: false })
    const res = await fetch(`http://localhost:${gwPort}/api/statuses/show/1.json`)
    expect(res.status).toBe(404)
    expect((await res.json()).error.code).toBe('entry_not_found')
    expect((await fetch(`http://localhost:${gwPort}/readyz`)).status).toBe(200)

    await core.close()
    core = undefined
    const ready = await fetch(`http://localhost:${gwPort}/readyz`)
    expect(ready.status).toBe(503)
    expect(await ready.json()).toMatchObject({ status: 'unavailable', checks: { core: false } })
    // Alive, though not ready.
    expect((await fetch(`http://localhost:${gwPort}/healthz`)).status).toBe(200)
  })
})
