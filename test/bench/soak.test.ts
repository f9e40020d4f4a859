// The soak harness (docs/operations.md#reliability) for two minutes: production mode under
// faults on a schedule, and every acknowledged write found once in the store afterwards.
// What holds on any machine is asserted: nothing lost, nothing duplicated, every fault
// recovered from in the end. How fast is the machine's: a recovery is waited for up to ten
// times the run's own start of the apps (recoveryLimitSeconds), and its time is
// `npm run soak`'s figure to read, never this test's bound.
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { outcomeOf } from '../../bench/soak/load.js'
import { recoveryLimitSeconds } from '../../bench/soak/check.js'

const runJs = fileURLToPath(new URL('../../dist/bench/soak/run.js', import.meta.url))

describe('recoveryLimitSeconds', () => {
  it('waits ten times what the same run took to start the apps, and at least a minute', () => {
    expect(recoveryLimitSeconds(2.5)).toBe(60)
    expect(recoveryLimitSeconds(6.01)).toBe(61)
    // A machine busy enough to take 18.8 s for a start is given 188 s for a recovery.
    expect(recoveryLimitSeconds(18.8)).toBe(188)
  })
})

describe('outcomeOf', () => {
  it('counts 200 as acknowledged, answers that cannot know what the core did as in doubt, other refusals as refused', () => {
    expect(outcomeOf(200, '{}')).toBe('acknowledged')
    for (const status of [0, 502, 504]) expect(outcomeOf(status, '')).toBe('in_doubt')
    expect(outcomeOf(503, '{"error":{"code":"store_unavailable","message":"The content store is unavailable; try again shortly"}}')).toBe('in_doubt')
    expect(outcomeOf(503, '{"error":{"code":"store_unavailable","message":"Credentials cannot be checked right now; try again shortly"}}')).toBe('refused')
    expect(outcomeOf(503, '{"error":{"code":"upstream_unavailable"}}')).toBe('refused')
    expect(outcomeOf(401, '')).toBe('refused')
  })
})

it('two minutes under faults: no acknowledged write lost or duplicated, none refused yet applied, every fault recovered from', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kigo-soak-test-'))
  const out = join(dir, 'soak.json')
  try {
    const child = spawn(process.execPath, [runJs, '--minutes', '2', '--rate', '20', '--out', out], { stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (d: Buffer) => (output += d.toString()))
    child.stderr.on('data', (d: Buffer) => (output += d.toString()))
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
    expect(existsSync(out), output).toBe(true)
    const result = JSON.parse(readFileSync(out, 'utf8')) as {
      acknowledged_writes: number
      lost_writes: number
      duplicated_writes: number
      half_applied_writes: number
      examples: unknown
      faults: Array<{ target: string; kind: string; at_s: number; recovered_s: number | null }>
      max_recovery_s: number | null
      start_s: number
      recovery_limit_s: number
      plot: string
    }
    expect({ lost: result.lost_writes, duplicated: result.duplicated_writes, half_applied: result.half_applied_writes }, JSON.stringify(result.examples)).toEqual({ lost: 0, duplicated: 0, half_applied: 0 })
    expect(result.acknowledged_writes).toBeGreaterThan(100)
    expect(code, output).toBe(0)
    // Every kind of fault, each recovered from.
    expect(new Set(result.faults.map((f) => `${f.target} ${f.kind}`))).toEqual(new Set(['gateway-1 kill -9', 'gateway-2 kill -9', 'core kill -9', 'postgres stop', 'postgres hang', 'redis stop', 'redis hang']))
    for (const f of result.faults) expect(f.recovered_s, `${f.target} ${f.kind}`).not.toBeNull()
    expect(result.max_recovery_s).toBeGreaterThan(0)
    expect(result.recovery_limit_s).toBe(recoveryLimitSeconds(result.start_s))
    expect(readFileSync(result.plot, 'utf8')).toMatch(/^<svg[\s\S]*postgres hang[\s\S]*<\/svg>\n$/)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}, 900_000)
