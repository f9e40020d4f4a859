#!/usr/bin/env node
// `npm run build` compiles src/ and bench/ into dist/ and, when the compiler succeeds,
// writes dist/.build-stamp: the list of TypeScript sources it compiled. `npm start` runs
// this with --if-stale first: it compiles only when a source or a tsconfig is newer than
// the stamp, or a source was added or removed, so a start with dist/ up to date costs no
// compilation (README, Performance). Other files (bench/results.json) do not count.
import { spawnSync } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = dirname(dirname(fileURLToPath(import.meta.url)))
const stamp = join(root, 'dist', '.build-stamp')

/** The TypeScript sources under `dir`, relative to the root, sorted. */
function sources(dir) {
  let names
  try {
    names = readdirSync(join(root, dir), { withFileTypes: true })
  } catch {
    return []
  }
  const out = []
  for (const d of names) {
    const path = `${dir}/${d.name}`
    if (d.isDirectory()) out.push(...sources(path))
    else if (d.name.endsWith('.ts')) out.push(path)
  }
  return out.sort()
}

function stale(files) {
  let built
  let listed
  try {
    built = statSync(stamp).mtimeMs
    listed = readFileSync(stamp, 'utf8')
  } catch {
    return true
  }
  if (listed !== files.join('\n')) return true
  return [...files, ...configs].some((f) => {
    try {
      return statSync(join(root, f)).mtimeMs > built
    } catch {
      return true
    }
  })
}

const configs = ['tsconfig.json', 'tsconfig.build.json']
const files = [...sources('src'), ...sources('bench')]
if (process.argv.includes('--if-stale') && !stale(files)) process.exit(0)
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
const result = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' })
if (result.status !== 0) process.exit(result.status ?? 1)
mkdirSync(dirname(stamp), { recursive: true })
writeFileSync(stamp, files.join('\n'))
