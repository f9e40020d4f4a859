// `kigo sites …` run in-process against the operator API's login-site routes listening on
// a port, over a real embedded store: the secret printed once, list and show without it,
// rotate, delete, refusals, and the audit trail of each change.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main } from '../../src/cli/kigo.js'
import { openDb, type Db } from '../../src/common/sql.js'
import { AuditStore } from '../../src/gateway/audit/store.js'
import { sitesAdminApi } from '../../src/gateway/login-api/admin-api.js'
import { LoginSiteStore } from '../../src/gateway/login-api/store.js'
import { adminAuth } from '../../src/gateway/operator/admin-auth.js'
import { auditApi } from '../../src/gateway/operator/audit-api.js'
import { gatewayMigrations } from '../../src/gateway/schema.js'
import type { SqlIdentityStore } from '../../src/gateway/store/index.js'
import { openIdentityStore } from '../../src/gateway/identity.js'
import errorAnswers from '../../src/common/error-answers.js'
import { operatorErrors } from '../../src/gateway/operator/errors.js'

const adminToken = randomBytes(24).toString('base64url')
const secretKey = randomBytes(32).toString('base64')
let dir: string
let store: SqlIdentityStore
let db: Db
let app: FastifyInstance
let env: Record<string, string>
let audit: AuditStore

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kigo-cli-sites-'))
  store = await openIdentityStore({ migrations: gatewayMigrations, dataDir: join(dir, 'db'), secretKey })
  db = await openDb({ dataDir: join(dir, 'db') })
  await store.createUser({ id: 'alice', name: 'Alice', password: 'correct horse battery', apiPassword: 'x'.repeat(20) })
  audit = new AuditStore(db)
  app = Fastify()
  await app.register(errorAnswers, operatorErrors)
  await app.register(adminAuth, { adminToken })
  await app.register(sitesAdminApi, { sites: new LoginSiteStore(db, secretKey), audit })
  await app.register(auditApi, { audit })
  env = { KIGO_ADMIN_URL: await app.listen({ port: 0, host: '127.0.0.1' }), KIGO_ADMIN_TOKEN: adminToken }
})

afterAll(async () => {
  await app?.close()
  await db?.close()
  await store?.close()
  rmSync(dir, { recursive: true, force: true })
})

async function kigo(...args: string[]) {
  let stdout = ''
  let stderr = ''
  const code = await main(args, env, { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) } })
  return { code, stdout, stderr }
}

describe('kigo sites', () => {
  it('adds a site and prints its URL-safe api_key and secret; list and show never print the secret', async () => {
    const added = await kigo('sites', 'add', "Alice's blog", '--owner', 'alice', '--callback', 'https://blog.example/cb', '--json')
    expect(added.stderr).toBe('')
    expect(added.code).toBe(0)
    const site = JSON.parse(added.stdout) as { api_key: string; secret: string; name: string; owner: string; callback: string }
    expect(site).toMatchObject({ name: "Alice's blog", owner: 'alice', callback: 'https://blog.example/cb' })
    expect(site.api_key).toMatch(/^[A-Za-z0-9_-]+$/)
    expect(site.secret).toMatch(/^[A-Za-z0-9_-]{24,}$/)

    const text = await kigo('sites', 'add', 'Plain', '--owner', 'alice', '--callback', 'https://plain.example/cb')
    expect(text.code).toBe(0)
    expect(text.stdout).toMatch(/^api_key +\S+$/m)
    expect(text.stdout).toMatch(/^secret +[A-Za-z0-9_-]{24,}$/m)

    const list = await kigo('sites', 'list')
    expect(list.code).toBe(0)
    expect(list.stdout).toMatch(/^API_KEY +NAME +OWNER +CALLBACK +CREATED_AT$/m)
    expect(list.stdout).toContain(site.api_key)
    expect(list.stdout).not.toContain(site.secret)
    const shown = await kigo('sites', 'show', site.api_key)
    expect(shown.stdout).toContain("Alice's blog")
    expect(shown.stdout).not.toContain(site.secret)

    const rotated = JSON.parse((await kigo('sites', 'rotate-secret', site.api_key, '--json')).stdout) as { api_key: string; secret: string }
    expect(rotated.api_key).toBe(site.api_key)
    expect(rotated.secret).not.toBe(site.secret)

    const deleted = await kigo('sites', 'delete', site.api_key)
    expect(deleted.code).toBe(0)
    expect(deleted.stdout).toMatch(/^deleted +true$/m)
    const gone = await kigo('sites', 'show', site.api_key)
    expect(gone.code).toBe(1)
    expect(gone.stderr).toMatch(/^kigo: .*404 not_found/)

    const events = await audit.list({ kind: 'site', target: site.api_key })
    expect(events.map((e) => e.action).sort()).toEqual(['site.create', 'site.delete', 'site.rotate_secret'])
    expect(JSON.stringify(events)).not.toContain(site.secret)
    expect(JSON.stringify(events)).not.toContain(rotated.secret)
  })

  it('refuses bad command lines (exit 2) and refused registrations (exit 1), one line each', async () => {
    const cases: Array<[string[], number, RegExp]> = [
      [['sites', 'add', 'X', '--callback', 'https://x.example/'], 2, /--owner ID is required/],
      [['sites', 'add', 'X', '--owner', 'alice'], 2, /--callback URL is required/],
      [['sites', 'add', 'X', '--owner', 'nobody', '--callback', 'https://x.example/'], 1, /404 user_not_found/],
      [['sites', 'add', 'X', '--owner', 'alice', '--callback', 'ftp://x.example/'], 1, /callback URL must use http or https \(HTTP 400 invalid_parameter\)/],
      [['sites', 'rotate-secret', 'no-such-site-key-here'], 1, /404 not_found/],
    ]
    const before = (await kigo('sites', 'list', '--json')).stdout
    for (const [args, code, message] of cases) {
      const r = await kigo(...args)
      expect(r.code, args.join(' ')).toBe(code)
      expect(r.stdout).toBe('')
      expect(r.stderr).toMatch(/^kigo: [^\n]+\n$/)
      expect(r.stderr).toMatch(message)
    }
    expect((await kigo('sites', 'list', '--json')).stdout).toBe(before)
  })
})
