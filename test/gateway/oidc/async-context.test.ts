// A gateway that has served OpenID Connect must not make every later request pay for the
// provider's request context. On Node 20, an AsyncLocalStorage that has run once keeps
// async hooks on for the whole process, and every promise of every later request is then
// tracked (given an async ID of its own); the gateway switches the library's storage off
// whenever no provider request is in flight (src/gateway/oidc/library.ts). On Node 24 the
// storage is built on the async context frame and tracks no promise in any case.
//
// Whether hooks are on is a property of the whole process, and a test worker runs other
// files first (isolate: false), any of which may have turned them on: so the gateway runs
// in a new process (the built modules, as `npm start` runs them), serves discovery and a
// whole sign-in through its public pages (bench/oidc-sign-in.ts), then an ordinary request,
// and reports the async ID a promise continuation runs in before and after.
import { spawnSync } from 'node:child_process'
import { existsSync, rmSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { expect, it } from 'vitest'
import { embeddedDataDir } from '../../helpers/embedded-template.js'
import { stackEnv } from '../../helpers/stack.js'

const built = (path: string) => fileURLToPath(new URL(`../../../dist/${path}`, import.meta.url))
const modules = {
  config: built('src/common/config.js'),
  core: built('src/core/server.js'),
  gateway: built('src/gateway/server.js'),
  signIn: built('bench/oidc-sign-in.js'),
}

const script = `
const { loadConfig } = await import(${JSON.stringify(pathToFileURL(modules.config).href)})
const { startCore } = await import(${JSON.stringify(pathToFileURL(modules.core).href)})
const { startGateway } = await import(${JSON.stringify(pathToFileURL(modules.gateway).href)})
const { relyingParty, signInOnce } = await import(${JSON.stringify(pathToFileURL(modules.signIn).href)})
const { executionAsyncId } = await import('node:async_hooks')
const continuationId = async () => { await Promise.resolve(); return executionAsyncId() }
const before = await continuationId()
const env = JSON.parse(process.env.STACK_ENV)
const config = loadConfig({ env, overrides: { gateway: { host: '127.0.0.1' } } })
const core = await startCore(config, { logger: false })
const gateway = await startGateway(config, { logger: false })
const adminUrl = 'http://127.0.0.1:' + env.KIGO_ADMIN_PORT
const gatewayUrl = 'http://127.0.0.1:' + env.KIGO_GATEWAY_PORT
const created = await fetch(adminUrl + '/admin/users', { method: 'POST', headers: { authorization: 'Bearer ' + env.KIGO_ADMIN_TOKEN, 'content-type': 'application/json' }, body: JSON.stringify({ id: 'alice', name: 'Alice Liddell' }) })
const alice = await created.json()
const client = await relyingParty(adminUrl, env.KIGO_ADMIN_TOKEN, 'alice')
await signInOnce({ gatewayUrl, host: 'localhost:' + env.KIGO_GATEWAY_PORT, user: { id: 'alice', password: alice.password }, client })
const show = await fetch(gatewayUrl + '/api/statuses/public_timeline.json')
await show.text()
const after = await continuationId()
await gateway.close()
await core.close()
console.log(JSON.stringify({ before, after, status: show.status }))
`

it('leaves no async hook tracking promises after discovery and a whole sign-in', async () => {
  for (const path of Object.values(modules)) expect(existsSync(path), `${path} is missing: run npm run build`).toBe(true)
  const dataDir = embeddedDataDir('async-context')
  try {
    const { env } = await stackEnv(dataDir)
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 120_000, env: { ...process.env, STACK_ENV: JSON.stringify(env) } })
    expect(run.status, run.stderr).toBe(0)
    const { before, after, status } = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { before: number; after: number; status: number }
    expect(before, 'async hooks were on before the provider served anything').toBe(0)
    expect(status).toBe(200)
    expect(after, 'async hooks track promises after the provider served a sign-in').toBe(0)
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
}, 150_000)
