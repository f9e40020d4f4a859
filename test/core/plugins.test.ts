// The core app is built from named plugins that declare what they need: the app has every
// one, and a plugin registered without what it depends on is refused at start-up rather
// than running without it (its hooks would fill a request context nobody checked).
import { randomBytes } from 'node:crypto'
import Fastify from 'fastify'
import { describe, expect, it } from 'vitest'
import { buildCoreApp } from '../../src/core/app.js'
import bodies from '../../src/core/plugins/bodies.js'
import identity from '../../src/core/plugins/identity.js'
import profiles from '../../src/core/plugins/profiles.js'
import { areas } from '../../src/core/plugins/routes.js'
import type { ContentStore } from '../../src/core/store/types.js'
import { loadConfig } from '../../src/common/config.js'

const config = loadConfig({ env: { KIGO_DATA_DIR: '/nonexistent', KIGO_SECRET_KEY: randomBytes(32).toString('base64'), KIGO_ADMIN_TOKEN: randomBytes(24).toString('base64url') } })

describe('the core as named plugins', () => {
  it('has every plugin once built', async () => {
    // Building touches no store: the routes reach it only when a request runs.
    const app = buildCoreApp({ config, store: {} as ContentStore })
    await app.ready()
    const names = ['kigo-core-formats', 'kigo-core-identity', 'kigo-core-bodies', 'kigo-core-profiles', 'kigo-request-lines', 'kigo-core-health',
      ...['statuses', 'favorites', 'photos', 'users', 'timelines', 'follows', 'keywords', 'pages'].map((area) => `kigo-core-${area}`), 'kigo-core-body-routes']
    for (const name of names) expect(app.hasPlugin(name), name).toBe(true)
    // The routes of an area are there: a read answers 405 with Allow to a wrong method, unsigned.
    const wrong = await app.inject({ method: 'DELETE', url: '/api/statuses/public_timeline.json', headers: { host: config.domesticHost } })
    expect(wrong.statusCode).toBe(405)
    await app.close()
  })

  it('refuses a plugin whose dependencies are not registered', async () => {
    for (const [plugin, missing] of [
      [identity, 'kigo-core-formats'],
      [bodies, 'kigo-core-identity'],
      [profiles, 'kigo-core-identity'],
      [areas[0]!, 'kigo-core-identity'],
    ] as const) {
      const app = Fastify()
      // Never reached: the dependency check comes first, so the options do not matter.
      await expect(app.register(plugin as never, {} as never).ready()).rejects.toThrow(missing)
      await app.close().catch(() => undefined)
    }
  })
})
