// `kigo export` and `kigo import` (docs/operations.md#moving-to-postgresql): a store made by a running
// embedded kigo (users, applications, tokens, entries, replies, stars, follows, keywords,
// photos, policy, locks, login sites, OpenID Connect clients, audit trail) moved to
// PostgreSQL and back to a new data directory, then served by `dist/src/main.js embedded`
// as it was; and the refusals: another key, a newer schema, a table the export does not
// know, a non-empty target, a damaged dump. A larger store shows the plain progress lines,
// and an import killed midway leaves nothing behind and completes when run again.
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { gunzipSync, gzipSync } from 'node:zlib'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main } from '../../src/cli/kigo.js'
import { Progress } from '../../src/cli/export-import-progress.js'
import { seedTimeline } from '../../bench/timeline-seed.js'
import { freshPostgres } from '../helpers/services.js'
import { startStack, type Stack } from '../helpers/stack.js'
import { basicHeader, oauthHeader, type OAuthClient } from '../gateway/policy/signers.js'

const root = resolve(import.meta.dirname, '../..')
const pgA = await freshPostgres()
const pgB = pgA && (await freshPostgres())
const pgBig = pgB && (await freshPostgres())
const pgBigTarget = pgBig && (await freshPostgres())

const png = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c63f8ffff3f0005fe02fea7358184000000004945 4e44ae426082'.replace(/ /g, ''), 'hex')

let work: string
let source: string
let stack: Stack
let secretKey: string
let alicePassword: string
let carolPassword: string
let oauthClient: OAuthClient
const before: Record<string, string> = {}
let photoPath: string
let photoBytes: Buffer
let ports: { gateway: number; core: number; admin: number }

async function kigo(args: string[], env: Record<string, string | undefined> = { KIGO_SECRET_KEY: secretKey }) {
  let stdout = ''
  let stderr = ''
  const code = await main(args, env, { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) } })
  return { code, stdout, stderr }
}

async function sql<T = Record<string, unknown>>(url: string, text: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query(text, params)).rows as T[]
  } finally {
    await client.end()
  }
}

const hasSchemas = async (url: string) => (await sql<{ t: string | null }>(url, "SELECT to_regclass('kigo_core.entries')::text AS t"))[0]!.t !== null

/** The dump's lines, changed by `edit`, written to a new file. */
function editDump(file: string, edit: (lines: string[]) => string[]): string {
  const lines = gunzipSync(readFileSync(file)).toString('utf8').split('\n')
  const out = join(work, `edited-${randomBytes(4).toString('hex')}.gz`)
  writeFileSync(out, gzipSync(edit(lines).join('\n')))
  return out
}

/** The public reads a client sees, keyed by path. */
async function reads(base: string, entryIds: string[]): Promise<Record<string, string>> {
  const paths = [
    '/api/statuses/public_timeline.json',
    '/api/statuses/keyword_timeline/haiku.json',
    '/api/statuses/user_timeline/alice.json',
    '/api/statuses/album.json',
    '/api/statuses/friends/alice.json',
    '/api/keywords/show/haiku.json',
    // Through the keywords' suffixes, which an import makes again rather than moves.
    '/api/keywords/list.json?word=AIK',
    ...entryIds.map((id) => `/api/statuses/show/${id}.json`),
  ]
  const out: Record<string, string> = {}
  for (const path of paths) {
    const res = await fetch(base + path)
    expect(res.status, path).toBe(200)
    out[path] = await res.text()
  }
  return out
}

const entryIds: string[] = []

beforeAll(async () => {
  if (!pgA) return
  work = mkdtempSync(join(tmpdir(), 'kigo-move-'))
  source = join(work, 'source')
  secretKey = randomBytes(32).toString('base64')
  stack = await startStack({ dataDir: source, secretKey })
  ports = { gateway: stack.config.gateway.port, core: stack.config.core.port, admin: stack.config.gateway.adminPort }
  const env = { KIGO_ADMIN_URL: stack.adminUrl, KIGO_ADMIN_TOKEN: stack.config.adminToken }
  const alice = await stack.addUser('alice', 'Alice')
  alicePassword = alice.api_password
  const bob = await stack.addUser('bob', 'Bob')
  carolPassword = (await stack.addUser('carol', 'Carol')).api_password
  oauthClient = await stack.addOAuthClient('alice', ['read_public', 'write_public'])
  // Registered users in the core (docs/gateway.md#registered-users-in-the-core): dave never
  // makes a request, bob gets a new name (version 2 on both sides).
  await stack.addUser('dave', 'Dave')
  expect((await stack.admin('PUT', '/admin/users/bob/name', { name: 'Robert' })).status).toBe(200)
  const post = async (user: string, password: string, form: Record<string, string>) => {
    const res = await fetch(`${stack.url}/api/statuses/update.json`, { method: 'POST', headers: { ...basicHeader(user, password), 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form) })
    expect(res.status).toBe(200)
    return (await res.json()) as { id: string | number }
  }
  const first = await post('alice', alice.api_password, { status: 'haiku=an old silent pond' })
  const reply = await post('bob', bob.api_password, { status: 'haiku=a frog jumps in', in_reply_to_status_id: String(first.id) })
  entryIds.push(String(first.id), String(reply.id))
  const upload = new FormData()
  upload.set('keyword', 'photos')
  upload.set('file', new Blob([png], { type: 'image/png' }), 'dot.png')
  const withPhoto = await fetch(`${stack.url}/api/statuses/update.json`, { method: 'POST', headers: basicHeader('alice', alice.api_password), body: upload })
  expect(withPhoto.status, await withPhoto.clone().text()).toBe(200)
  const photoEntry = (await withPhoto.json()) as { id: number; text?: string; body?: string }
  entryIds.push(String(photoEntry.id))
  const actions: Array<[string, string, string]> = [
    ['bob', bob.api_password, `/api/favorites/create/${first.id}.json`],
    ['alice', alice.api_password, '/api/friendships/create/bob.json'],
    ['alice', alice.api_password, '/api/keywords/create.json?word=haiku'],
    ['alice', alice.api_password, '/api/keywords/relation/create.json?word1=haiku&word2=photos'],
  ]
  for (const [user, password, path] of actions) {
    const res = await fetch(stack.url + path, { method: 'POST', headers: basicHeader(user, password) })
    expect(res.status, path).toBe(200)
  }
  for (const args of [
    ['policy', 'set', 'wsse', 'deprecate', '--sunset', '2031-06-30T00:00:00Z'],
    ['users', 'lock', 'carol', '--reason', 'asked to'],
    ['sites', 'add', 'Tea Party', '--owner', 'alice', '--callback', 'https://tea.example/login'],
    ['oidc-clients', 'add', 'Tea Party', '--owner', 'alice', '--redirect-uri', 'https://tea.example/callback'],
  ]) {
    const r = await kigo(args, env)
    expect(r.stderr, args.join(' ')).toBe('')
  }
  Object.assign(before, await reads(stack.url, entryIds))
  expect(before['/api/keywords/list.json?word=AIK']).toContain('"haiku"')
  const album = JSON.parse(before['/api/statuses/album.json']!) as Array<Record<string, unknown>>
  const photoUrl = JSON.stringify(album).match(/https?:\/\/[^"]*\/photos\/[^"]+\.png/)![0]
  photoPath = new URL(photoUrl).pathname
  photoBytes = Buffer.from(await (await fetch(stack.url + photoPath)).arrayBuffer())
  expect(photoBytes.equals(png)).toBe(true)
  await stack.close()
}, 240_000)

afterAll(async () => {
  for (const db of [pgA, pgB, pgBig, pgBigTarget]) await db?.drop()
  if (work) rmSync(work, { recursive: true, force: true })
})

describe.skipIf(!pgA)('moving an embedded store to PostgreSQL and back', () => {
  it('exports the embedded store, imports it into PostgreSQL with every table checked, and back into a new data directory that kigo serves as before', async () => {
    const dump = join(work, 'embedded.dump.gz')
    const exported = await kigo(['export', '--from', source, '--out', dump])
    expect(exported.stderr).toMatch(/^export: [\d,]+ rows in \d+ s/m)
    expect(exported.code).toBe(0)
    expect(exported.stdout).toMatch(/^kigo_core\.entries\s+3\s+[0-9a-f]{16}$/m)
    expect(exported.stdout).toMatch(/^kigo_core\.photos\s+1\s/m)
    expect(exported.stdout).toMatch(/^kigo_gateway\.access_tokens\s+1\s/m)
    expect(exported.stdout).toMatch(/^kigo_gateway\.oidc_clients\s+1\s/m)
    expect(exported.stdout).toMatch(/^kigo_gateway\.login_sites\s+1\s/m)
    expect(exported.stdout).toMatch(/^kigo_gateway\.auth_policy\s+1\s/m)
    expect(exported.stdout).toMatch(/^kigo_gateway\.audit_log\s+[1-9]\d*\s/m)
    // Secrets travel sealed: no API password in the dump.
    const text = gunzipSync(readFileSync(dump)).toString('utf8')
    expect(text).not.toContain(alicePassword)
    expect(text).not.toContain(secretKey)
    expect(text).not.toContain('keyword_suffixes')

    const toPg = await kigo(['import', '--file', dump, '--to', pgA!.url, '--json'])
    expect(toPg.code, toPg.stderr).toBe(0)
    expect(toPg.stderr).toMatch(/^import: rebuilding kigo_core\.keyword_suffixes/m)
    const checked = JSON.parse(toPg.stdout) as { tables: Array<{ table: string; source_rows: number; target_rows: number; source_checksum: string; target_checksum: string; ok: boolean }> }
    expect(checked.tables.length).toBeGreaterThanOrEqual(26)
    for (const t of checked.tables) {
      expect(t.ok, t.table).toBe(true)
      expect(t.target_checksum).toBe(t.source_checksum)
    }
    expect(checked.tables.find((t) => t.table === 'kigo_core.entries')!.target_rows).toBe(3)
    const [bytes] = await sql<{ bytes: Buffer }>(pgA!.url, 'SELECT bytes FROM kigo_core.photos')
    expect(bytes!.bytes.equals(png)).toBe(true)
    // Every registered user's copy and its name version, and what the core acknowledged.
    expect(await sql(pgA!.url, 'SELECT id, name, name_version::int AS v FROM kigo_core.users ORDER BY id')).toEqual([
      { id: 'alice', name: 'Alice', v: 1 }, { id: 'bob', name: 'Robert', v: 2 }, { id: 'carol', name: 'Carol', v: 1 }, { id: 'dave', name: 'Dave', v: 1 },
    ])
    expect(await sql(pgA!.url, 'SELECT id FROM kigo_gateway.users WHERE core_version <> name_version')).toEqual([])

    const pgDump = join(work, 'postgres.dump.gz')
    const fromPg = await kigo(['export', '--from', pgA!.url, '--out', pgDump])
    expect(fromPg.code, fromPg.stderr).toBe(0)
    const target = join(work, 'target')
    // The key comes from the environment and is written into the new data directory.
    const back = await kigo(['import', '--file', pgDump, '--to', target])
    expect(back.code, back.stderr).toBe(0)
    expect(back.stdout).toMatch(/^kigo_core\.entries\s+3\s+3\s+([0-9a-f]{16})\s+\1\s+ok$/m)
    expect(back.stdout).not.toContain('MISMATCH')
    expect(readFileSync(join(target, 'secret-key'), 'utf8').trim()).toBe(secretKey)

    // kigo as npm start runs it, on the imported directory, without KIGO_SECRET_KEY.
    const server = spawn(process.execPath, ['dist/src/main.js', 'embedded'], {
      cwd: root,
      env: { PATH: process.env.PATH, KIGO_DATA_DIR: target, KIGO_GATEWAY_PORT: String(ports.gateway), KIGO_CORE_PORT: String(ports.core), KIGO_ADMIN_PORT: String(ports.admin), KIGO_CORE_METRICS_PORT: '0', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let serverLog = ''
    server.stderr.on('data', (d: Buffer) => (serverLog += d.toString()))
    const base = `http://localhost:${ports.gateway}`
    try {
      const deadline = Date.now() + 30_000
      for (;;) {
        const up = await fetch(`${base}/api/statuses/public_timeline.json`).then((r) => r.status === 200, () => false)
        if (up) break
        if (Date.now() > deadline || server.exitCode !== null) throw new Error(`kigo did not start: ${serverLog}`)
        await new Promise((r) => setTimeout(r, 200))
      }
      expect(await reads(base, entryIds)).toEqual(before)
      for (const [id, name] of [['dave', 'Dave'], ['bob', 'Robert']]) {
        const shown = await fetch(`${base}/api/friendships/show/${id}.json`)
        expect([id, shown.status, ((await shown.json()) as { name: string }).name]).toEqual([id, 200, name])
      }
      expect(Buffer.from(await (await fetch(base + photoPath)).arrayBuffer()).equals(photoBytes)).toBe(true)
      // The sealed secrets open under the same key: Basic with the API password, and OAuth.
      const posted = await fetch(`${base}/api/statuses/update.json`, { method: 'POST', headers: { ...basicHeader('alice', alicePassword), 'content-type': 'application/x-www-form-urlencoded' }, body: 'status=haiku%3Dmoved' })
      expect(posted.status).toBe(200)
      // The entry IDs go on from where they were.
      expect(Number(((await posted.json()) as { id: number }).id)).toBeGreaterThan(Math.max(...entryIds.map(Number)))
      const url = `${base}/api/statuses/user_timeline.json`
      const mine = await fetch(url, { headers: oauthHeader(oauthClient, { url, method: 'GET' }, Date.now()) })
      expect(mine.status).toBe(200)
      // The lock and the policy came along.
      const locked = await fetch(`${base}/api/statuses/user_timeline.json`, { headers: basicHeader('carol', carolPassword) })
      expect(await locked.text()).toContain('account_locked')
      const policy = await fetch(`http://127.0.0.1:${ports.admin}/admin/policy`, { headers: { authorization: `Bearer ${readFileSync(join(target, 'admin-token'), 'utf8').trim()}` } })
      expect(JSON.stringify(await policy.json())).toContain('2031-06-30')
    } finally {
      server.kill('SIGTERM')
      await new Promise((r) => server.once('exit', r))
    }
  }, 240_000)

  it('refuses a dump sealed under another key before writing anything', async () => {
    const dump = join(work, 'embedded.dump.gz')
    const target = join(work, 'other-key')
    const r = await kigo(['import', '--file', dump, '--to', target], { KIGO_SECRET_KEY: randomBytes(32).toString('base64') })
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/^kigo: the dump's secrets are sealed under another key than KIGO_SECRET_KEY.*nothing was written\n$/)
    expect(existsSync(target)).toBe(false)
    const toPg = await kigo(['import', '--file', dump, '--to', pgB!.url], { KIGO_SECRET_KEY: randomBytes(32).toString('base64') })
    expect(toPg.code).toBe(1)
    expect(await hasSchemas(pgB!.url)).toBe(false)
  })

  it('refuses an export under a key that does not open the store', async () => {
    const r = await kigo(['export', '--from', pgA!.url, '--out', join(work, 'wrong.gz')], { KIGO_SECRET_KEY: randomBytes(32).toString('base64') })
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/KIGO_SECRET_KEY does not open the secrets of PostgreSQL/)
    expect(existsSync(join(work, 'wrong.gz'))).toBe(false)
  })

  it('refuses a dump whose schema is newer than this kigo', async () => {
    const newer = editDump(join(work, 'embedded.dump.gz'), ([header, ...rest]) => {
      const h = JSON.parse(header!) as { schemas: Array<{ name: string; migrations: Array<{ version: number; name: string }> }> }
      h.schemas[0]!.migrations.push({ version: 999, name: 'from a later kigo' })
      return [JSON.stringify(h), ...rest]
    })
    const r = await kigo(['import', '--file', newer, '--to', pgB!.url])
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/schema kigo_core is newer than this kigo .*migration 999 \(from a later kigo\)/)
    expect(await hasSchemas(pgB!.url)).toBe(false)
  })

  it('stops an export that meets a table it does not know, rather than leave it behind', async () => {
    await sql(pgA!.url, 'CREATE TABLE kigo_gateway.notes (id int PRIMARY KEY, body text)')
    try {
      const out = join(work, 'unknown-table.gz')
      const r = await kigo(['export', '--from', pgA!.url, '--out', out])
      expect(r.code).toBe(1)
      expect(r.stderr).toMatch(/^kigo: kigo_gateway\.notes: not in the tables kigo export knows .*nothing was written\n$/)
      expect(existsSync(out)).toBe(false)
      expect(existsSync(`${out}.partial`)).toBe(false)
    } finally {
      await sql(pgA!.url, 'DROP TABLE kigo_gateway.notes')
    }
  })

  it('refuses a target that holds kigo data unless --replace, which replaces it', async () => {
    const dump = join(work, 'embedded.dump.gz')
    const r = await kigo(['import', '--file', dump, '--to', pgA!.url])
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/already holds kigo data \(kigo_core\..*--replace/)
    await sql(pgA!.url, "UPDATE kigo_core.entries SET body = 'changed on the target'")
    const replaced = await kigo(['import', '--file', dump, '--to', pgA!.url, '--replace'])
    expect(replaced.code, replaced.stderr).toBe(0)
    expect(await sql(pgA!.url, "SELECT 1 FROM kigo_core.entries WHERE body = 'changed on the target'")).toEqual([])
  })

  it('rolls back an import whose rows do not add up to the dump, and says which table', async () => {
    const damaged = editDump(join(work, 'embedded.dump.gz'), (lines) => {
      const at = lines.indexOf('{"table":"kigo_core.entries"}')
      lines[at + 1] = lines[at + 1]!.replace('an old silent pond', 'an old noisy pond')
      return lines
    })
    const r = await kigo(['import', '--file', damaged, '--to', pgB!.url])
    expect(r.code).toBe(1)
    expect(r.stdout).toMatch(/^kigo_core\.entries\s+3\s+3\s+[0-9a-f]{16}\s+[0-9a-f]{16}\s+MISMATCH$/m)
    expect(r.stdout).toMatch(/^kigo_core\.users\s+\d+\s+\d+\s+([0-9a-f]{16})\s+\1\s+ok$/m)
    expect(r.stderr).toMatch(/^kigo: kigo_core\.entries: the target does not hold what the dump does; the import was rolled back/m)
    expect(await hasSchemas(pgB!.url)).toBe(false)
    const cut = editDump(join(work, 'embedded.dump.gz'), (lines) => lines.slice(0, -3))
    const early = await kigo(['import', '--file', cut, '--to', pgB!.url])
    expect(early.code).toBe(1)
    expect(early.stderr).toMatch(/ends before its last line/)
    expect(await hasSchemas(pgB!.url)).toBe(false)
  })
})

/** Runs bin/kigo.js (the built CLI) with stderr a pipe; `onLine` sees each stderr line and may kill it. */
function spawnKigo(args: string[], onLine?: (line: string, kill: () => void) => void): Promise<{ code: number | null; signal: string | null; stdout: string; lines: string[] }> {
  const child = spawn(process.execPath, ['bin/kigo.js', ...args], { cwd: root, env: { PATH: process.env.PATH, KIGO_SECRET_KEY: secretKey }, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let pending = ''
  const lines: string[] = []
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
  child.stderr.on('data', (d: Buffer) => {
    pending += d.toString()
    for (let i = pending.indexOf('\n'); i !== -1; i = pending.indexOf('\n')) {
      const line = pending.slice(0, i)
      pending = pending.slice(i + 1)
      lines.push(line)
      onLine?.(line, () => child.kill('SIGKILL'))
    }
  })
  return new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal, stdout, lines })))
}

const progressLine = /^(export|import): [\d,]+ of [\d,]+ rows \(\d+%\), [\d,]+ rows\/s, (about (\d+ s|\d+ min \d\d s) left|time left unknown)$/

describe.skipIf(!pgA)('a long move', () => {
  it('prints plain progress lines when stderr is no terminal, and an import killed midway leaves the target empty until it is run again', async () => {
    // A larger store: the small one, then 60,000 entries written by SQL.
    const small = await kigo(['import', '--file', join(work, 'embedded.dump.gz'), '--to', pgBig!.url])
    expect(small.code, small.stderr).toBe(0)
    await seedTimeline({ databaseUrl: pgBig!.url, total: 60_000, authors: 500, keywords: 200 })
    const dump = join(work, 'big.dump.gz')
    const exported = await spawnKigo(['export', '--from', pgBig!.url, '--out', dump, '--progress-every', '0.2'])
    expect(exported.code, exported.lines.join('\n')).toBe(0)
    const lines = exported.lines.filter((l) => progressLine.test(l))
    expect(lines.length).toBeGreaterThanOrEqual(1)
    expect(lines[0]).toMatch(/ of 60,[\d,]+ rows/)
    expect(exported.lines.at(-1)).toMatch(/^export: 60,[\d,]+ rows in \d+ s \([\d,]+ rows\/s\)$/)
    // Nothing but progress on stderr: no bar, no carriage return.
    expect(exported.lines.join('\n')).not.toContain('\r')

    let seen = 0
    const killed = await spawnKigo(['import', '--file', dump, '--to', pgBigTarget!.url, '--progress-every', '0.05'], (line, kill) => {
      if (progressLine.test(line) && ++seen === 2) kill()
    })
    expect(killed.signal).toBe('SIGKILL')
    expect(seen).toBe(2)
    expect(await hasSchemas(pgBigTarget!.url)).toBe(false)

    const again = await spawnKigo(['import', '--file', dump, '--to', pgBigTarget!.url, '--progress-every', '0.2'])
    expect(again.code, again.lines.join('\n')).toBe(0)
    expect(again.lines.some((l) => l.startsWith('import: ') && progressLine.test(l))).toBe(true)
    expect(again.stdout).not.toContain('MISMATCH')
    const [count] = await sql<{ n: string }>(pgBigTarget!.url, 'SELECT count(*)::text AS n FROM kigo_core.entries')
    expect(Number(count!.n)).toBeGreaterThanOrEqual(60_000)
  }, 240_000)
})

describe('progress on a terminal', () => {
  it('redraws one bar in place, then ends it with the totals', () => {
    let t = 0
    const written: string[] = []
    const progress = new Progress({ what: 'import', total: 1000, out: { isTTY: true, columns: 100, write: (s: string) => written.push(s) }, everySeconds: 5, now: () => t })
    for (let i = 0; i < 4; i++) {
      t += 250
      progress.add(100)
    }
    t += 1000
    progress.finish()
    expect(written).toHaveLength(5)
    expect(written[3]).toBe('\rimport [################------------------------] 40% 400/1,000 rows, 400 rows/s, about 2 s left\x1b[K')
    expect(written[4]).toBe('\r\x1b[Kimport: 400 rows in 2 s (200 rows/s)\n')
    expect(written.join('')).not.toMatch(/\n(?!$)/)
  })
})
