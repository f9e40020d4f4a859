// The production topology as docker-compose.yml configures it, run as real processes: one
// core and two gateways on PostgreSQL and Redis, every kigo service given the compose
// file's own environment (its ports moved to free ones). The second gateway is reached on
// the deployments' aliases, as users of the compose file reach it: signing in there, the
// login API, OpenID Connect discovery and the guide pages all answer, naming the main host.
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { projectRoot } from '../../src/common/config.js'
import { availableRedis, freshPostgres, inCi } from '../helpers/services.js'
import { freePort } from '../helpers/stack.js'
import { WebClient } from '../gateway/provider/helpers.js'
import { signInPath, type Site } from '../gateway/login-api/helpers.js'

const mainJs = fileURLToPath(new URL('../../dist/src/main.js', import.meta.url))
const compose = parse(readFileSync(join(projectRoot, 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, { environment?: Record<string, string | number> }> }

const pg = await freshPostgres()
const redis = await availableRedis()
if (inCi && !redis) throw new Error('Redis is required under CI=true')

describe.skipIf(!pg || !redis)('docker-compose.yml’s second gateway, as real processes', () => {
  const children: ChildProcess[] = []
  const output: string[] = []
  let ports: Record<'gateway1' | 'gateway2' | 'admin1' | 'admin2' | 'core', number>
  let adminToken: string

  /** The compose environment of `service`, its ports 8080/8082/8081 moved to this test's. */
  const envOf = (service: string, own: Record<string, string>): NodeJS.ProcessEnv => {
    const moved = (v: string) => v.replace(/:8080\b/g, `:${ports.gateway1}`).replace(/:8082\b/g, `:${ports.gateway2}`).replace('http://core:8081', `http://127.0.0.1:${ports.core}`)
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, LOG_LEVEL: 'warn' }
    // Compose's ${VAR:-default} as compose reads it where VAR is not set: the default.
    const interpolated = (v: string) => v.replace(/\$\{[A-Za-z_][A-Za-z0-9_]*:-([^}]*)\}/g, '$1')
    for (const [k, v] of Object.entries(compose.services[service]!.environment ?? {})) env[k] = moved(interpolated(String(v)))
    return { ...env, DATABASE_URL: pg!.url, REDIS_URL: redis!, KIGO_SECRET_KEY: secretKey, KIGO_ADMIN_TOKEN: adminToken, KIGO_ADMIN_BIND: '127.0.0.1', KIGO_CORE_BIND: '127.0.0.1', KIGO_CORE_METRICS_PORT: '0', KIGO_CORE_METRICS_BIND: '127.0.0.1', ...own }
  }
  const secretKey = randomBytes(32).toString('base64')

  const start = async (mode: string, env: NodeJS.ProcessEnv, ready: string) => {
    const child = spawn(process.execPath, [mainJs, mode], { env, stdio: ['ignore', 'pipe', 'pipe'] })
    children.push(child)
    child.stdout.on('data', (d: Buffer) => output.push(d.toString()))
    child.stderr.on('data', (d: Buffer) => output.push(d.toString()))
    const deadline = Date.now() + 60_000
    while (!(await fetch(ready).then((r) => r.ok, () => false))) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`${mode} did not start:\n${output.join('')}`)
      await new Promise((r) => setTimeout(r, 200))
    }
  }

  beforeAll(async () => {
    ports = { gateway1: await freePort(), gateway2: await freePort(), admin1: await freePort(), admin2: await freePort(), core: await freePort() }
    adminToken = randomBytes(24).toString('base64url')
    await start('core', envOf('core', { KIGO_CORE_PORT: String(ports.core) }), `http://127.0.0.1:${ports.core}/readyz`)
    await start('gateway', envOf('gateway-1', { KIGO_GATEWAY_PORT: String(ports.gateway1), KIGO_ADMIN_PORT: String(ports.admin1) }), `http://127.0.0.1:${ports.gateway1}/readyz`)
    // gateway-2 listens on its own port, reached by clients as the aliases (compose: 8082:8080).
    await start('gateway', envOf('gateway-2', { KIGO_GATEWAY_PORT: String(ports.gateway2), KIGO_ADMIN_PORT: String(ports.admin2) }), `http://127.0.0.1:${ports.gateway2}/readyz`)
  }, 200_000)

  afterAll(async () => {
    for (const child of children.reverse()) {
      if (child.exitCode !== null) continue
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      await exited
    }
    await pg?.drop()
  }, 60_000)

  const admin = async <T>(method: string, path: string, body?: unknown) => {
    const res = await fetch(`http://127.0.0.1:${ports.admin1}${path}`, { method, headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
    return (await res.json()) as T
  }

  it('signs a user in on the second gateway, whose pages name the main host', async () => {
    const alice = await admin<{ id: string; password: string }>('POST', '/admin/users', { id: 'alice', name: 'Alice' })
    const main = `http://localhost:${ports.gateway1}`
    const second = new WebClient(`http://localhost:${ports.gateway2}`)
    const login = await second.signIn('/account/login', alice.id, alice.password)
    expect(login.status).toBe(303)
    const account = await second.get('/account')
    expect(account.status).toBe(200)
    expect(account.text).toContain('Your account')
    const guide = await second.get('/developers')
    expect(guide.status).toBe(200)
    expect(guide.text).toContain(`${main}/oauth/initiate`)
    expect((await second.get('/migration')).status).toBe(200)
    // The session is the deployment's: the first gateway knows it too.
    const first = new WebClient(main)
    for (const [k, v] of second.cookies) first.cookies.set(k, v)
    expect((await first.get('/account')).status).toBe(200)
  })

  it('answers the login API and OpenID Connect discovery on both aliases, with each deployment’s own issuer', async () => {
    const site = await admin<Site>('POST', '/admin/sites', { name: 'Tea Party', owner: 'alice', callback: 'https://tea.example/cb' })
    const form = await fetch(`http://localhost:${ports.gateway2}${signInPath(site)}`)
    expect(form.status).toBe(200)
    expect(await form.text()).toContain('Tea Party')
    for (const [alias, issuer] of [[`localhost:${ports.gateway2}`, `http://localhost:${ports.gateway1}`], [`127.0.0.1:${ports.gateway2}`, `http://127.0.0.1:${ports.gateway1}`]]) {
      const discovery = await fetch(`http://${alias}/.well-known/openid-configuration`)
      expect(discovery.status, alias).toBe(200)
      expect(((await discovery.json()) as { issuer: string }).issuer, alias).toBe(issuer)
    }
  })
})
