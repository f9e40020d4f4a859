#!/usr/bin/env node
// `npm run build` compiles src/ and bench/ into dist/ and, when the compiler succeeds,
// stamps dist/.build-stamp. `npm start` runs this with --if-stale first: it compiles only
// when a source file, a directory of them (a file added or removed) or a tsconfig is
// newer than the stamp, so a start with dist/ up to date costs no compilation
// (README, Performance: seconds to ready).
import { spawnSync } from 'node:child_process'
import { mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = dirname(dirname(fileURLToPath(import.meta.url)))
const stamp = join(root, 'dist', '.build-stamp')
const inputs = ['src', 'bench', 'tsconfig.json', 'tsconfig.build.json']

/** The newest modification time among `path` and everything under it. */
function newest(path) {
  let stat
  try {
    stat = statSync(path)
  } catch {
    return 0
  }
  let latest = stat.mtimeMs
  if (stat.isDirectory()) for (const name of readdirSync(path)) latest = Math.max(latest, newest(join(path, name)))
  return latest
}

function stale() {
  let built
  try {
    built = statSync(stamp).mtimeMs
  } catch {
    return true
  }
  return inputs.some((p) => newest(join(root, p)) > built)
}

if (process.argv.includes('--if-stale') && !stale()) process.exit(0)
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
const result = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' })
if (result.status !== 0) process.exit(result.status ?? 1)
mkdirSync(dirname(stamp), { recursive: true })
writeFileSync(stamp, `${new Date().toISOString()}\n`)
