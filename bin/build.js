#!/usr/bin/env node
// `npm run build` compiles src/ and bench/ into dist/ and, when the compiler succeeds,
// writes dist/.build-stamp: the list of TypeScript sources it compiled. `npm start` runs
// this with --if-stale first: it compiles only when a source or a tsconfig is newer than
// the stamp, or a source was added or removed, so a start with dist/ up to date costs no
// compilation (docs/performance.md#the-embedded-start). Other files (bench/results.json) do not count.
// With --check it builds nothing and says whether dist/ is up to date (exit status 0) or
// not (1): the benchmark runs it first, since it measures the code in dist/.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
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

/**
 * TypeBox in one file: the package is about 700 ES modules, and loading them cost about a
 * second of every start here (docs/performance.md#the-embedded-start). src/common/typebox.ts is the only
 * module that imports the package; its compiled output is bundled with the package into
 * dist/vendor/typebox.js (esbuild's WebAssembly build: no native binary), then replaced
 * by a re-export of that file. The bundle is made again only when the package's version
 * or that module changes, since esbuild-wasm takes several seconds.
 */
async function bundleTypebox() {
  const compiled = join(root, 'dist', 'src', 'common', 'typebox.js')
  const bundle = join(root, 'dist', 'vendor', 'typebox.js')
  const bundleStamp = `${bundle}.stamp`
  const version = JSON.parse(readFileSync(join(root, 'node_modules', 'typebox', 'package.json'), 'utf8')).version
  const key = `${version}\n${readFileSync(compiled, 'utf8')}`
  let current = ''
  try {
    current = existsSync(bundle) ? readFileSync(bundleStamp, 'utf8') : ''
  } catch {
    // no stamp: bundle
  }
  if (current !== key) {
    const { build } = await import('esbuild-wasm')
    await build({ entryPoints: [compiled], bundle: true, format: 'esm', platform: 'node', target: 'node20', outfile: bundle, logLevel: 'warning' })
    writeFileSync(bundleStamp, key)
  }
  writeFileSync(compiled, "// Bundled by bin/build.js: TypeBox in one file.\nexport * from '../../vendor/typebox.js'\n")
}

const configs = ['tsconfig.json', 'tsconfig.build.json']
const files = [...sources('src'), ...sources('bench')]
if (process.argv.includes('--check')) process.exit(stale(files) ? 1 : 0)
const ifStale = process.argv.includes('--if-stale')
if (ifStale && !stale(files)) process.exit(0)
// A start that compiles is silent for a minute or more on a small machine: say why.
const started = Date.now()
if (ifStale) process.stderr.write('kigo: compiling src/ into dist/ (the first start takes a minute or so)\n')
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
const result = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' })
if (result.status !== 0) process.exit(result.status ?? 1)
await bundleTypebox()
mkdirSync(dirname(stamp), { recursive: true })
writeFileSync(stamp, files.join('\n'))
if (ifStale) process.stderr.write(`kigo: compiled in ${Math.round((Date.now() - started) / 1000)} s\n`)
