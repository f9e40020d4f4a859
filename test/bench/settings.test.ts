// What `npm run bench` measures by default (docs/performance.md#how-it-measures): 10 s per scenario after a warm-up,
// at least 3 rounds, the scenarios interleaved; `--quick` is one short round.
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { archivePath, passes, settingsFrom } from '../../bench/settings.js'

const runJs = fileURLToPath(new URL('../../dist/bench/run.js', import.meta.url))

/** `node dist/bench/run.js ARGS`: its exit status and what it printed. */
function bench(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [runJs, ...args], { timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr })
    })
  })
}

describe('benchmark settings', () => {
  it('runs 3 rounds of 10 s per scenario after a warm-up by default, in 2 s slices', () => {
    expect(settingsFrom([])).toMatchObject({ mode: 'full', rounds: 3, durationSeconds: 10, sliceSeconds: 2, connections: 32 })
    expect(settingsFrom([])!.warmupSeconds).toBeGreaterThan(0)
  })

  it('keeps a copy of a full run in bench/results/, named by the time it finished, and none of a partial one', () => {
    const finished = new Date('2026-11-26T21:18:52.345Z')
    expect(archivePath(settingsFrom([])!, '/repo', finished)).toBe('/repo/bench/results/2026-11-26T21-18-52Z.json')
    expect(archivePath(settingsFrom(['--out', '/tmp/x.json'])!, '/repo', finished)).toBe('/repo/bench/results/2026-11-26T21-18-52Z.json')
    expect(archivePath(settingsFrom(['--quick'])!, '/repo', finished)).toBeNull()
    expect(archivePath(settingsFrom(['--only', 'alone'])!, '/repo', finished)).toBeNull()
  })

  it('runs one round of 2 s, in one slice, with --quick', () => {
    expect(settingsFrom(['--quick'])).toMatchObject({ mode: 'quick', rounds: 1, durationSeconds: 2, sliceSeconds: 2 })
  })

  it('refuses a slice that does not divide the duration, and numbers that are not whole', () => {
    expect(() => settingsFrom(['--slice', '3'])).toThrow(/--slice 3 must divide --duration 10/)
    expect(() => settingsFrom(['--rounds', '0'])).toThrow(/--rounds/)
    expect(() => settingsFrom(['--duration', '2.5'])).toThrow(/--duration/)
  })

  it('prints its options with --help and measures nothing', async () => {
    expect(settingsFrom(['--help'])).toBeNull()
    const { code, stdout, stderr } = await bench(['--help'])
    expect(code).toBe(0)
    expect(stderr).toBe('')
    for (const option of ['--quick', '--rounds N', '--only LIST', '--profile SCENARIO', '--node24 yes|no', '--out FILE']) expect(stdout).toContain(option)
    // The defaults it names are the ones a run without options uses.
    const full = settingsFrom([])!
    expect(stdout).toMatch(new RegExp(`--rounds N .*\\(${full.rounds}\\)`))
    expect(stdout).toMatch(new RegExp(`--duration S .*\\(${full.durationSeconds}\\)`))
    expect(stdout).toMatch(new RegExp(`--connections N .*\\(${full.connections}\\)`))
  })

  it('names an unknown or bad option and exits with status 2, without a stack trace', async () => {
    for (const args of [['--bogus'], ['--rounds', 'three']]) {
      const { code, stdout, stderr } = await bench(args)
      expect(code).toBe(2)
      expect(stdout).toBe('')
      expect(stderr).toMatch(/^benchmark: .*(--bogus|--rounds)/)
      expect(stderr).toContain('usage: npm run bench')
      expect(stderr).not.toMatch(/\n\s+at /)
    }
  })
})

describe('the order of the timed slices', () => {
  const order = passes(['a', 'b', 'c'], 2, 2)

  it('runs every scenario once per pass, rounds × slices passes in all', () => {
    expect(order).toHaveLength(4)
    for (const pass of order) expect([...pass].sort()).toEqual(['a', 'b', 'c'])
  })

  it('starts each pass one scenario later, so no scenario always follows the same one', () => {
    expect(order).toEqual([
      ['a', 'b', 'c'],
      ['b', 'c', 'a'],
      ['c', 'a', 'b'],
      ['a', 'b', 'c'],
    ])
  })
})
