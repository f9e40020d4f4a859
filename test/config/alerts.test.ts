// config/alerts.yml: every rule loads in Prometheus (promtool, when installed; required
// under CI=true, where .ci/run installs it), has a summary, and names only metrics that
// kigo exports (the gateway's registry, the core's, and Prometheus's own `up`).
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { projectRoot } from '../../src/common/config.js'
import { createCoreMetrics } from '../../src/core/metrics.js'
import { createMetrics, watchPolicy } from '../../src/gateway/metrics/metrics.js'
import { legacyMethods } from '../../src/gateway/policy/types.js'

const file = join(projectRoot, 'config', 'alerts.yml')

interface Rule { alert?: string; expr: string; for?: string; labels?: Record<string, string>; annotations?: Record<string, string> }

async function exportedNames(): Promise<Set<string>> {
  const gateway = createMetrics()
  watchPolicy(gateway, () => [{ method: 'basic', state: 'deprecate', sunset: null }])
  const core = createCoreMetrics()
  const names = new Set<string>(['up'])
  for (const registry of [gateway.registry, core.registry]) {
    for (const m of await registry.getMetricsAsJSON()) {
      names.add(m.name)
      if (String(m.type) === 'histogram') for (const suffix of ['_count', '_sum', '_bucket']) names.add(m.name + suffix)
    }
  }
  return names
}

describe('config/alerts.yml', () => {
  const doc = parse(readFileSync(file, 'utf8')) as { groups: Array<{ name: string; rules: Rule[] }> }
  const rules = doc.groups.flatMap((g) => g.rules)

  it('covers the replay cache (closed and open), legacy share after sunset, 5xx, the core, throttling', () => {
    const names = rules.map((r) => r.alert)
    for (const expected of ['KigoReplayCacheFailingClosed', 'KigoReplayCacheFailingOpen', 'KigoLegacyShareAfterSunset', 'KigoHigh5xxRate', 'KigoCoreUnreachable', 'KigoThrottlingSpike', 'KigoUserRefusedFromEveryAddress']) {
      expect(names).toContain(expected)
    }
  })

  it('watches every legacy method after its sunset, the login API included', () => {
    const share = rules.find((r) => r.alert === 'KigoLegacyShareAfterSunset')!
    const methods = /method=~"([^"]+)"/.exec(share.expr)![1]!.split('|')
    // OAuth 1.0a's requests are counted as "oauth" and joined to its policy method "oauth1" by their sunset.
    expect(share.expr).toContain('"method", "oauth1", "method", "oauth"')
    expect(methods.map((m) => (m === 'oauth' ? 'oauth1' : m)).sort()).toEqual([...legacyMethods].sort())
  })

  it('gives every alert a summary and a severity', () => {
    for (const r of rules) {
      expect(r.alert, r.expr).toMatch(/^Kigo[A-Za-z0-9]+$/)
      expect(r.annotations?.summary, r.alert).toMatch(/\S/)
      expect(['critical', 'warning', 'info'], r.alert).toContain(r.labels?.severity)
    }
  })

  it('names only metrics kigo exports', async () => {
    const exported = await exportedNames()
    for (const r of rules) {
      const used = [...r.expr.matchAll(/\b(kigo_[a-z0-9_]+|up)\b(?=\s*[{[)]|\s*[=<>!])/g)].map((m) => m[1]!)
      expect(used.length, r.alert).toBeGreaterThan(0)
      for (const name of used) expect(exported.has(name), `${r.alert}: ${name}`).toBe(true)
    }
  })

  it('loads in Prometheus (promtool check rules)', (ctx) => {
    const probe = spawnSync('promtool', ['--version'], { encoding: 'utf8' })
    if (probe.error) {
      if (process.env.CI === 'true') throw new Error('promtool is missing (apt-get install prometheus); .ci/run installs it')
      ctx.skip()
      return
    }
    const run = spawnSync('promtool', ['check', 'rules', file], { encoding: 'utf8' })
    expect(run.stdout + run.stderr).toMatch(/SUCCESS: \d+ rules found/)
    expect(run.status).toBe(0)
  })
})
