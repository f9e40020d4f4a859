// Shutdown lines are JSON like every other line (docs/operations.md#health-and-shutdown): an operator's
// log pipeline parses each line, and a plain-text "stopped" line would be lost or garbled.
// A stop is not held by connections that have asked nothing.
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { rmSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'
import { freePort } from '../helpers/stack.js'
import { embeddedDataDir } from '../helpers/embedded-template.js'

const mainJs = fileURLToPath(new URL('../../dist/src/main.js', import.meta.url))

it('every line the core writes, from start to SIGTERM, is JSON, and the last says it stopped', async () => {
  const dir = embeddedDataDir('shutdown')
  const port = await freePort()
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, KIGO_DATA_DIR: dir, KIGO_CORE_PORT: String(port), KIGO_CORE_METRICS_PORT: '0', KIGO_SECRET_KEY: randomBytes(32).toString('base64'), KIGO_ADMIN_TOKEN: randomBytes(24).toString('base64url') }
  const child = spawn(process.execPath, [mainJs, 'core'], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (d: Buffer) => (output += d.toString()))
  child.stderr.on('data', (d: Buffer) => (output += d.toString()))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  try {
    const deadline = Date.now() + 30_000
    while (!(await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false))) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`core did not start:\n${output}`)
      await new Promise((r) => setTimeout(r, 100))
    }
    child.kill('SIGTERM')
    expect(await exited).toBe(0)
    const lines = output.split('\n').filter((l) => l.trim() !== '')
    expect(lines.length).toBeGreaterThan(1)
    const parsed = lines.map((l) => JSON.parse(l) as { msg: string; signal?: string })
    expect(parsed.at(-1)).toMatchObject({ msg: 'stopped', signal: 'SIGTERM' })
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL')
    await exited
    rmSync(dir, { recursive: true, force: true })
  }
}, 60_000)

it('a connection that never sent a byte does not hold a graceful stop: SIGTERM stops all three listeners at once', async () => {
  const dir = embeddedDataDir('shutdown')
  const [gateway, admin, core] = [await freePort(), await freePort(), await freePort()]
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH, KIGO_DATA_DIR: dir, KIGO_GATEWAY_PORT: String(gateway), KIGO_ADMIN_PORT: String(admin), KIGO_CORE_PORT: String(core), KIGO_CORE_METRICS_PORT: '0',
    KIGO_SECRET_KEY: randomBytes(32).toString('base64'), KIGO_ADMIN_TOKEN: randomBytes(24).toString('base64url'),
  }
  const child = spawn(process.execPath, [mainJs, 'embedded'], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (d: Buffer) => (output += d.toString()))
  child.stderr.on('data', (d: Buffer) => (output += d.toString()))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const sockets: Socket[] = []
  try {
    const deadline = Date.now() + 60_000
    while (!(await fetch(`http://127.0.0.1:${gateway}/readyz`).then((r) => r.ok, () => false))) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`kigo did not start:\n${output}`)
      await new Promise((r) => setTimeout(r, 100))
    }
    // One silent connection to each listener (a balancer's spare connection, a port check),
    // and one that has been used and is now idle.
    for (const port of [gateway, admin, core]) {
      const socket = connect({ host: '127.0.0.1', port })
      socket.on('error', () => undefined)
      await new Promise((resolve) => socket.once('connect', resolve))
      sockets.push(socket)
    }
    expect((await fetch(`http://127.0.0.1:${gateway}/healthz`)).status).toBe(200)
    const closed = sockets.map((s) => new Promise((resolve) => s.once('close', resolve)))
    const started = Date.now()
    child.kill('SIGTERM')
    expect(await exited).toBe(0)
    // The head deadline is 30 s, and so is the stop's own limit: this is far below both.
    expect(Date.now() - started).toBeLessThan(10_000)
    await Promise.all(closed)
    expect(output).toContain('"msg":"stopped"')
  } finally {
    for (const s of sockets) s.destroy()
    if (child.exitCode === null) child.kill('SIGKILL')
    await exited
    rmSync(dir, { recursive: true, force: true })
  }
}, 90_000)
