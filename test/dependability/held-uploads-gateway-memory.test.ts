// The gateway's memory under uploads held open by one ordinary account, in the production
// topology: a gateway and a core as separate built processes. Twenty multipart uploads
// declaring 38 MiB each, signed in with HTTP Basic, half to photos/create (which takes a
// file) and half to friendships/create (which takes none), are sent in part and then held
// open (the client stops sending, the connection stays). The gateway streams such bodies
// to the core and holds none of them whole (docs/security.md#bodies-and-uploads):
// together they may add less than 200 MB to its resident set (/proc/<pid>/status VmRSS).
// The core answers each in format rather than reading it for as long as it is held: the
// account's share of the upload budget (429) for photos, 413 for a body too large to be
// one without files. Once they are let go, the account uploads again and the gateway
// serves as before.
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { rmSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { rssMiB, spawnApp, waitReady, type AppProcess } from '../../bench/processes.js'
import { stackEnv } from '../helpers/stack.js'
import { pngHeader } from '../helpers/image-headers.js'
import { embeddedDataDir } from '../helpers/embedded-template.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const MiB = 1024 * 1024
/** The bound: what twenty held uploads may add to the gateway's resident set, in MiB (200 MB). */
const boundMiB = 200e6 / MiB
const uploads = 20
const declared = 38 * MiB
/** What each client sends of its body before it stops and holds the connection. */
const sentBeforeHolding = 30 * MiB

const dirs: string[] = []
let gateway: AppProcess
let core: AppProcess
let gatewayUrl: string
let host: string
let authorization: string

beforeAll(async () => {
  // The processes run the built code: built first when a source changed since.
  const build = spawnSync(process.execPath, ['bin/build.js', '--if-stale'], { cwd: root, encoding: 'utf8', timeout: 170_000 })
  if (build.status !== 0) throw new Error(`build failed: ${build.stdout}${build.stderr}`)
  const coreDir = embeddedDataDir('held-core')
  const gatewayDir = embeddedDataDir('held-gateway')
  dirs.push(coreDir, gatewayDir)
  const { env, gatewayPort, corePort, adminPort } = await stackEnv(coreDir, { LOG_LEVEL: 'warn' })
  const mainJs = join(root, 'dist/src/main.js')
  core = spawnApp('core', [mainJs, 'core'], { PATH: process.env.PATH, ...env })
  await waitReady(core, `http://127.0.0.1:${corePort}/healthz`)
  gateway = spawnApp('gateway', [mainJs, 'gateway'], { PATH: process.env.PATH, ...env, KIGO_DATA_DIR: gatewayDir, KIGO_GATEWAY_BIND: '127.0.0.1' })
  gatewayUrl = `http://127.0.0.1:${gatewayPort}`
  host = `127.0.0.1:${gatewayPort}`
  await waitReady(gateway, `${gatewayUrl}/readyz`)
  const res = await fetch(`http://127.0.0.1:${adminPort}/admin/users`, {
    method: 'POST',
    headers: { authorization: `Bearer ${env.KIGO_ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ id: 'holder' }),
  })
  if (res.status !== 201) throw new Error(`/admin/users: ${res.status} ${await res.text()}`)
  authorization = `Basic ${Buffer.from(`holder:${((await res.json()) as { api_password: string }).api_password}`).toString('base64')}`
  // A few ordinary requests first, so that the baseline is a warmed-up gateway's.
  for (let i = 0; i < 20; i++) await (await fetch(`${gatewayUrl}/api/statuses/public_timeline.json`)).text()
}, 240_000)

afterAll(async () => {
  await gateway?.stop()
  await core?.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

const boundary = 'held-upload-boundary'
/** The start of a body whose first part is an image file. */
const filePartHead = Buffer.concat([
  Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`),
  pngHeader(4000, 3000),
])
/** The start of a body whose first part is text (where no file is taken, a file part is refused at once). */
const textPartHead = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="note"\r\n\r\n`)

interface Held {
  socket: Socket
  /** The status line's code once an answer arrived (0 until then). */
  status(): number
  sent(): number
  /** True once the client has sent all it meant to, or was answered, or the connection broke. */
  settled(): boolean
}

/**
 * Opens a connection and sends an upload's head, `partHead` and then the rest of its body
 * in 64 KiB steps, each once the previous one has left the client, until `upTo` bytes of
 * the `declared`: then it holds the connection open.
 */
function holdUpload(path: string, partHead: Buffer, upTo: number): Held {
  const socket = connect({ host: '127.0.0.1', port: Number(new URL(gatewayUrl).port) })
  const block = randomBytes(64 * 1024)
  let status = 0
  let sent = 0
  let broken = false
  socket.setEncoding('latin1')
  socket.on('data', (d: string) => {
    if (status === 0) status = Number(/^HTTP\/1\.1 (\d{3})/.exec(d)?.[1] ?? -1)
  })
  socket.on('error', () => (broken = true))
  socket.on('close', () => (broken = true))
  socket.write(`POST ${path} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${authorization}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${declared}\r\n\r\n`)
  socket.write(partHead)
  sent = partHead.length
  const step = () => {
    if (status !== 0 || sent >= upTo || socket.destroyed) return
    const size = Math.min(block.length, upTo - sent)
    sent += size
    socket.write(block.subarray(0, size), () => setImmediate(step))
  }
  step()
  return { socket, status: () => status, sent: () => sent, settled: () => broken || status !== 0 || sent >= upTo }
}

/** Samples the gateway's RSS (MiB) every 100 ms until `done` or `ms`; the peak is returned. */
async function watchGateway(ms: number, done: () => boolean): Promise<number> {
  let peak = 0
  const until = Date.now() + ms
  while (Date.now() < until) {
    peak = Math.max(peak, rssMiB(gateway.pid) ?? 0)
    if (done()) break
    await new Promise((r) => setTimeout(r, 100))
  }
  return peak
}

describe(`${uploads} uploads of 38 MiB held open by one account`, () => {
  it('add less than 200 MB to the gateway, are each answered in format, and once let go the account uploads again', async () => {
    const baseline = rssMiB(gateway.pid)!
    const held: Held[] = []
    const withoutFiles = (i: number) => i % 2 === 1
    for (let i = 0; i < uploads; i++) held.push(holdUpload(withoutFiles(i) ? '/api/friendships/create/nobody.json' : '/api/photos/create.json', withoutFiles(i) ? textPartHead : filePartHead, sentBeforeHolding))
    // Watched until every client has sent its part or been answered, and every body sent
    // where no file is taken has been answered (generously: a busy machine reads slowly).
    const peak = await watchGateway(120_000, () => held.every((h, i) => h.settled() && (!withoutFiles(i) || h.status() !== 0)))
    // A few seconds more, holding, at the settled state.
    const peakHeld = Math.max(peak, await watchGateway(3000, () => false))
    const statuses = held.map((h) => h.status())
    const report = `gateway baseline ${baseline.toFixed(0)} MiB, peak ${peakHeld.toFixed(0)} MiB, sent ${held.map((h) => (h.sent() / MiB).toFixed(1)).join(' ')} MiB, answers ${JSON.stringify(statuses)}`
    console.info(`held uploads: ${report}`)
    for (const h of held) h.socket.destroy()
    expect(peakHeld - baseline, report).toBeLessThan(boundMiB)
    // Photos: held within the account's share of the upload budget, or refused past it.
    expect(statuses.filter((s, i) => !withoutFiles(i) && s !== 0 && s !== 429), report).toEqual([])
    // No file taken: too large to be such a body, refused before it is read.
    expect(statuses.filter((_s, i) => withoutFiles(i)), report).toEqual(Array(uploads / 2).fill(413))

    // Let go: the account's share is given back (a photo posts), and the gateway serves.
    // The core gives the share back as it sees each connection close: until then, a 429.
    const post = async () => {
      const photo = new FormData()
      photo.append('file', new Blob([new Uint8Array(Buffer.concat([pngHeader(40, 30), randomBytes(1024)]))], { type: 'image/png' }), 'a.png')
      const res = await fetch(`${gatewayUrl}/api/photos/create.json`, { method: 'POST', headers: { authorization }, body: photo })
      return { status: res.status, text: await res.text() }
    }
    let posted = await post()
    for (let tries = 0; posted.status === 429 && tries < 60; tries++) {
      await new Promise((r) => setTimeout(r, 500))
      posted = await post()
    }
    expect(posted.status, posted.text).toBe(200)
    const timeline = await fetch(`${gatewayUrl}/api/statuses/public_timeline.json`)
    expect(timeline.status).toBe(200)
    expect(rssMiB(gateway.pid)! - baseline).toBeLessThan(boundMiB)
  }, 240_000)
})
