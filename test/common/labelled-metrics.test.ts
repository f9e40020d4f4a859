import { afterEach, describe, expect, it, vi } from 'vitest'
import { Counter, Histogram, Registry } from 'prom-client'
import { LabelledCounter, LabelledHistogram, withExemplars } from '../../src/common/labelled-metrics.js'

const buckets = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.1, 1]

/** The same observations, made through prom-client's metrics and through ours, in one order. */
function observeBoth(observations: Array<[string[], number]>, counts: Array<[string[], number]>) {
  const theirs = new Registry()
  const ours = new Registry()
  const labelNames = ['route', 'status_class'] as const
  const counterNames = ['method', 'outcome', 'route'] as const
  const h1 = new Histogram({ name: 'kigo_x_duration_seconds', help: 'Time "spent"\\ here', labelNames, buckets, registers: [theirs] })
  const h2 = new LabelledHistogram({ name: 'kigo_x_duration_seconds', help: 'Time "spent"\\ here', labelNames, buckets, registers: [ours] })
  const c1 = new Counter({ name: 'kigo_x_total', help: 'Requests', labelNames: counterNames, registers: [theirs] })
  const c2 = new LabelledCounter({ name: 'kigo_x_total', help: 'Requests', labelNames: counterNames, registers: [ours] })
  for (const [values, v] of observations) {
    h1.labels(...values).observe(v)
    h2.series(...values).observe(v)
  }
  for (const [values, by] of counts) {
    c1.labels(...values).inc(by)
    c2.series(...values).inc(by)
  }
  return { theirs, ours, h2, c2 }
}

describe('LabelledCounter and LabelledHistogram', () => {
  const observations: Array<[string[], number]> = [
    [['statuses_show', '2xx'], 0.0004],
    [['statuses_show', '2xx'], 0.001], // exactly on a bound: counted in that bucket
    [['statuses_show', '2xx'], 0.0011],
    [['favorites', '4xx'], 0],
    [['statuses_show', '5xx'], 7.5], // past the last bound: +Inf only
    [['statuses_show', '2xx'], 0.3],
    [['a "quoted"\\route\nname', '2xx'], 0.002],
    [['favorites', '4xx'], 0.01],
  ]
  const counts: Array<[string[], number]> = [
    [['wsse', 'ok', 'statuses_show'], 1],
    [['oauth', 'replay', 'statuses_show'], 1],
    [['wsse', 'ok', 'statuses_show'], 1],
    [['none', 'ok', 'public_timeline'], 3],
  ]

  it('expose exactly what prom-client’s Counter and Histogram expose for the same observations', async () => {
    const { theirs, ours } = observeBoth(observations, counts)
    const text = await ours.metrics()
    expect(text).toBe(await theirs.metrics())
    expect(text).toContain('kigo_x_duration_seconds_bucket{le="0.001",route="statuses_show",status_class="2xx"} 2')
    expect(text).toContain('kigo_x_duration_seconds_bucket{le="+Inf",route="statuses_show",status_class="5xx"} 1')
    expect(text).toContain('kigo_x_total{method="wsse",outcome="ok",route="statuses_show"} 2')
    // prom-client's JSON also names an exemplar (null) for each value; exemplars are not used.
    const withoutExemplars = (metrics: Awaited<ReturnType<Registry['getMetricsAsJSON']>>) =>
      metrics.map((m) => ({ ...m, values: m.values.map((v) => Object.fromEntries(Object.entries(v).filter(([k, x]) => k !== 'exemplar' || x != null))) }))
    expect(withoutExemplars(await ours.getMetricsAsJSON())).toEqual(withoutExemplars(await theirs.getMetricsAsJSON()))
  })

  it('agree with prom-client in the OpenMetrics format and after a reset', async () => {
    const { theirs, ours } = observeBoth(observations, counts)
    const openMetrics = Registry.OPENMETRICS_CONTENT_TYPE as unknown as typeof Registry.PROMETHEUS_CONTENT_TYPE
    theirs.setContentType(openMetrics)
    ours.setContentType(openMetrics)
    expect(await ours.metrics()).toBe(await theirs.metrics())
    theirs.resetMetrics()
    ours.resetMetrics()
    expect(await ours.metrics()).toBe(await theirs.metrics())
  })

  it('keep one series per combination of label values, in the order first seen', async () => {
    const { h2, c2 } = observeBoth(observations, counts)
    expect(h2.series('statuses_show', '2xx')).toBe(h2.series('statuses_show', '2xx'))
    expect(h2.series('statuses_show', '2xx')).not.toBe(h2.series('statuses_show', '5xx'))
    const values = (await c2.get()).values
    expect(values.map((v) => [v.labels.method, v.value])).toEqual([['wsse', 2], ['oauth', 1], ['none', 3]])
  })

  it('refuse the wrong number of label values and a value that is not a number', () => {
    const { h2, c2 } = observeBoth([], [])
    expect(() => h2.series('statuses_show')).toThrow(RangeError)
    expect(() => c2.series('wsse', 'ok')).toThrow(RangeError)
    expect(() => h2.series('statuses_show', '2xx').observe(Number.NaN)).toThrow(TypeError)
  })
})

describe('exemplars (docs/operations.md#traces)', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it('name the latest sampled trace of each bucket exactly as prom-client’s histogram with exemplars does', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.parse('2027-03-01T12:00:00.250Z') })
    const theirs = new Registry()
    const ours = new Registry()
    const openMetrics = Registry.OPENMETRICS_CONTENT_TYPE as unknown as typeof Registry.PROMETHEUS_CONTENT_TYPE
    theirs.setContentType(openMetrics)
    const h1 = new Histogram({ name: 'kigo_x_duration_seconds', help: 'Time', labelNames: ['route'], buckets, registers: [theirs], enableExemplars: true })
    const h2 = new LabelledHistogram({ name: 'kigo_x_duration_seconds', help: 'Time', labelNames: ['route'], buckets, registers: [ours] })
    let trace: string | undefined
    withExemplars(ours, [h2], () => trace)
    const observations: Array<[number, string | undefined]> = [
      [0.0004, 'a'.repeat(32)],
      [0.003, undefined], // not sampled: counted, no exemplar
      [0.004, 'b'.repeat(32)],
      [0.0045, 'c'.repeat(32)], // the same bucket later: this one is its exemplar
      [0.2, undefined],
    ]
    for (const [value, id] of observations) {
      trace = id
      // prom-client's types take exemplar labels of the metric's own label names; any name works.
      h1.observe({ labels: { route: 'statuses_show' }, value, ...(id ? { exemplarLabels: { trace_id: id } as Record<string, string> } : {}) })
      h2.series('statuses_show').observe(value)
      vi.advanceTimersByTime(1000)
    }
    const text = await ours.metrics()
    expect(ours.contentType).toBe(Registry.OPENMETRICS_CONTENT_TYPE)
    expect(text).toBe(await theirs.metrics())
    expect(text).toContain(`kigo_x_duration_seconds_bucket{le="0.005",route="statuses_show"} 4 # {trace_id="${'c'.repeat(32)}"} 0.0045 1803902403.25`)
    expect(text).not.toContain('b'.repeat(32))
    expect(text).toMatch(/kigo_x_duration_seconds_bucket\{le="1",route="statuses_show"\} 5\n/)
  })

  it('are off until asked for: the text format stays Prometheus 0.0.4, with no trace in it', async () => {
    const registry = new Registry()
    const h = new LabelledHistogram({ name: 'kigo_y_seconds', help: 'Time', labelNames: ['route'], buckets, registers: [registry] })
    h.series('r').observe(0.002)
    expect(registry.contentType).toBe(Registry.PROMETHEUS_CONTENT_TYPE)
    expect(await registry.metrics()).not.toContain(' # {')
    expect(await registry.metrics()).not.toContain('trace_id')
  })
})
