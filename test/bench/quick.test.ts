// `npm run bench -- --quick` runs in the test suite so the benchmark never rots: the
// production topology starts, every scenario is measured, and nothing fails. The
// performance targets are reported by the benchmark, never asserted here.
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { fixedRateNames, scenarioNames } from '../../bench/scenarios.js'
import { availableRedis, freshPostgres, postgresUrl } from '../helpers/services.js'

const runJs = fileURLToPath(new URL('../../dist/bench/run.js', import.meta.url))

// Same rules as the other PostgreSQL/Redis suites: skip with a reason outside CI, fail under CI.
const probe = await freshPostgres()
await probe?.drop()
const redisUrl = await availableRedis()
const services = probe !== null && redisUrl !== null

describe.skipIf(!services)('npm run bench -- --quick', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kigo-bench-test-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('measures every scenario against the real apps without a single failed request', { timeout: 180_000 }, async () => {
    expect(existsSync(runJs), `${runJs} is missing: run npm run build`).toBe(true)
    const out = join(dir, 'results.json')
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        [runJs, '--quick', '--out', out],
        { env: { ...process.env, DATABASE_URL: postgresUrl, REDIS_URL: redisUrl!, CI: process.env.CI ?? '' }, timeout: 170_000, maxBuffer: 16 * 1024 * 1024 },
        (_err, stdout, stderr) => resolve({ code: child.exitCode, output: `${stdout}\n${stderr}` }),
      )
    })
    expect(code, output).toBe(0)
    const results = JSON.parse(readFileSync(out, 'utf8')) as {
      scenarios: Record<string, { rps: number; p50_ms: number; p99_ms: number; rss_mb: number | null; non2xx: number; status_5xx: number; errors: number } & Record<'core_cpu_us' | 'front_cpu_us' | 'db_cpu_us' | 'redis_cpu_us' | 'machine_cpu_us', number | null>>
      ratios: Record<string, number>
      added_p99_ms: number
      embedded_idle_rss_mb: number
      node: string
      cpus: number
    }
    for (const name of [...scenarioNames, ...fixedRateNames]) {
      const s = results.scenarios[name]
      expect(s, `${name} missing from ${out}`).toBeDefined()
      expect(s!.rps, name).toBeGreaterThan(0)
      expect(s!.errors, name).toBe(0)
      expect(s!.status_5xx, name).toBe(0)
      // Every request is validly signed: a 401 here would mean the benchmark measures rejections.
      expect(s!.non2xx, name).toBe(0)
      expect(s!.p99_ms, name).toBeGreaterThanOrEqual(s!.p50_ms)
      expect(s!.rss_mb, name).toBeGreaterThan(0)
      // CPU per request of each process involved (PostgreSQL and Redis run on this machine).
      expect(s!.core_cpu_us, name).toBeGreaterThan(0)
      if (!name.startsWith('core_direct')) expect(s!.front_cpu_us, name).toBeGreaterThan(0)
      expect(s!.db_cpu_us, name).toBeGreaterThan(0)
      expect(s!.machine_cpu_us, name).toBeGreaterThan(s!.core_cpu_us!)
      if (/oauth|wsse/.test(name)) expect(s!.redis_cpu_us, `${name}: the nonce claims`).toBeGreaterThan(0)
    }
    expect(Object.keys(results.ratios).sort()).toEqual(['anonymous_vs_bare_proxy', 'basic_vs_anonymous', 'oauth_vs_anonymous', 'wsse_vs_anonymous'])
    for (const v of Object.values(results.ratios)) expect(v).toBeGreaterThan(0)
    expect(typeof results.added_p99_ms).toBe('number')
    expect(results.embedded_idle_rss_mb).toBeGreaterThan(0)
    expect(results.node).toBe(process.version)
    expect(results.cpus).toBeGreaterThan(0)
  })
})
