// Operator dashboard sessions end when they are ended (docs/security.md#operator-sessions):
// after sign-out, after `kigo admin sessions revoke`, and after the admin token changes,
// the same cookie gets the sign-in page (401); two gateways sharing PostgreSQL see the
// same sign-outs and revocations.
import { createHash, randomBytes } from 'node:crypto'
import { rmSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main } from '../../../src/cli/kigo.js'
import { openDb } from '../../../src/common/sql.js'
import { freshPostgres } from '../../helpers/services.js'
import { dashboardSignIn } from '../../helpers/dashboard.js'
import { startStack, type Stack } from '../../helpers/stack.js'
import { embeddedDataDir } from '../../helpers/embedded-template.js'

const signIn = dashboardSignIn

/** The dashboard as the browser holding `cookie` sees it. */
async function open(stack: Stack, cookie: string): Promise<{ status: number; signInPage: boolean }> {
  const res = await fetch(`${stack.adminUrl}/admin/`, { headers: { cookie } })
  const text = await res.text()
  return { status: res.status, signInPage: text.includes('action="/admin/login"') }
}

async function signOut(stack: Stack, cookie: string): Promise<void> {
  const res = await fetch(`${stack.adminUrl}/admin/logout`, { method: 'POST', headers: { cookie }, redirect: 'manual' })
  await res.arrayBuffer()
  expect(res.status).toBe(303)
}

async function kigo(stack: Stack, args: string[]) {
  let stdout = ''
  let stderr = ''
  const code = await main(args, { KIGO_ADMIN_URL: stack.adminUrl, KIGO_ADMIN_TOKEN: stack.config.adminToken }, {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
  })
  return { code, stdout, stderr }
}

const signedOut = { status: 401, signInPage: true }
const signedIn = { status: 200, signInPage: false }

describe('one gateway', () => {
  let stack: Stack
  beforeAll(async () => {
    stack = await startStack()
  })
  afterAll(async () => {
    await stack?.close()
  })

  it('a cookie copied before sign-out does not open the dashboard after it', async () => {
    const cookie = await signIn(stack)
    expect(await open(stack, cookie)).toEqual(signedIn)
    await signOut(stack, cookie)
    expect(await open(stack, cookie)).toEqual(signedOut)
    // Signing out again, or with a made-up cookie, changes nothing and is not an error.
    await signOut(stack, cookie)
    await signOut(stack, `kigo_admin_session=${'A'.repeat(43)}`)
  })

  it('the store holds a hash of the cookie, never the cookie itself nor the admin token', async () => {
    const cookie = await signIn(stack)
    const value = cookie.split('=')[1]!
    // The embedded database is shared in this process (src/common/sql.ts).
    const db = await openDb({ dataDir: stack.config.dataDir })
    try {
      const rows = await db.query<Record<string, unknown>>('SELECT * FROM kigo_gateway.operator_sessions')
      const text = JSON.stringify(rows)
      expect(text).toContain(createHash('sha256').update(value).digest('hex'))
      expect(text).not.toContain(value)
      expect(text).not.toContain(stack.config.adminToken)
    } finally {
      await db.close()
    }
  })

  it('signing out ends that session only', async () => {
    const mine = await signIn(stack)
    const theirs = await signIn(stack)
    await signOut(stack, mine)
    expect(await open(stack, mine)).toEqual(signedOut)
    expect(await open(stack, theirs)).toEqual(signedIn)
  })

  it('kigo admin sessions revoke ends every session, says how many, and is audited', async () => {
    const a = await signIn(stack)
    const b = await signIn(stack)
    const before = await kigo(stack, ['admin', 'sessions', 'revoke', '--json'])
    expect(before.code, before.stderr).toBe(0)
    expect(JSON.parse(before.stdout).revoked).toBeGreaterThanOrEqual(2)
    expect(await open(stack, a)).toEqual(signedOut)
    expect(await open(stack, b)).toEqual(signedOut)
    // The bearer token is not a session: it keeps working.
    const bearer = await fetch(`${stack.adminUrl}/admin/`, { headers: { authorization: `Bearer ${stack.config.adminToken}` } })
    await bearer.arrayBuffer()
    expect(bearer.status).toBe(200)

    const again = await kigo(stack, ['admin', 'sessions', 'revoke'])
    expect(again).toEqual({ code: 0, stdout: 'revoked 0 dashboard sessions\n', stderr: '' })
    const audit = await stack.admin<{ events: Array<{ kind: string; action: string; before: unknown }> }>('GET', '/admin/audit?kind=session')
    expect(audit.body.events.map((e) => [e.action, e.before])).toEqual([['sessions.revoke', { active: 0 }], ['sessions.revoke', { active: JSON.parse(before.stdout).revoked }]])

    // A new sign-in works after a revocation.
    expect(await open(stack, await signIn(stack))).toEqual(signedIn)
  })

  it('the revoke endpoint needs the admin token', async () => {
    const res = await fetch(`${stack.adminUrl}/admin/sessions/revoke`, { method: 'POST', headers: { cookie: await signIn(stack) } })
    expect(res.status).toBe(401)
    expect((await res.json()).error.code).toBe('unauthorized')
  })

  it('kigo help admin and a half-typed command', async () => {
    const help = await kigo(stack, ['help', 'admin', 'sessions', 'revoke'])
    expect(help.stdout).toContain('Usage: kigo admin sessions revoke [--json]')
    const half = await kigo(stack, ['admin', 'sessions'])
    expect(half.code).toBe(2)
    expect(half.stderr).toContain('missing subcommand (revoke)')
  })
})

describe('a changed admin token', () => {
  it('ends the sessions begun under the old one; a restart with the same token keeps them', async () => {
    const dataDir = embeddedDataDir('sessions')
    const secretKey = randomBytes(32).toString('base64')
    const oldToken = randomBytes(24).toString('base64url')
    try {
      const first = await startStack({ dataDir, secretKey, adminToken: oldToken })
      const cookie = await signIn(first)
      await first.close()

      const same = await startStack({ dataDir, secretKey, adminToken: oldToken })
      expect(await open(same, cookie)).toEqual(signedIn)
      await same.close()

      const rotated = await startStack({ dataDir, secretKey, adminToken: randomBytes(24).toString('base64url') })
      try {
        expect(await open(rotated, cookie)).toEqual(signedOut)
        expect(await open(rotated, await signIn(rotated))).toEqual(signedIn)
      } finally {
        await rotated.close()
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})

const pg = await freshPostgres()

describe.skipIf(!pg)('two gateways sharing PostgreSQL', () => {
  let a: Stack
  let b: Stack
  beforeAll(async () => {
    const shared = { databaseUrl: pg!.url, secretKey: randomBytes(32).toString('base64'), adminToken: randomBytes(24).toString('base64url') }
    a = await startStack(shared)
    b = await startStack({ ...shared, coreUrl: a.coreUrl })
  })
  afterAll(async () => {
    await b?.close()
    await a?.close()
    await pg?.drop()
  })

  it('a session begun at one gateway opens the other, and a sign-out at either ends it at both', async () => {
    const cookie = await signIn(a)
    expect(await open(b, cookie)).toEqual(signedIn)
    await signOut(b, cookie)
    expect(await open(a, cookie)).toEqual(signedOut)
    expect(await open(b, cookie)).toEqual(signedOut)
  })

  it('a revocation at one gateway ends the sessions begun at the other', async () => {
    const atB = await signIn(b)
    expect(await open(a, atB)).toEqual(signedIn)
    const revoked = await kigo(a, ['--json', 'admin', 'sessions', 'revoke'])
    expect(JSON.parse(revoked.stdout).revoked).toBeGreaterThanOrEqual(1)
    expect(await open(b, atB)).toEqual(signedOut)
    expect(await open(a, atB)).toEqual(signedOut)
  })
})
