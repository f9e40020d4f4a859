// The kigo command (docs/operations.md#operator-command-line) run in-process against a real operator API listening on
// a port, over a real embedded identity store.
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main } from '../../src/cli/kigo.js'
import { adminAuth } from '../../src/gateway/operator/admin-auth.js'
import { adminApi } from '../../src/gateway/operator/admin-api.js'
import { oauth1AdminApi } from '../../src/gateway/oauth1/admin-api.js'
import { auditApi } from '../../src/gateway/operator/audit-api.js'
import { AuditStore } from '../../src/gateway/audit/store.js'
import { openDb, type Db } from '../../src/common/sql.js'
import { randomToken } from '../../src/common/secrets.js'
import { version } from '../../src/cli/kigo.js'
import { gatewayMigrations } from '../../src/gateway/schema.js'
import { openIdentityStore } from '../../src/gateway/identity.js'
import type { IdentityStore } from '../../src/gateway/store/types.js'
import errorAnswers from '../../src/common/error-answers.js'
import { operatorErrors } from '../../src/gateway/operator/errors.js'

const adminToken = randomBytes(24).toString('base64url')
let dir: string
let store: IdentityStore
let app: FastifyInstance
let env: Record<string, string>
let auditDb: Db

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kigo-cli-'))
  store = await openIdentityStore({ migrations: gatewayMigrations, dataDir: join(dir, 'db'), secretKey: randomBytes(32).toString('base64') })
  // The store's embedded database, shared in this process (src/common/sql.ts), already migrated.
  auditDb = await openDb({ dataDir: join(dir, 'db') })
  const audit = new AuditStore(auditDb)
  app = Fastify()
  await app.register(errorAnswers, operatorErrors)
  await app.register(adminAuth, { adminToken })
  await app.register(adminApi, { store, audit })
  await app.register(oauth1AdminApi, { store, audit })
  await app.register(auditApi, { audit })
  const address = await app.listen({ port: 0, host: '127.0.0.1' })
  env = { KIGO_ADMIN_URL: address, KIGO_ADMIN_TOKEN: adminToken }
})

afterAll(async () => {
  await app?.close()
  await auditDb?.close()
  await store?.close()
  rmSync(dir, { recursive: true, force: true })
})

async function kigo(args: string[], environment: Record<string, string | undefined> = env) {
  let stdout = ''
  let stderr = ''
  const code = await main(args, environment, {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
  })
  return { code, stdout, stderr }
}

describe('where the operator API is', () => {
  it('follows KIGO_ADMIN_PORT as the gateway does, when KIGO_ADMIN_URL is unset', async () => {
    const port = new URL(env.KIGO_ADMIN_URL!).port
    const r = await kigo(['users', 'list', '--json'], { KIGO_ADMIN_PORT: port, KIGO_ADMIN_TOKEN: adminToken })
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    // KIGO_ADMIN_URL, when set, wins.
    const elsewhere = await kigo(['users', 'list'], { KIGO_ADMIN_URL: 'http://127.0.0.1:1', KIGO_ADMIN_PORT: port, KIGO_ADMIN_TOKEN: adminToken })
    expect(elsewhere.code).toBe(1)
    expect(elsewhere.stderr).toMatch(/cannot reach the operator API at http:\/\/127\.0\.0\.1:1/)
    const bad = await kigo(['users', 'list'], { KIGO_ADMIN_PORT: 'ninety', KIGO_ADMIN_TOKEN: adminToken })
    expect(bad.code).toBe(1)
    expect(bad.stderr).toBe('kigo: KIGO_ADMIN_PORT must be a port number (1-65535), got "ninety"\n')
  })
})

/** Runs a command that must succeed with --json and returns the parsed output. */
async function kigoJson(args: string[]) {
  const r = await kigo([...args, '--json'])
  expect(r.stderr).toBe('')
  expect(r.code).toBe(0)
  expect(r.stdout.endsWith('\n')).toBe(true)
  expect(r.stdout.trimEnd().split('\n')).toHaveLength(1)
  return JSON.parse(r.stdout)
}

const uniqueId = () => `cli_${randomBytes(4).toString('hex')}`

/** One `kigo: …` line on stderr, nothing on stdout. */
function expectOneLineError(r: { code: number; stdout: string; stderr: string }, code: number, message: RegExp) {
  expect(r.code).toBe(code)
  expect(r.stdout).toBe('')
  expect(r.stderr).toMatch(/^kigo: [^\n]+\n$/)
  expect(r.stderr).toMatch(message)
}

describe('kigo users', () => {
  it('users add --json prints the created user with generated passwords', async () => {
    const id = uniqueId()
    const out = await kigoJson(['users', 'add', id])
    expect(Object.keys(out).sort()).toEqual(['api_password', 'id', 'name', 'password'])
    expect(out).toMatchObject({ id, name: id })
    expect((await store.getApiPassword(id))?.apiPassword).toBe(out.api_password)
    expect((await store.verifyLoginPassword(id, out.password))?.id).toBe(id)
  })

  it('users add with --name and --password, readable output', async () => {
    const id = uniqueId()
    const r = await kigo(['users', 'add', id, '--name', 'Aki Tanaka', '--password', 'pw with spaces 1'])
    expect(r.code).toBe(0)
    expect(r.stderr).toBe('')
    const apiPassword = (await store.getApiPassword(id))!.apiPassword
    expect(r.stdout).toBe(
      `id            ${id}\n` +
      `name          Aki Tanaka\n` +
      `password      pw with spaces 1\n` +
      `api_password  ${apiPassword}\n`,
    )
    expect((await store.verifyLoginPassword(id, 'pw with spaces 1'))?.name).toBe('Aki Tanaka')
  })

  it('users reset-api-password, with and without --json', async () => {
    const id = uniqueId()
    const created = await kigoJson(['users', 'add', id])
    const out = await kigoJson(['users', 'reset-api-password', id])
    expect(out).toEqual({ id, api_password: expect.any(String) })
    expect(out.api_password).not.toBe(created.api_password)
    expect((await store.getApiPassword(id))?.apiPassword).toBe(out.api_password)

    const r = await kigo(['users', 'reset-api-password', id])
    expect(r.code).toBe(0)
    const now = (await store.getApiPassword(id))!.apiPassword
    expect(now).not.toBe(out.api_password)
    expect(r.stdout).toBe(`id            ${id}\napi_password  ${now}\n`)
  })

  it('users reset-password prints a new login password once; the old one stops working', async () => {
    const id = uniqueId()
    await kigoJson(['users', 'add', id, '--password', 'first long password'])
    const session = await store.createWebSession({ userId: id, now: new Date(), expiresAt: new Date(Date.now() + 60_000) })
    const out = await kigoJson(['users', 'reset-password', id])
    expect(out).toEqual({ id, password: expect.any(String), sessions_ended: 1 })
    expect(await store.verifyLoginPassword(id, 'first long password')).toBeNull()
    expect((await store.verifyLoginPassword(id, out.password))?.id).toBe(id)
    expect(await store.getWebSession(session.id, new Date())).toBeNull()
    const r = await kigo(['users', 'reset-password', id])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(new RegExp(`^id              ${id}\npassword        \\S{10,}\nsessions_ended  0\n$`))
    expectOneLineError(await kigo(['users', 'reset-password', 'nobody_here']), 1, /No user "nobody_here".*404/)
  })

  it('users add --password refuses a short password or one containing the user ID, before calling the API', async () => {
    const id = uniqueId()
    expectOneLineError(await kigo(['users', 'add', id, '--password', 'short']), 2, /--password: the password must be at least 10 characters/)
    expectOneLineError(await kigo(['users', 'add', id, '--password', `${id.toUpperCase()}-2024!`]), 2, /--password: the password must not contain the user ID/)
    expect(await store.getUser(id)).toBeNull()
  })

  it('accepts --json before the command', async () => {
    const id = uniqueId()
    const r = await kigo(['--json', 'users', 'add', id])
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout).id).toBe(id)
  })

  it('users show prints the user without secrets', async () => {
    const id = uniqueId()
    await kigoJson(['users', 'add', id, '--name', 'Show Me'])
    const out = await kigoJson(['users', 'show', id])
    expect(out).toEqual({ id, name: 'Show Me', email: null, email_pending: null, email_pending_until: null, created_at: expect.stringMatching(/Z$/) })
    const r = await kigo(['users', 'show', id])
    expect(r.stdout).toMatch(new RegExp(`^id          ${id}\nname        Show Me\nemail       none\ncreated_at  \\d{4}-`))
  })

  it('an API error is one line on stderr with exit code 1', async () => {
    const id = uniqueId()
    await kigoJson(['users', 'add', id])
    expectOneLineError(await kigo(['users', 'add', id]), 1, /already exists.*409 user_exists/)
    // Under --json the error is the operator API's error object, one JSON line on stderr.
    const asJson = await kigo(['users', 'add', id, '--json'])
    expect(asJson.code).toBe(1)
    expect(asJson.stdout).toBe('')
    expect(asJson.stderr.endsWith('\n') && asJson.stderr.trimEnd().split('\n').length === 1).toBe(true)
    expect(JSON.parse(asJson.stderr)).toEqual({ error: { status: 409, code: 'user_exists', message: `User "${id}" already exists` } })
    expectOneLineError(await kigo(['users', 'add', 'x!']), 1, /"id".*400 invalid_parameter/)
    expectOneLineError(await kigo(['users', 'reset-api-password', 'nobody_here']), 1, /No user "nobody_here".*404/)
  })
})

describe('kigo apps and tokens', () => {
  it('apps add, tokens add, tokens revoke with --json', async () => {
    const owner = uniqueId()
    const user = uniqueId()
    await kigoJson(['users', 'add', owner])
    await kigoJson(['users', 'add', user])

    const appOut = await kigoJson(['apps', 'add', 'Haiku Client', '--owner', owner, '--scopes', 'read_public,write_public', '--callback', 'https://client.example/cb'])
    expect(Object.keys(appOut).sort()).toEqual(['consumer_key', 'consumer_secret', 'name', 'scopes'])
    expect(appOut.name).toBe('Haiku Client')
    expect(appOut.scopes.sort()).toEqual(['read_public', 'write_public'])
    const consumer = await store.getConsumer(appOut.consumer_key)
    expect(consumer?.secret).toBe(appOut.consumer_secret)
    expect(consumer?.consumer.callbackUrl).toBe('https://client.example/cb')

    const tokenOut = await kigoJson(['tokens', 'add', '--consumer', appOut.consumer_key, '--user', user, '--scopes', 'write_public'])
    expect(tokenOut).toEqual({ token: expect.any(String), token_secret: expect.any(String), scopes: ['write_public'] })
    const token = await store.getAccessToken(tokenOut.token)
    expect(token?.secret).toBe(tokenOut.token_secret)
    expect(token?.token).toMatchObject({ userId: user, consumerKey: appOut.consumer_key })

    // The token may start with '-': `--` keeps it a positional argument.
    const revoked = await kigo(['--json', 'tokens', 'revoke', '--', tokenOut.token])
    expect(revoked).toEqual({ code: 0, stdout: '{"revoked":true}\n', stderr: '' })
    expect((await store.getAccessToken(tokenOut.token))?.token.revokedAt).toBeInstanceOf(Date)
  })

  it('apps add, tokens add, tokens revoke, list commands: readable output', async () => {
    const owner = uniqueId()
    await kigoJson(['users', 'add', owner])

    const a = await kigo(['apps', 'add', 'Plain Client', '--owner', owner, '--scopes', 'read_public'])
    expect(a.code).toBe(0)
    const [created] = await store.listConsumers(owner)
    const secret = (await store.getConsumer(created!.key))!.secret
    expect(a.stdout).toBe(
      `consumer_key     ${created!.key}\n` +
      `consumer_secret  ${secret}\n` +
      `name             Plain Client\n` +
      `scopes           read_public\n`,
    )

    const t = await kigo(['tokens', 'add', `--consumer=${created!.key}`, '--user', owner, '--scopes', 'read_public'])
    expect(t.code).toBe(0)
    const [issued] = await store.listAccessTokens({ userId: owner })
    const tokenSecret = (await store.getAccessToken(issued!.token))!.secret
    expect(t.stdout).toBe(`token         ${issued!.token}\ntoken_secret  ${tokenSecret}\nscopes        read_public\n`)

    const apps = await kigo(['apps', 'list', '--owner', owner])
    expect(apps.code).toBe(0)
    const appLines = apps.stdout.trimEnd().split('\n')
    expect(appLines).toHaveLength(2)
    expect(appLines[0]).toMatch(/^CONSUMER_KEY\s+NAME\s+OWNER\s+SCOPES\s+CALLBACK\s+CREATED_AT$/)
    expect(appLines[1]).toMatch(new RegExp(`^${created!.key}\\s+Plain Client\\s+${owner}\\s+read_public\\s+-\\s+\\d{4}-`))
    // Columns line up: every value starts where its header starts.
    expect(appLines[1]!.indexOf(owner)).toBe(appLines[0]!.indexOf('OWNER'))
    expect(apps.stdout).not.toContain(secret)

    const tokens = await kigo(['tokens', 'list', '--user', owner])
    expect(tokens.stdout).toMatch(new RegExp(`^TOKEN\\s+CONSUMER\\s+USER\\s+SCOPES\\s+CREATED_AT\\s+REVOKED_AT\n${issued!.token.replace(/[-]/g, '\\-')}\\s+${created!.key.replace(/[-]/g, '\\-')}\\s+${owner}\\s+read_public\\s+\\S+Z\\s+-\n$`))
    expect(tokens.stdout).not.toContain(tokenSecret)

    const r = await kigo(['tokens', 'revoke', `--`, issued!.token])
    expect(r).toEqual({ code: 0, stdout: `revoked token ${issued!.token}\n`, stderr: '' })
    const listed = await kigoJson(['tokens', 'list', '--consumer', created!.key])
    expect(listed.tokens[0].revoked_at).toMatch(/Z$/)

    const none = await kigo(['apps', 'list', '--owner', uniqueId()])
    expectOneLineError(none, 1, /404 user_not_found/)
  })

  it('API errors for apps and tokens are one line with exit code 1', async () => {
    const owner = uniqueId()
    await kigoJson(['users', 'add', owner])
    const appOut = await kigoJson(['apps', 'add', 'Narrow', '--owner', owner, '--scopes', 'read_public'])
    expectOneLineError(await kigo(['apps', 'add', 'X', '--owner', owner, '--scopes', 'read_public,admin']), 1, /must be one of read_public.*400 invalid_parameter/)
    expectOneLineError(await kigo(['apps', 'add', 'X', '--owner', owner, '--scopes', ',']), 1, /"scopes" must list at least 1/)
    expectOneLineError(await kigo(['apps', 'add', 'X', '--owner', 'nobody_here', '--scopes', 'read_public']), 1, /404 user_not_found/)
    expectOneLineError(await kigo(['apps', 'add', 'X', '--owner', owner, '--scopes', 'read_public', '--callback', 'ftp://x.example/']), 1, /invalid_callback/)
    expectOneLineError(
      await kigo(['tokens', 'add', '--consumer', appOut.consumer_key, '--user', owner, '--scopes', 'write_public']),
      1,
      /not registered for write_public.*400 scope_not_registered/,
    )
    expectOneLineError(await kigo(['tokens', 'revoke', 'NoSuchTokenValue123456']), 1, /404 token_not_found/)
  })
})

describe('kigo command line', () => {
  it('usage errors: one line, exit code 2, no request made', async () => {
    const unreachable = { KIGO_ADMIN_URL: 'http://127.0.0.1:9', KIGO_ADMIN_TOKEN: 'x' }
    const cases: Array<[string[], RegExp]> = [
      [[], /missing command/],
      [['frobnicate'], /unknown command "frobnicate"/],
      [['users'], /users: missing subcommand/],
      [['users', 'delete', 'bob'], /unknown subcommand "delete"/],
      [['users', 'add'], /users add: missing <id>/],
      [['users', 'add', 'a', 'b'], /unexpected argument "b"/],
      [['users', 'add', 'alice', '--owner', 'x'], /unknown option --owner/],
      [['users', 'add', 'alice', '--nmae', 'Alice'], /unknown option --nmae; did you mean --name\?/],
      [['users', 'add', 'alice', '--name'], /--name needs a value/],
      [['users', 'ad', 'alice'], /unknown subcommand "ad"; did you mean "add"\?/],
      [['user', 'add', 'alice'], /unknown command "user"; did you mean "users"\?/],
      [['--jsno', 'users', 'list'], /did you mean --json\?/],
      [['apps', 'add', 'Name', '--scopes', 'read_public'], /--owner ID is required/],
      [['tokens', 'add', '--consumer', 'k', '--user', 'u'], /--scopes LIST is required/],
      [['tokens', 'revoke', '--abc'], /after '--'/],
      [['--verbose', 'users', 'add', 'x'], /unknown option --verbose/],
    ]
    for (const [args, message] of cases) {
      const r = await kigo(args, unreachable)
      expect(r.code, args.join(' ')).toBe(2)
      expect(r.stdout).toBe('')
      expect(r.stderr, args.join(' ')).toMatch(/^kigo: [^\n]+\n$/)
      expect(r.stderr, args.join(' ')).toMatch(message)
    }
  })

  it('--help prints usage for kigo, a group and a command, exit code 0', async () => {
    const top = await kigo(['--help'], {})
    expect(top.code).toBe(0)
    expect(top.stderr).toBe('')
    for (const synopsis of [
      'kigo users add <id> [--name NAME] [--password PW]',
      'kigo users reset-api-password <id>',
      'kigo apps add <name> --owner ID --scopes LIST [--callback URL]',
      'kigo tokens add --consumer KEY --user ID --scopes LIST',
      'kigo tokens revoke <token>',
      'KIGO_ADMIN_URL',
    ]) expect(top.stdout).toContain(synopsis)

    const group = await kigo(['tokens', '--help'], {})
    expect(group.code).toBe(0)
    expect(group.stdout).toContain('kigo tokens revoke <token>')
    expect(group.stdout).not.toContain('kigo users add')

    const command = await kigo(['apps', 'add', '--help'], {})
    expect(command.code).toBe(0)
    expect(command.stdout).toMatch(/^Usage: kigo apps add <name> --owner ID --scopes LIST \[--callback URL\]/)
  })

  it('reports an unreachable gateway in one line, exit code 1', async () => {
    // A port that was just free: nothing listens there.
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port
        s.close(() => resolve(p))
      })
    })
    const r = await kigo(['users', 'add', uniqueId()], { KIGO_ADMIN_URL: `http://127.0.0.1:${port}`, KIGO_ADMIN_TOKEN: adminToken })
    expectOneLineError(r, 1, new RegExp(`cannot reach the operator API at http://127\\.0\\.0\\.1:${port} \\(ECONNREFUSED\\); is the gateway running\\?`))
  })

  it('reads the admin token from KIGO_DATA_DIR/admin-token when KIGO_ADMIN_TOKEN is unset', async () => {
    const dataDir = join(dir, 'data')
    const id = uniqueId()
    const missing = await kigo(['users', 'add', id], { KIGO_ADMIN_URL: env.KIGO_ADMIN_URL, KIGO_DATA_DIR: dataDir })
    expectOneLineError(missing, 1, /no admin token: set KIGO_ADMIN_TOKEN.*admin-token does not exist/)

    rmSync(dataDir, { recursive: true, force: true })
    mkdirSync(dataDir, { recursive: true })
    writeFileSync(join(dataDir, 'admin-token'), `${adminToken}\n`, { mode: 0o600 })
    const r = await kigo(['users', 'add', id, '--json'], { KIGO_ADMIN_URL: env.KIGO_ADMIN_URL, KIGO_DATA_DIR: dataDir })
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout).id).toBe(id)

    writeFileSync(join(dataDir, 'admin-token'), 'not-the-admin-token-at-all\n')
    const wrong = await kigo(['users', 'show', id], { KIGO_ADMIN_URL: env.KIGO_ADMIN_URL, KIGO_DATA_DIR: dataDir })
    expectOneLineError(wrong, 1, /401 unauthorized.*check KIGO_ADMIN_TOKEN/)
  })

  it('refuses a KIGO_ADMIN_URL that is not http(s) and a token that cannot be sent', async () => {
    expectOneLineError(await kigo(['users', 'show', 'alice'], { KIGO_ADMIN_URL: 'ftp://127.0.0.1/', KIGO_ADMIN_TOKEN: 'x' }), 1, /KIGO_ADMIN_URL/)
    expectOneLineError(await kigo(['users', 'show', 'alice'], { KIGO_ADMIN_URL: 'not a url', KIGO_ADMIN_TOKEN: 'x' }), 1, /KIGO_ADMIN_URL is not a URL/)
    expectOneLineError(await kigo(['users', 'show', 'alice'], { ...env, KIGO_ADMIN_TOKEN: 'tøken with spaces' }), 1, /admin token contains characters/)
  })
})

describe('values starting with "-"', () => {
  it('generated identifiers and secrets never start with "-"', () => {
    // One character in 64 of base64url is "-": 5000 two-character draws would show it.
    const firsts = new Set(Array.from({ length: 5000 }, () => randomToken(1)[0]))
    expect(firsts.has('-')).toBe(false)
    expect(firsts.size).toBeGreaterThan(60)
  })

  it('accepts option values and arguments that start with "-"', async () => {
    const owner = uniqueId()
    const created = await kigoJson(['users', 'add', owner, '--password', '-starts-with-a-dash', '--name', '-Dash'])
    expect(created).toMatchObject({ password: '-starts-with-a-dash', name: '-Dash' })
    expect((await store.verifyLoginPassword(owner, '-starts-with-a-dash'))?.id).toBe(owner)
    const appOut = await kigoJson(['apps', 'add', '-leading dash app', '--owner', owner, '--scopes', 'read_public'])
    expect(appOut.name).toBe('-leading dash app')

    // A key or token made before values avoided a leading "-" (stored directly here).
    const dashed = `-${randomToken(16)}`
    const { consumer } = await store.createConsumer({ name: 'Old client', ownerId: owner, scopes: ['read_public'], callbackUrl: null })
    const issued = await kigoJson(['tokens', 'add', '--consumer', consumer.key, '--user', owner, '--scopes', 'read_public'])
    expect(issued.scopes).toEqual(['read_public'])
    // `--consumer -abc…` takes the value; an unknown key is the API's 404, not an option error.
    expectOneLineError(await kigo(['tokens', 'add', '--consumer', dashed, '--user', owner, '--scopes', 'read_public']), 1, /404 consumer_not_found/)
    expectOneLineError(await kigo(['tokens', 'revoke', dashed]), 1, /404 token_not_found/)
    expect(await kigo(['tokens', 'revoke', issued.token])).toEqual({ code: 0, stdout: `revoked token ${issued.token}\n`, stderr: '' })
  })
})

describe('help, version, suggestions', () => {
  it('--version prints the package version', async () => {
    expect(version()).toMatch(/^\d+\.\d+\.\d+/)
    expect(await kigo(['--version'], {})).toEqual({ code: 0, stdout: `kigo ${version()}\n`, stderr: '' })
    expect(JSON.parse((await kigo(['--version', '--json'], {})).stdout)).toEqual({ version: version() })
  })

  it('kigo help [command] prints the help of kigo, a group or a command', async () => {
    const top = await kigo(['help'], {})
    expect(top.code).toBe(0)
    expect(top.stdout).toContain('kigo help [command]')
    expect(top.stdout).toContain('kigo policy history')
    const group = await kigo(['help', 'apps'], {})
    expect(group.stdout).toContain('kigo apps rotate-secret <consumer_key>')
    const command = await kigo(['help', 'tokens', 'revoke'], {})
    expect(command.stdout).toMatch(/^Usage: kigo tokens revoke <token>/)
    const usage = await kigo(['help', 'usage'], {})
    expect(usage.stdout).toMatch(/^Usage: kigo usage /)
    const wrong = await kigo(['help', 'tokns'], {})
    expectOneLineError(wrong, 2, /did you mean "tokens"\?/)
  })

  it("every command's help has an example that names the command", async () => {
    const top = (await kigo(['help'], {})).stdout
    // Command names may hold digits (`kigo apps oauth2`).
    const synopses = [...top.matchAll(/^ {2}(kigo [a-z0-9-]+(?: [a-z0-9-]+)?)/gm)].map((m) => m[1]!.split(' ').filter((w) => /^[a-z0-9-]+$/.test(w)))
    expect(synopses.length).toBeGreaterThan(15)
    for (const words of synopses) {
      const name = words.slice(1).join(' ')
      const help = await kigo(['help', ...words.slice(1)], {})
      expect(help.code, name).toBe(0)
      expect(help.stdout, name).toMatch(/\nExamples?:\n {2}kigo /)
      const example = help.stdout.split(/\nExamples?:\n/)[1]!.split('\n')[0]!.trim()
      expect(example.startsWith(words.join(' ')) || example.startsWith(`kigo ${words[1]}`), name).toBe(true)
    }
  })

  it('usage errors are JSON under --json', async () => {
    const r = await kigo(['users', 'add', 'alice', '--nmae', 'x', '--json'], {})
    expect(r.code).toBe(2)
    expect(JSON.parse(r.stderr)).toEqual({ error: { code: 'usage', message: expect.stringMatching(/did you mean --name\?/) } })
  })
})

describe('users, applications and the audit trail', () => {
  it('users list and set-email', async () => {
    const id = uniqueId()
    await kigoJson(['users', 'add', id, '--name', 'Listed'])
    expect(await kigoJson(['users', 'set-email', id, 'listed@example.com'])).toEqual({ id, email: 'listed@example.com' })
    const listed = await kigoJson(['users', 'list'])
    expect(listed.users.find((u: { id: string }) => u.id === id)).toEqual({ id, name: 'Listed', email: 'listed@example.com', created_at: expect.stringMatching(/Z$/) })
    const table = await kigo(['users', 'list'])
    expect(table.stdout).toMatch(/^ID\s+NAME\s+EMAIL\s+CREATED_AT\n/)
    expect(table.stdout).toMatch(new RegExp(`\n${id}\\s+Listed\\s+listed@example\\.com\\s+\\d{4}-`))
    expectOneLineError(await kigo(['users', 'set-email', id, 'not an address']), 1, /e-mail address.*400 invalid_parameter/)
    expect(await kigoJson(['users', 'set-email', id, 'none'])).toEqual({ id, email: null })
    expectOneLineError(await kigo(['users', 'set-email', 'nobody_here', 'a@b.example']), 1, /404 user_not_found/)
  })

  it('users set-name: the new display name, recorded in the audit trail', async () => {
    const id = uniqueId()
    await kigoJson(['users', 'add', id, '--name', 'First'])
    expect(await kigoJson(['users', 'set-name', id, 'Second ✨'])).toEqual({ id, name: 'Second ✨', created_at: expect.stringMatching(/Z$/) })
    expect((await kigoJson(['users', 'show', id])).name).toBe('Second ✨')
    const audit = await kigoJson(['audit', '--target', id])
    expect(audit.events[0]).toMatchObject({ kind: 'user', action: 'user.set_name', target: id, before: { name: 'First' }, after: { name: 'Second ✨' } })
    expectOneLineError(await kigo(['users', 'set-name', 'nobody_here', 'X']), 1, /404 user_not_found/)
    expectOneLineError(await kigo(['users', 'set-name', id, '  ']), 1, /400 invalid_parameter/)
  })

  it('apps show, rotate-secret and delete', async () => {
    const owner = uniqueId()
    await kigoJson(['users', 'add', owner])
    const created = await kigoJson(['apps', 'add', 'Rotating', '--owner', owner, '--scopes', 'read_public'])
    const token = await kigoJson(['tokens', 'add', '--consumer', created.consumer_key, '--user', owner, '--scopes', 'read_public'])

    const shown = await kigoJson(['apps', 'show', created.consumer_key])
    expect(shown).toEqual({ consumer_key: created.consumer_key, name: 'Rotating', owner, scopes: ['read_public'], callback: null, home_page: null, created_at: expect.stringMatching(/Z$/), tokens: 1, active_tokens: 1 })
    expect(JSON.stringify(shown)).not.toContain(created.consumer_secret)

    // Without --overlap, the replaced secret keeps working a day.
    const rotated = await kigoJson(['apps', 'rotate-secret', created.consumer_key])
    expect(rotated).toMatchObject({ consumer_key: created.consumer_key, overlap_seconds: 86400, previous_secret_until: expect.stringMatching(/Z$/) })
    expect((await store.getConsumer(created.consumer_key))?.previous?.secret).toBe(created.consumer_secret)
    expect(rotated.consumer_secret).not.toBe(created.consumer_secret)
    expect((await store.getConsumer(created.consumer_key))?.secret).toBe(rotated.consumer_secret)
    // The application's tokens stay.
    expect((await store.getAccessToken(token.token))?.token.revokedAt).toBeNull()
    // --overlap keeps the replaced secret working that long; a value the API does not offer is refused.
    const overlapping = await kigoJson(['apps', 'rotate-secret', created.consumer_key, '--overlap', '3600'])
    expect(overlapping).toMatchObject({ consumer_key: created.consumer_key, overlap_seconds: 3600, previous_secret_until: expect.stringMatching(/Z$/) })
    expect((await store.getConsumer(created.consumer_key))?.previous?.secret).toBe(rotated.consumer_secret)
    expectOneLineError(await kigo(['apps', 'rotate-secret', created.consumer_key, '--overlap', 'soon']), 1, /400 invalid_parameter/)

    const deleted = await kigoJson(['apps', 'delete', created.consumer_key])
    expect(deleted).toEqual({ deleted: true, consumer_key: created.consumer_key, name: 'Rotating', tokens_deleted: 1 })
    expect(await store.getConsumer(created.consumer_key)).toBeNull()
    expect(await store.getAccessToken(token.token)).toBeNull()
    expectOneLineError(await kigo(['apps', 'show', created.consumer_key]), 1, /404 consumer_not_found/)
    expectOneLineError(await kigo(['apps', 'delete', created.consumer_key]), 1, /404 consumer_not_found/)
    expectOneLineError(await kigo(['apps', 'rotate-secret', created.consumer_key]), 1, /404 consumer_not_found/)
  })

  it('kigo audit lists every change with before, after and address, and never a secret', async () => {
    const owner = uniqueId()
    const user = await kigoJson(['users', 'add', owner])
    const reset = await kigoJson(['users', 'reset-api-password', owner])
    const created = await kigoJson(['apps', 'add', 'Audited', '--owner', owner, '--scopes', 'read_public'])
    const rotated = await kigoJson(['apps', 'rotate-secret', created.consumer_key])
    const token = await kigoJson(['tokens', 'add', '--consumer', created.consumer_key, '--user', owner, '--scopes', 'read_public'])
    await kigoJson(['tokens', 'revoke', token.token])
    await kigoJson(['apps', 'delete', created.consumer_key])

    const forUser = await kigoJson(['audit', '--target', owner])
    expect(forUser.events.map((e: { action: string }) => e.action)).toEqual(['user.reset_api_password', 'user.create'])
    expect(forUser.events[1]).toMatchObject({ kind: 'user', target: owner, address: '127.0.0.1', before: null, after: { id: owner, name: owner } })
    const forApp = await kigoJson(['audit', '--target', created.consumer_key])
    expect(forApp.events.map((e: { action: string }) => e.action)).toEqual(['app.delete', 'app.rotate_secret', 'app.create'])
    expect(forApp.events[0].before).toMatchObject({ name: 'Audited', tokens: 1 })
    const forToken = await kigoJson(['audit', '--kind', 'token', '--target', token.token])
    expect(forToken.events.map((e: { action: string }) => e.action)).toEqual(['token.revoke', 'token.create'])
    expect(forToken.events[0].before.revoked_at).toBeNull()
    expect(forToken.events[0].after.revoked_at).toMatch(/Z$/)
    for (const e of [...forUser.events, ...forApp.events, ...forToken.events]) expect(e.at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/)

    const everything = JSON.stringify(await kigoJson(['audit', '--limit', '1000']))
    for (const secret of [user.password, user.api_password, reset.api_password, created.consumer_secret, rotated.consumer_secret, token.token_secret]) {
      expect(everything).not.toContain(secret)
    }
    const table = await kigo(['audit', '--target', created.consumer_key])
    expect(table.stdout).toMatch(/^AT\s+BY\s+ADDRESS\s+ACTION\s+TARGET\s+CHANGE\n/)
    expect(table.stdout).toMatch(/\boperator\s+\S+\s+app\.delete\b/)
    expect(table.stdout).toMatch(/app\.delete\s+\S+\s+deleted\n/)
    expectOneLineError(await kigo(['audit', '--kind', 'everything']), 1, /"kind" must be one of policy, user, app, token.*400/)
  })
})
