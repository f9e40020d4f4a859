// `npm start` runs `node bin/build.js --if-stale` first: with dist/ up to date (npm test
// builds before the suite) it must not compile again, which the stamp's unchanged time
// and the run's brevity show.
import { execFileSync } from 'node:child_process'
import { existsSync, statSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../../', import.meta.url))
const stamp = fileURLToPath(new URL('../../dist/.build-stamp', import.meta.url))

describe('npm start with dist/ up to date', () => {
  it('does not compile again', () => {
    expect(existsSync(stamp), 'dist/.build-stamp is missing: run npm run build').toBe(true)
    const before = statSync(stamp).mtimeMs
    const started = performance.now()
    execFileSync(process.execPath, ['bin/build.js', '--if-stale'], { cwd: root, stdio: 'pipe' })
    // A compilation of this project takes 10 s or more here; checking the times takes well under one.
    expect(performance.now() - started).toBeLessThan(5000)
    expect(statSync(stamp).mtimeMs).toBe(before)
  })
})
