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
import { judgedFigures } from '../../bench/report.js'
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

  it('measures every scenario against the real apps without a single failed request', { timeout: 420_000 }, async () => {
    expect(existsSync(runJs), `${runJs} is missing: run npm run build`).toBe(true)
    const out = join(dir, 'results.json')
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        [runJs, '--quick', '--out', out],
        { env: { ...process.env, DATABASE_URL: postgresUrl, REDIS_URL: redisUrl!, CI: process.env.CI ?? '' }, timeout: 400_000, maxBuffer: 16 * 1024 * 1024 },
        (_err, stdout, stderr) => resolve({ code: child.exitCode, output: `${stdout}\n${stderr}` }),
      )
    })
    expect(code, output).toBe(0)
    type Summary = { rps: number; p50_ms: number; p99_ms: number; rss_mb: number | null; non2xx: number; status_5xx: number; errors: number } & Record<'core_cpu_us' | 'front_cpu_us' | 'db_cpu_us' | 'redis_cpu_us' | 'machine_cpu_us', number | null>
    const results = JSON.parse(readFileSync(out, 'utf8')) as {
      gateway_alone: {
        node: string
        nginx: string | null
        reference: { bare_proxy_cpu_us: number | null; nginx_cpu_us: number | null; load_average: { start: number; end: number } | null }
        scenarios: Record<string, Summary | null>
        ratios: Record<string, number | null>
      }
      gateway_alone_node24: unknown
      profile: unknown
      core: { pool_size: number; scenarios: Record<string, Summary>; ratios: Record<string, number> }
      latency: { fixed_rate_rps: number; round_rates_rps: number[]; scenarios: Record<string, Summary>; p99_ratio: Record<string, number> }
      embedded: Record<string, number>
      scenarios: Record<string, Summary>
      ratios: Record<string, number>
      added_p99_ms: number
      node: string
      cpus: number
      settings: { rounds: number; timeline_entries: number }
      targets: Array<{ name: string; value: number | null; spread: [number, number] | null; bound: string; floor: number | null; verdict: string }>
      spread: Record<string, [number, number] | null>
    }
    const served = (name: string, s: Summary | null | undefined) => {
      expect(s, `${name} missing from ${out}`).toBeDefined()
      expect(s!.rps, name).toBeGreaterThan(0)
      expect(s!.errors, name).toBe(0)
      expect(s!.status_5xx, name).toBe(0)
      // Every request is validly signed: a 401 here would mean the benchmark measures rejections.
      expect(s!.non2xx, name).toBe(0)
      expect(s!.p99_ms, name).toBeGreaterThanOrEqual(s!.p50_ms)
      expect(s!.rss_mb, name).toBeGreaterThan(0)
      expect(s!.machine_cpu_us, name).toBeGreaterThan(0)
    }

    // 1. The gateway alone, each front with its own CPU per request; nginx null when absent.
    const alone = results.gateway_alone
    for (const name of ['upstream_direct', 'undici_proxy', 'bare_proxy', 'anonymous', 'anonymous_no_oidc', 'basic', 'wsse', 'oauth', 'oauth2', 'required_anonymous', 'required_basic', 'required_wsse', 'required_oauth', 'required_oauth2']) {
      served(`gateway_alone.${name}`, alone.scenarios[name])
      expect(alone.scenarios[name]!.front_cpu_us, name).toBeGreaterThan(0)
    }
    expect(Object.keys(alone.ratios).sort()).toEqual([
      'anonymous_vs_bare_proxy',
      'anonymous_vs_nginx',
      'anonymous_vs_no_oidc',
      'anonymous_vs_required',
      'bare_proxy_vs_nginx',
      'basic_vs_bare_proxy',
      'basic_vs_required',
      'oauth2_vs_bare_proxy',
      'oauth2_vs_oauth',
      'oauth2_vs_required',
      'oauth_vs_bare_proxy',
      'oauth_vs_required',
      'required_anonymous_vs_bare_proxy',
      'required_basic_vs_bare_proxy',
      'required_oauth2_vs_bare_proxy',
      'required_oauth_vs_bare_proxy',
      'required_wsse_vs_bare_proxy',
      'undici_proxy_vs_bare_proxy',
      'wsse_vs_bare_proxy',
      'wsse_vs_required',
    ])
    for (const k of ['anonymous', 'basic', 'wsse', 'oauth', 'oauth2', 'required_anonymous', 'required_basic', 'required_wsse', 'required_oauth', 'required_oauth2']) expect(alone.ratios[`${k}_vs_bare_proxy`]).toBeGreaterThan(0)
    if (alone.nginx === null) {
      expect(alone.scenarios.nginx).toBeNull()
      expect(alone.ratios.bare_proxy_vs_nginx).toBeNull()
      expect(alone.ratios.anonymous_vs_nginx).toBeNull()
    } else {
      served('gateway_alone.nginx', alone.scenarios.nginx)
      expect(alone.ratios.bare_proxy_vs_nginx).toBeGreaterThan(0)
      expect(alone.ratios.anonymous_vs_nginx).toBeGreaterThan(0)
    }
    // The machine reference the ratios were measured at; nginx's version, never a path.
    expect(alone.node).toBe(process.version)
    expect(alone.reference.bare_proxy_cpu_us).toBe(alone.scenarios.bare_proxy!.front_cpu_us)
    expect(alone.reference.load_average).toEqual({ start: expect.any(Number), end: expect.any(Number) })
    if (alone.nginx !== null) expect(alone.nginx).toMatch(/^nginx\/[0-9.]+$/)
    expect(alone.ratios.anonymous_vs_no_oidc).toBeGreaterThan(0)
    // A quick run takes neither the Node 24 pass nor a profile.
    expect(results.gateway_alone_node24).toBeNull()
    expect(results.profile).toBeNull()
    for (const name of ['oauth', 'wsse', 'required_oauth', 'required_wsse']) expect(alone.scenarios[name]!.redis_cpu_us, `${name}: the nonce claims`).toBeGreaterThan(0)

    // 2. The core against its anchor.
    for (const name of ['anchor_show', 'required_show', 'required_show_identified', 'show', 'show_identified']) served(`core.${name}`, results.core.scenarios[name])
    expect(Object.keys(results.core.ratios).sort()).toEqual([
      'required_identified_vs_anonymous',
      'required_vs_anchor',
      'show_identified_vs_anonymous',
      'show_identified_vs_required',
      'show_vs_anchor',
      'show_vs_required',
    ])
    for (const v of Object.values(results.core.ratios)) expect(v).toBeGreaterThan(0)

    // 3. The whole system, as before.
    for (const name of [...scenarioNames, ...fixedRateNames]) {
      const s = results.scenarios[name]
      served(name, s)
      // CPU per request of each process involved (PostgreSQL and Redis run on this machine).
      expect(s!.core_cpu_us, name).toBeGreaterThan(0)
      if (!name.startsWith('core_direct')) expect(s!.front_cpu_us, name).toBeGreaterThan(0)
      expect(s!.db_cpu_us, name).toBeGreaterThan(0)
      if (/oauth|wsse/.test(name)) expect(s!.redis_cpu_us, `${name}: the nonce claims`).toBeGreaterThan(0)
    }
    expect(Object.keys(results.ratios).sort()).toEqual([
      'anonymous_vs_bare_proxy',
      'basic_vs_anonymous',
      'oauth_vs_anonymous',
      'public_timeline_oauth_vs_show_oauth',
      'public_timeline_vs_show',
      'wsse_vs_anonymous',
    ])
    for (const v of Object.values(results.ratios)) expect(v).toBeGreaterThan(0)
    expect(typeof results.added_p99_ms).toBe('number')
    // The public timeline beside statuses/show (docs/performance.md#the-groups-and-their-keys), over the store seeded in bulk.
    for (const name of ['gateway_public_timeline', 'gateway_public_timeline_oauth']) expect(results.scenarios[name], name).toBeDefined()
    expect(results.settings.timeline_entries).toBeGreaterThanOrEqual(2000)

    // 4. Latency at half the bare proxy's rate, as ratios.
    expect(results.latency.fixed_rate_rps).toBeGreaterThan(0)
    // Each round's rate is half the bare proxy's saturation measured just before it.
    expect(results.latency.round_rates_rps).toHaveLength(results.settings.rounds)
    for (const rate of results.latency.round_rates_rps) expect(rate).toBeGreaterThan(0)
    for (const name of ['bare_proxy', 'anonymous', 'basic', 'wsse', 'oauth']) served(`latency.${name}`, results.latency.scenarios[name])
    expect(Object.keys(results.latency.p99_ratio).sort()).toEqual(['anonymous_vs_bare_proxy', 'basic_vs_bare_proxy', 'oauth_vs_bare_proxy', 'required_oauth_vs_bare_proxy', 'wsse_vs_bare_proxy'])
    for (const v of Object.values(results.latency.p99_ratio)) expect(v).toBeGreaterThan(0)

    // 5. The embedded footprint: a whole node process, not a shell.
    expect(Object.keys(results.embedded).sort()).toEqual(['idle_rss_mb', 'loaded_rss_mb', 'start_cpu_s', 'start_s'])
    expect(results.embedded.start_s).toBeGreaterThan(0)
    expect(results.embedded.start_cpu_s).toBeGreaterThan(0.1)
    expect(results.embedded.idle_rss_mb).toBeGreaterThan(30)
    expect(results.embedded.loaded_rss_mb).toBeGreaterThan(30)

    expect(results.node).toBe(process.version)
    expect(results.cpus).toBeGreaterThan(0)

    // Every target with its verdict (a quick run has neither the Node 24 pass's nor the
    // profile's), and a floor measured in this run beside each of the ratios to the bare
    // proxy, the anchor and its p99 (the footprint and the whole system have none).
    expect(results.targets).toHaveLength(19)
    for (const t of results.targets) {
      expect(t.value, t.name).not.toBeNull()
      expect(['met', 'not met', 'out of reach'], t.name).toContain(t.verdict)
    }
    const floored = results.targets.filter((t) => t.floor !== null).map((t) => t.name.replace(/ at \d+ rps/, ''))
    expect(floored).toEqual([
      'gateway alone: anonymous / bare proxy rps',
      'gateway alone: basic / bare proxy rps',
      'gateway alone: wsse / bare proxy rps',
      'gateway alone: oauth / bare proxy rps',
      'core show / anchor rps',
      'core show identified / anonymous rps',
      'oauth p99 / bare proxy p99',
    ])
    // One pass per scenario in a quick run: no spread to speak of, for every judged ratio.
    expect(Object.keys(results.spread).sort()).toEqual([...judgedFigures].sort())
    expect(Object.values(results.spread).every((v) => v === null)).toBe(true)
    expect(results.targets.every((t) => t.spread === null)).toBe(true)
    expect(output).toMatch(/^targets met: \d+\/19/m)
  })
})
