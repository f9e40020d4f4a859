// Real clients of the original service, taken at test time from their public repositories
// at a pinned commit (test/interop/clients.json; where from: sources.ts) with only their
// host changed, and run against a running kigo. Their code is never part of this
// repository. Outside CI a client that cannot be had, or a missing runtime, skips the
// client's suite with the reason printed; under CI=true it fails the run
// (docs/interop.md#where-the-clients-come-from).
import { execFile, execFileSync, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { inCi } from '../helpers/services.js'
import { clientSource } from './sources.js'

export interface ClientEntry {
  repository: string
  commit: string
  language: string
  hostPatch: { file: string; from: string; to: string }
}

const here = dirname(fileURLToPath(import.meta.url))
const manifest = JSON.parse(readFileSync(join(here, 'clients.json'), 'utf8')) as Record<string, ClientEntry>

export const driversDir = join(here, 'drivers')

export function client(name: string): ClientEntry {
  const entry = manifest[name]
  if (!entry) throw new Error(`no client ${name} in test/interop/clients.json`)
  return entry
}

function unavailable(reason: string): false {
  if (inCi) throw new Error(`${reason}; under CI=true the interop clients must run`)
  console.warn(`skipping: ${reason}`)
  return false
}

/** A runtime the client needs: a command that exits 0 when it is there, and the Debian package that brings it. */
export interface Runtime {
  check: string[]
  package: string
}

/** The git directory each available client's pinned commit was found in. */
const gitDirs = new Map<string, string>()

/**
 * True when the client's pinned commit can be had (sources.ts) and every runtime answers;
 * otherwise false with the reason printed (outside CI) or an error (under CI=true).
 */
export function available(name: string, runtimes: Runtime[]): boolean {
  const c = client(name)
  const source = clientSource(c)
  if ('missing' in source) return unavailable(`${name}: ${source.missing}`)
  gitDirs.set(name, source.gitDir)
  for (const r of runtimes) {
    const ran = spawnSync(r.check[0]!, r.check.slice(1), { stdio: 'ignore' })
    if (ran.status !== 0) return unavailable(`${name} needs ${r.package} (apt-get install -y ${r.package})`)
  }
  return true
}

/**
 * The client's tree at the pinned commit in a fresh temp directory, with its host patch
 * applied for `base` (the gateway's base URL, no trailing slash). The patch must match
 * exactly once: a client whose host line moved fails loudly instead of reaching the network.
 */
export function checkout(name: string, base: string): { dir: string; remove: () => void } {
  const c = client(name)
  const dir = mkdtempSync(join(tmpdir(), `kigo-interop-${name}-`))
  const gitDir = gitDirs.get(name)
  if (gitDir === undefined) throw new Error(`${name}: checkout before available()`)
  const archive = execFileSync('git', ['--git-dir', gitDir, 'archive', c.commit], { maxBuffer: 256 * 1024 * 1024 })
  execFileSync('tar', ['-x', '-C', dir], { input: archive })
  const file = join(dir, c.hostPatch.file)
  const text = readFileSync(file, 'latin1')
  const parts = text.split(c.hostPatch.from)
  if (parts.length !== 2) throw new Error(`${name}: the host patch matches ${parts.length - 1} times in ${c.hostPatch.file}, not once`)
  writeFileSync(file, parts.join(c.hostPatch.to.replaceAll('{base}', base)), 'latin1')
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) }
}

export const run = promisify(execFile)

/** One step of a driver's run: what the client returned (its own parsed objects), or the error it raised. */
export type Step<T = any> = { ok: true; value: T } | { ok: false; error: string }

/** The steps a driver printed, one JSON object per line: {"step": name, "ok": ..., "value"|"error": ...}. */
export function steps(stdout: string): Record<string, Step> {
  const out: Record<string, Step> = {}
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('{')) continue
    const { step, ...rest } = JSON.parse(line) as { step: string } & Step
    out[step] = rest
  }
  return out
}

/** The value of a step that must have succeeded; a failed step fails the test with the client's own error. */
export function value<T = any>(all: Record<string, Step>, name: string): T {
  const s = all[name]
  if (!s) throw new Error(`the driver did not reach step ${name}`)
  if (!s.ok) throw new Error(`${name} failed in the client: ${s.error}`)
  return s.value as T
}
