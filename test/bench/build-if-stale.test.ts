// `npm start` runs `node bin/build.js --if-stale` first: with dist/ up to date (npm test
// builds before the suite) it must not compile again, which the stamp's unchanged time
// and the run's brevity show.
import { spawnSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../../', import.meta.url))
const stamp = fileURLToPath(new URL('../../dist/.build-stamp', import.meta.url))

describe('npm start with dist/ up to date', () => {
  it('does not compile again', () => {
    expect(existsSync(stamp), 'dist/.build-stamp is missing: run npm run build').toBe(true)
    const before = statSync(stamp).mtimeMs
    const started = performance.now()
    const run = spawnSync(process.execPath, ['bin/build.js', '--if-stale'], { cwd: root, encoding: 'utf8' })
    expect(run.status).toBe(0)
    // Only a start that compiles says so.
    expect(run.stderr).toBe('')
    // A compilation of this project takes 10 s or more here; checking the times takes well under one.
    expect(performance.now() - started).toBeLessThan(5000)
    expect(statSync(stamp).mtimeMs).toBe(before)
  })
})

describe('node bin/build.js --check (run by the benchmark first)', () => {
  it('says whether dist/ is up to date, and builds nothing', () => {
    // A project of its own: the script, two sources, the tsconfigs and a stamp listing the sources.
    const dir = mkdtempSync(join(tmpdir(), 'kigo-build-check-'))
    try {
      for (const d of ['bin', 'src', 'bench', 'dist']) mkdirSync(join(dir, d))
      copyFileSync(join(root, 'bin', 'build.js'), join(dir, 'bin', 'build.js'))
      for (const f of ['src/a.ts', 'bench/b.ts', 'tsconfig.json', 'tsconfig.build.json']) writeFileSync(join(dir, f), '')
      const past = new Date(Date.now() - 60_000)
      for (const f of ['src/a.ts', 'bench/b.ts', 'tsconfig.json', 'tsconfig.build.json']) utimesSync(join(dir, f), past, past)
      writeFileSync(join(dir, 'dist', '.build-stamp'), 'src/a.ts\nbench/b.ts')
      const check = () => spawnSync(process.execPath, [join(dir, 'bin', 'build.js'), '--check'], { encoding: 'utf8' }).status
      expect(check()).toBe(0)
      // A source edited after the build.
      utimesSync(join(dir, 'bench', 'b.ts'), new Date(), new Date(Date.now() + 5_000))
      expect(check()).toBe(1)
      utimesSync(join(dir, 'bench', 'b.ts'), past, past)
      expect(check()).toBe(0)
      // A source added since.
      writeFileSync(join(dir, 'src', 'c.ts'), '')
      utimesSync(join(dir, 'src', 'c.ts'), past, past)
      expect(check()).toBe(1)
      // Nothing was compiled: the stamp is as it was written.
      expect(readFileSync(join(dir, 'dist', '.build-stamp'), 'utf8')).toBe('src/a.ts\nbench/b.ts')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('the build', () => {
  it('loads TypeBox from one bundled file, which works as the package does', async () => {
    const shim = fileURLToPath(new URL('../../dist/src/common/typebox.js', import.meta.url))
    const bundle = fileURLToPath(new URL('../../dist/vendor/typebox.js', import.meta.url))
    // The compiled module is only a re-export of the bundle, and the bundle imports no package.
    expect(readFileSync(shim, 'utf8')).toMatch(/^export \* from '\.\.\/\.\.\/vendor\/typebox\.js'$/m)
    expect(readFileSync(shim, 'utf8')).not.toMatch(/from 'typebox/)
    expect(readFileSync(bundle, 'utf8')).not.toMatch(/from ["']typebox/)
    const { Type, Value, Compile } = (await import(pathToFileURL(shim).href)) as typeof import('../../src/common/typebox.js')
    const schema = Type.Object({ port: Type.Integer({ minimum: 0, maximum: 65535 }) })
    expect(Value.Check(schema, { port: 8080 })).toBe(true)
    expect(Value.Check(schema, { port: 70000 })).toBe(false)
    expect(Compile(schema).Check({ port: -1 })).toBe(false)
  })
})
