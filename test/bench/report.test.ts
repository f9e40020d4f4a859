// What the benchmark reports: medians over rounds, counts summed, the ratios of docs/performance.md#how-it-measures,
// and each target marked met or not in the printed table.
import { describe, expect, it } from 'vitest'
import { aloneNames, coreNames, latencyNames, scenarioNames } from '../../bench/scenarios.js'
import { formatReport, median, pairedRatio, ratioSpread, ratios, judgedFigures, spreads, summarize, targets, targetsLine, timelineRatios, type BenchResults, type JudgedFigure, type Spread, type WindowMeasurement } from '../../bench/report.js'

const w = (rps: number, p99Ms: number, extra: Partial<WindowMeasurement> = {}): WindowMeasurement => ({
  rps, p50Ms: p99Ms / 4, p99Ms, rssMb: 100, non2xx: 0, status5xx: 0, errors: 0, ...extra,
})

describe('summaries', () => {
  it('takes medians of rates and latencies, the largest RSS, and sums the failures', () => {
    expect(median([3, 1, 2])).toBe(2)
    expect(median([4, 1, 3, 2])).toBe(2.5)
    const s = summarize([w(1000, 4, { rssMb: 120, non2xx: 2 }), w(3000, 8, { rssMb: 90, errors: 1 }), w(2000, 2, { status5xx: 1, non2xx: 1 })])
    expect(s).toMatchObject({ rps: 2000, p99_ms: 4, rss_mb: 120, non2xx: 3, status_5xx: 1, errors: 1, windows: 3 })
  })

  it('divides each gateway scenario by its reference', () => {
    const one = (rps: number) => [w(rps, 1)]
    const r = ratios({ bare_proxy: one(1000), gateway_anonymous: one(900), gateway_oauth: one(720), gateway_basic: one(891), gateway_wsse: one(450) })
    expect(r).toEqual({ anonymous_vs_bare_proxy: 0.9, oauth_vs_anonymous: 0.8, basic_vs_anonymous: 0.99, wsse_vs_anonymous: 0.5 })
  })

  it('pairs the windows of each round, so a slow round affects both sides', () => {
    // Round 2 ran on a slow machine: both scenarios are half as fast there.
    const rounds = (...rps: number[]) => rps.map((v) => w(v, 1))
    const r = ratios({
      bare_proxy: rounds(1000, 500, 1000),
      gateway_anonymous: rounds(900, 450, 900),
      gateway_oauth: rounds(800, 400, 760),
      gateway_basic: rounds(880, 440, 880),
      gateway_wsse: rounds(700, 350, 700),
    })
    expect(r.anonymous_vs_bare_proxy).toBe(0.9)
    expect(r.oauth_vs_anonymous).toBe(0.889)
    expect(r.wsse_vs_anonymous).toBe(0.778)
  })

  it('gives the middle half of the passes beside the median, each pass paired as the ratio is', () => {
    const rounds = (...rps: number[]) => rps.map((v) => w(v, 1))
    // Eight passes; the fourth ran on a slow machine, both sides at half speed.
    const windows = { bare: rounds(1000, 1000, 1000, 500, 1000, 1000, 1000, 1000), gateway: rounds(840, 700, 800, 380, 720, 820, 740, 780) }
    // Pass ratios, sorted: 0.70 0.72 0.74 0.76 0.78 0.80 0.82 0.84.
    expect(pairedRatio(windows, 'gateway', 'bare')).toBe(0.77)
    expect(ratioSpread(windows, 'gateway', 'bare')).toEqual([0.735, 0.805])
    expect(ratioSpread({ a: rounds(10, 30, 20, 40), b: rounds(10, 10, 10, 10) }, 'a', 'b')).toEqual([1.75, 3.25])
    // Too few passes to speak of quartiles (a quick run has one), or a side not run.
    expect(ratioSpread({ a: rounds(1, 2, 3), b: rounds(1, 1, 1) }, 'a', 'b')).toBeNull()
    expect(ratioSpread(windows, 'gateway', 'nginx')).toBeNull()
    // The latency figure pairs p99s the same way.
    expect(ratioSpread({ a: [w(1, 2), w(1, 4), w(1, 6), w(1, 8)], b: [w(1, 2), w(1, 2), w(1, 2), w(1, 2)] }, 'a', 'b', 'p99Ms')).toEqual([1.75, 3.25])
  })

  it('spreads every judged ratio over the scenarios the benchmark runs', () => {
    // Four passes of every scenario, each scenario's own rates, the bare proxies' four times slower.
    const names = [...scenarioNames, ...aloneNames, ...coreNames, ...latencyNames]
    const windows = Object.fromEntries(names.map((n) => [n, [1, 2, 3, 4].map((i) => w(n.endsWith('bare_proxy') ? 250 * i : 1000 + i, n.endsWith('bare_proxy') ? 4 * i : i))]))
    const all = spreads(windows)
    expect(Object.keys(all)).toEqual(judgedFigures)
    // A pair whose names the benchmark does not run would be null here.
    for (const f of judgedFigures) expect(all[f], f).not.toBeNull()
    expect(all['gateway_alone.ratios.wsse_vs_bare_proxy']).toEqual(ratioSpread(windows, 'alone_wsse', 'alone_bare_proxy'))
    // The latency figure is a ratio of p99s: 1/4 in every pass here.
    expect(all['latency.p99_ratio.oauth_vs_bare_proxy']).toEqual([0.25, 0.25])
  })

  it('divides each public timeline scenario by statuses/show with the same credentials', () => {
    const rounds = (...rps: number[]) => rps.map((v) => w(v, 1))
    const r = timelineRatios({
      gateway_anonymous: rounds(1000, 500, 1000),
      gateway_oauth: rounds(800, 400, 800),
      gateway_public_timeline: rounds(400, 250, 300),
      gateway_public_timeline_oauth: rounds(200, 300, 320),
    })
    expect(r).toEqual({ public_timeline_vs_show: 0.4, public_timeline_oauth_vs_show_oauth: 0.4 })
  })
})

describe('printed report', () => {
  const results: BenchResults = {
    gateway_alone: {
      node: 'v20.0.0',
      nginx: null,
      reference: { bare_proxy_cpu_us: 60, nginx_cpu_us: null, load_average: { start: 3.5, end: 4.25 } },
      scenarios: { bare_proxy: summarize([w(14000, 4, { frontCpuUs: 60 })]), oauth: summarize([w(11900, 5, { frontCpuUs: 80 })]), nginx: null },
      ratios: { anonymous_vs_bare_proxy: 0.96, basic_vs_bare_proxy: 0.9, wsse_vs_bare_proxy: 0.79, oauth_vs_bare_proxy: 0.85, oauth2_vs_bare_proxy: 0.9, oauth2_vs_oauth: 1.06, bare_proxy_vs_nginx: null, anonymous_vs_nginx: null, undici_proxy_vs_bare_proxy: 1.2, required_anonymous_vs_bare_proxy: 0.98, required_basic_vs_bare_proxy: 0.93, required_wsse_vs_bare_proxy: 0.82, required_oauth_vs_bare_proxy: 0.8, required_oauth2_vs_bare_proxy: 0.92, anonymous_vs_required: 0.98, basic_vs_required: 0.97, wsse_vs_required: 0.96, oauth_vs_required: 1.06, oauth2_vs_required: 0.98, anonymous_vs_no_oidc: 0.99 },
    },
    gateway_alone_node24: null,
    profile: { scenario: 'alone_anonymous', node: 'v20.0.0', samples: 4000, kigo_percent: 6.4, kigo_files: [{ file: 'gateway/proxy/forward.js', percent: 1.2 }], file: 'CPU.cpuprofile' },
    core: { pool_size: 10, scenarios: {}, ratios: { show_vs_anchor: 0.92, show_identified_vs_anonymous: 0.89, required_vs_anchor: 0.95, show_vs_required: 0.968, required_identified_vs_anonymous: 0.931, show_identified_vs_required: 0.902 } },
    latency: { fixed_rate_rps: 7000, round_rates_rps: [6900, 7000, 7100], scenarios: {}, p99_ratio: { anonymous_vs_bare_proxy: 1.1, basic_vs_bare_proxy: 1.2, wsse_vs_bare_proxy: 1.3, oauth_vs_bare_proxy: 1.6, required_oauth_vs_bare_proxy: 1.4 } },
    embedded: { start_s: 2.4, start_cpu_s: 2.1, idle_rss_mb: 140.2, loaded_rss_mb: 170.5 },
    scenarios: {
      core_direct: summarize([w(5000, 1.5, { coreCpuUs: 180 })]),
      gateway_oauth: summarize([
        w(3000, 3.25, { non2xx: 7, coreCpuUs: 200, frontCpuUs: 290, dbCpuUs: 90, redisCpuUs: 20, machineCpuUs: 800 }),
        w(3000, 3.25, { coreCpuUs: 220, frontCpuUs: 310, dbCpuUs: 110, redisCpuUs: 30, machineCpuUs: 900 }),
      ]),
    },
    ratios: { anonymous_vs_bare_proxy: 0.95, oauth_vs_anonymous: 0.8, basic_vs_anonymous: 0.97, wsse_vs_anonymous: 0.9, public_timeline_vs_show: 0.31, public_timeline_oauth_vs_show_oauth: 0.352 },
    added_p99_ms: 2.5,
    gateway_rss_mb: 180,
    fixed_rate_rps: 2500,
    spread: {
      ...(Object.fromEntries(judgedFigures.map((f) => [f, null])) as Record<JudgedFigure, Spread>),
      'gateway_alone.ratios.wsse_vs_bare_proxy': [0.772, 0.806],
      'latency.p99_ratio.oauth_vs_bare_proxy': [1.45, 1.7],
    },
    node: 'v20.0.0',
    cpus: 2,
    settings: { mode: 'full', rounds: 3, duration_s: 10, slice_s: 2, warmup_s: 3, paced_warmup_s: 2, connections: 32, entries: 3000, timeline_entries: 100000 },
  }

  it('marks each target met or not', () => {
    const verdicts = targets(results).map((x) => [x.name.replace(/ at \d+ rps/, ''), x.verdict === 'met'])
    expect(verdicts).toEqual([
      ['gateway alone: anonymous / bare proxy rps', true],
      ['gateway alone: basic / bare proxy rps', true],
      ['gateway alone: wsse / bare proxy rps', false],
      ['gateway alone: oauth / bare proxy rps', true],
      ['gateway alone: oauth2 / oauth rps (Bearer against OAuth 1.0a)', true],
      ['gateway alone: anonymous / its floor rps', true],
      ['gateway alone: basic / its floor rps', true],
      ['gateway alone: OpenID Connect served / never served (v20.0.0)', true],
      ["kigo's own code in the gateway's CPU (alone_anonymous)", false],
      ['core show / anchor rps', true],
      ['core show identified / anonymous rps', false],
      ['oauth p99 / bare proxy p99', false],
      ['embedded idle RSS', true],
      ['embedded npm start to ready', true],
      ['whole system: gateway_anonymous / bare_proxy rps', true],
      ['whole system: gateway_oauth / gateway_anonymous rps', false],
      ['whole system: gateway_basic / gateway_anonymous rps', true],
      ['whole system: gateway_wsse / gateway_anonymous rps', true],
      ['whole system: added p99 (oauth - core)', false],
      ['whole system: gateway RSS under load', true],
    ])
  })

  it('calls a target out of reach only when its floor, in the same run, misses the bound too', () => {
    const byName = (r: BenchResults) => Object.fromEntries(targets(r).map((t) => [t.name.replace(/ at \d+ rps/, ''), t]))
    const t = byName(results)
    // WSSE 0.79 with a floor of 0.82: the floor meets 0.80, so the gateway could.
    expect(t['gateway alone: wsse / bare proxy rps']).toMatchObject({ value: 0.79, floor: 0.82, verdict: 'not met' })
    // OAuth's p99 ratio 1.6 with the floor's 1.4: within reach.
    expect(t['oauth p99 / bare proxy p99']).toMatchObject({ value: 1.6, floor: 1.4, verdict: 'not met' })
    // The identified figure 0.89 with its floor 0.931: not met.
    expect(t['core show identified / anonymous rps']).toMatchObject({ floor: 0.931, verdict: 'not met' })
    // Met stays met whatever the floor; a figure without a floor is never out of reach.
    expect(t['gateway alone: oauth / bare proxy rps']).toMatchObject({ value: 0.85, floor: 0.8, verdict: 'met' })
    expect(t['whole system: added p99 (oauth - core)']).toMatchObject({ floor: null, verdict: 'not met' })

    const slow: BenchResults = {
      ...results,
      gateway_alone: { ...results.gateway_alone, ratios: { ...results.gateway_alone.ratios, required_wsse_vs_bare_proxy: 0.78 } },
      latency: { ...results.latency, p99_ratio: { ...results.latency.p99_ratio, required_oauth_vs_bare_proxy: 1.9 } },
      core: { ...results.core, ratios: { ...results.core.ratios, required_identified_vs_anonymous: null } },
    }
    const s = byName(slow)
    expect(s['gateway alone: wsse / bare proxy rps']).toMatchObject({ value: 0.79, floor: 0.78, verdict: 'out of reach' })
    expect(s['oauth p99 / bare proxy p99']).toMatchObject({ value: 1.6, floor: 1.9, verdict: 'out of reach' })
    // An unmeasured floor proves nothing.
    expect(s['core show identified / anonymous rps']).toMatchObject({ floor: null, verdict: 'not met' })
    expect(targetsLine(targets(slow))).toBe('targets met: 14/20; out of reach in this run (the floor misses the bound too): 2')
    expect(targetsLine(targets(results))).toBe('targets met: 14/20')
    const text = formatReport(slow)
    expect(text).toMatch(/^gateway alone: wsse \/ bare proxy rps\s+0\.790\s+0\.772-0\.806\s+>= 0\.80\s+0\.780\s+out of reach: the floor misses it too$/m)
    expect(text).toMatch(/^core show identified \/ anonymous rps\s+0\.890\s+-\s+>= 0\.90\s+-\s+NOT met$/m)
    expect(t['gateway alone: wsse / bare proxy rps']!.spread).toEqual([0.772, 0.806])
    expect(t['embedded idle RSS']!.spread).toBeNull()
  })

  it('says "not measured" for what a partial run (--only) left out, never "met"', () => {
    const partial: BenchResults = {
      ...results,
      core: { ...results.core, ratios: { show_vs_anchor: pairedRatio({}, 'core_show', 'core_anchor_show'), show_identified_vs_anonymous: null, required_vs_anchor: null, show_vs_required: null, required_identified_vs_anonymous: null, show_identified_vs_required: null } },
      latency: { ...results.latency, p99_ratio: { anonymous_vs_bare_proxy: null, basic_vs_bare_proxy: null, wsse_vs_bare_proxy: null, oauth_vs_bare_proxy: null, required_oauth_vs_bare_proxy: null } },
      embedded: null,
      added_p99_ms: null,
      spread: { ...results.spread, 'core.ratios.show_vs_anchor': null, 'core.ratios.show_identified_vs_anonymous': null, 'latency.p99_ratio.oauth_vs_bare_proxy': null },
    }
    const unmeasured = targets(partial).filter((t) => t.value === null).map((t) => t.name.replace(/ at \d+ rps/, ''))
    expect(unmeasured).toEqual(['core show / anchor rps', 'core show identified / anonymous rps', 'oauth p99 / bare proxy p99', 'embedded idle RSS', 'embedded npm start to ready', 'whole system: added p99 (oauth - core)'])
    const text = formatReport(partial)
    expect(text).toMatch(/^oauth p99 \/ bare proxy p99 at 7000 rps\s+-\s+-\s+<= 1\.5\s+-\s+not measured$/m)
    expect(text).toMatch(/^embedded npm start to ready\s+-\s+-\s+<= 3 s\s+-\s+not measured$/m)
    expect(text).toContain('5. embedded: not run')
  })

  it('names no rate for a fixed-rate figure whose rate a partial run did not measure', () => {
    const text = formatReport({ ...results, fixed_rate_rps: 0, added_p99_ms: null, latency: { ...results.latency, fixed_rate_rps: 0 } })
    expect(text).toMatch(/^oauth p99 \/ bare proxy p99\s+\S+\s+\S+\s+<= 1\.5/m)
    expect(text).toMatch(/^whole system: added p99 \(oauth - core\)\s+-\s+-\s+<= 2 ms\s+-\s+not measured$/m)
    expect(text).not.toContain('at 0 rps')
  })

  it('prints a scenario a partial run left out as "not run", not as a row of zeros', () => {
    const text = formatReport({ ...results, core: { ...results.core, scenarios: { ...results.core.scenarios, show: summarize([]) } } })
    expect(text).toMatch(/^show\s+not run(\s+-){11}$/m)
  })

  it('prints every scenario, an absent nginx, and every target with its verdict', () => {
    const text = formatReport(results)
    expect(text).toContain("required checks only (rps over the anchor): 0.950; the core's over it: 0.968")
    expect(text).toContain("required checks only, signed viewer over anonymous: 0.931; the core's signed viewer over the floor's: 0.902")
    expect(text).toMatch(/^core_direct\s+5000\s+0\.38\s+1\.50\s+100\.0\s+0\s+0\s+0\s+180\s+-\s+-\s+-\s+-$/m)
    expect(text).toMatch(/^gateway_oauth\s+3000\s+0\.81\s+3\.25\s+100\.0\s+7\s+0\s+0\s+210\s+300\s+100\s+25\s+850$/m)
    expect(text).toMatch(/^oauth\s+11900\s.*\s80\s+-\s+-\s+-$/m)
    expect(text).toMatch(/^nginx\s+absent\b/m)
    expect(text).toContain('nginx is not installed (null)')
    expect(text).toContain("required work only (rps over the bare proxy; the gateway's over it): anonymous 0.980, gateway 0.980; Basic 0.930, gateway 0.970; WSSE 0.820, gateway 0.960; OAuth 0.800, gateway 1.060")
    expect(text).toMatch(/^whole system: gateway_oauth \/ gateway_anonymous rps\s+0\.800\s+-\s+>= 0\.85\s+-\s+NOT met$/m)
    expect(text).toMatch(/^oauth p99 \/ bare proxy p99 at 7000 rps\s+1\.600\s+1\.450-1\.700\s+<= 1\.5\s+1\.400\s+NOT met$/m)
    expect(text).toMatch(/^embedded idle RSS\s+140\.20 MB\s+-\s+<= 200 MB\s+-\s+met$/m)
    expect(text).toMatch(/^target\s+measured\s+passes p25-p75\s+bound\s+floor$/m)
    expect(text).toContain('3. whole system (public timeline, count=20, over 100000 entries; over statuses/show: anonymous 0.310, OAuth 0.352)')
    // The machine reference beside the group's ratios, the provider's cost, the profile's share.
    expect(text).toContain('1. gateway alone, v20.0.0, in front of a fixed ~700-byte upstream')
    expect(text).toContain('machine reference: bare proxy 60 µs/req, nginx - µs/req, load average 3.50 to 4.25')
    expect(text).toContain('OpenID Connect served / never served (anonymous rps): 0.990')
    expect(text).toContain("1b. gateway alone on the image's Node: not run")
    expect(text).toContain("profile of alone_anonymous on v20.0.0: kigo's own code 6.40 % of 4000 samples (gateway/proxy/forward.js 1.20 %); CPU.cpuprofile")
    expect(text).toMatch(/^kigo's own code in the gateway's CPU \(alone_anonymous\)\s+6\.40 %\s+-\s+<= 5 %\s+-\s+NOT met$/m)
    expect(text).toContain('5. embedded: npm start to ready 2.40 s (the app\'s CPU until then 2.10 s), idle RSS 140.2 MB, after 1,000 mixed requests 170.5 MB')
  })
})
