// The per-request Prometheus metrics (the gateway's and the core's requests and
// durations): a counter and a histogram whose labelled series are plain objects, found
// once per combination of label values and then counted with an addition. prom-client's
// own labelled children validate and hash their labels and look their bucket up by a
// number turned into a string on every observation: about 0.4-0.6 µs each, three or four
// times per request (docs/performance.md#labelled-metrics-as-plain-objects), against 35-75 ns here, lookup included. Both
// register in a prom-client Registry and expose through it exactly what prom-client's
// Counter and Histogram expose for the same observations
// (test/common/labelled-metrics.test.ts compares the two texts). With tracing on, a
// histogram's buckets carry exemplars: the trace of the latest sampled observation in each
// (withExemplars, below).
import { Registry, type Metric } from 'prom-client'

interface MetricOptions<L extends string> {
  name: string
  help: string
  labelNames: readonly L[]
  registers: Registry[]
}

type Labels = Record<string, string>

/**
 * What the counter and the histogram share: their series, one per combination of label
 * values, found by those values in order through nested maps (no key string is built),
 * and their registration in prom-client's registries.
 */
abstract class LabelledMetric<S> {
  readonly aggregator = 'sum'
  readonly name: string
  readonly help: string
  readonly #labelNames: readonly string[]
  readonly #root = new Map<string, unknown>()
  /** Every series with its labels, in the order first asked for (the exposition's order). */
  protected readonly all: Array<{ labels: Labels; series: S }> = []

  constructor(options: MetricOptions<string>) {
    this.name = options.name
    this.help = options.help
    this.#labelNames = options.labelNames
    for (const registry of options.registers) registry.registerMetric(this as unknown as Metric)
  }

  protected abstract make(): S

  /** The series of these label values (in labelNames' order); hold it, or ask each time. */
  protected find(values: readonly string[]): S {
    if (values.length !== this.#labelNames.length) throw new RangeError(`expected ${this.#labelNames.length} label values, got ${values.length}`)
    let node = this.#root
    const last = values.length - 1
    for (let i = 0; i < last; i++) {
      let next = node.get(values[i]!) as Map<string, unknown> | undefined
      if (next === undefined) node.set(values[i]!, (next = new Map()))
      node = next
    }
    const key = last >= 0 ? values[last]! : ''
    let series = node.get(key) as S | undefined
    if (series === undefined) {
      series = this.make()
      node.set(key, series)
      this.all.push({ labels: Object.fromEntries(this.#labelNames.map((n, i) => [n, values[i]!])), series })
    }
    return series
  }

  reset(): void {
    this.#root.clear()
    this.all.length = 0
  }
}

export interface CounterSeries {
  inc(by?: number): void
}

class CounterValue implements CounterSeries {
  value = 0
  inc(by = 1): void {
    this.value += by
  }
}

/** A Prometheus counter with labels (prom-client's exposition). */
export class LabelledCounter<L extends string> extends LabelledMetric<CounterValue> {
  readonly type = 'counter'

  /** Takes label names of the type L, which the declared metric's type then names. */
  constructor(options: MetricOptions<L>) {
    super(options)
  }

  protected make(): CounterValue {
    return new CounterValue()
  }

  series(...values: string[]): CounterSeries {
    return this.find(values)
  }

  get(): Promise<{ name: string; help: string; type: 'counter'; aggregator: 'sum'; values: Array<{ value: number; labels: Labels }> }> {
    const values = this.all.map(({ labels, series }) => ({ value: series.value, labels }))
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values })
  }
}

export interface HistogramSeries {
  observe(value: number): void
}

/** The trace of one observation, shown beside its bucket (OpenMetrics only). */
interface Exemplar {
  traceId: string
  value: number
  /** Seconds since the epoch, as OpenMetrics writes them. */
  at: number
}

/** Where a histogram's series ask for the trace of an observation; `traceId` is null while exemplars are off. */
interface ExemplarSource {
  traceId: (() => string | undefined) | null
}

class HistogramValue implements HistogramSeries {
  /** Observations per bucket, not cumulative; past the last bound they count in `count` only. */
  readonly buckets: Float64Array
  sum = 0
  count = 0
  /** Per bucket, +Inf last: the latest observation made inside a sampled trace. */
  exemplars: Array<Exemplar | undefined> | null = null

  constructor(readonly bounds: readonly number[], private readonly source: ExemplarSource) {
    this.buckets = new Float64Array(bounds.length)
  }

  observe(value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`)
    const bounds = this.bounds
    let i = 0
    for (; i < bounds.length; i++) {
      if (value <= bounds[i]!) {
        this.buckets[i]!++
        break
      }
    }
    this.sum += value
    this.count++
    if (this.source.traceId !== null) {
      const traceId = this.source.traceId()
      if (traceId !== undefined) (this.exemplars ??= [])[i] = { traceId, value, at: Date.now() / 1000 }
    }
  }
}

/** One line of a histogram's exposition, as prom-client's registry takes it. */
type HistogramLine = { value: number; labels: Record<string, string | number>; metricName: string; exemplar?: { labelSet: Record<string, string>; value: number; timestamp: number } }

/** prom-client's form of an exemplar, which its registry writes in OpenMetrics. */
const exemplarOf = (e: Exemplar | undefined) => (e === undefined ? {} : { exemplar: { labelSet: { trace_id: e.traceId }, value: e.value, timestamp: e.at } })

/** A Prometheus histogram with labels (prom-client's exposition). */
export class LabelledHistogram<L extends string> extends LabelledMetric<HistogramValue> {
  readonly type = 'histogram'
  readonly #bounds: readonly number[]
  readonly #exemplars: ExemplarSource = { traceId: null }

  constructor(options: MetricOptions<L> & { buckets: readonly number[] }) {
    if (options.labelNames.includes('le' as L)) throw new Error('le is a reserved label keyword')
    super(options)
    this.#bounds = [...options.buckets].sort((a, b) => a - b)
  }

  protected make(): HistogramValue {
    return new HistogramValue(this.#bounds, this.#exemplars)
  }

  /** From now on, each observation made inside a sampled trace (`traceId` says which) is its bucket's exemplar. */
  exemplarsFrom(traceId: () => string | undefined): void {
    this.#exemplars.traceId = traceId
  }

  series(...values: string[]): HistogramSeries {
    return this.find(values)
  }

  get(): Promise<{ name: string; help: string; type: 'histogram'; aggregator: 'sum'; values: HistogramLine[] }> {
    const values: HistogramLine[] = []
    for (const { labels, series } of this.all) {
      let cumulative = 0
      const exemplars = series.exemplars ?? []
      this.#bounds.forEach((le, i) => {
        cumulative += series.buckets[i]!
        values.push({ value: cumulative, labels: { le, ...labels }, metricName: `${this.name}_bucket`, ...exemplarOf(exemplars[i]) })
      })
      values.push(
        { value: series.count, labels: { le: '+Inf', ...labels }, metricName: `${this.name}_bucket`, ...exemplarOf(exemplars[this.#bounds.length]) },
        { value: series.sum, labels: { ...labels }, metricName: `${this.name}_sum` },
        { value: series.count, labels: { ...labels }, metricName: `${this.name}_count` },
      )
    }
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values })
  }
}

/**
 * Exemplars on (docs/operations.md#traces): the histograms' buckets carry the trace of their
 * latest sampled observation, and the registry answers in OpenMetrics, the text format that
 * has exemplars (Prometheus reads both; the series are the same). Called only when tracing
 * is on: without it the exposition stays Prometheus' text format 0.0.4.
 */
export function withExemplars(registry: Registry, histograms: ReadonlyArray<LabelledHistogram<string>>, traceId: () => string | undefined): void {
  // The registry is typed with the content type it was made with; this one changes it.
  registry.setContentType(Registry.OPENMETRICS_CONTENT_TYPE as unknown as typeof Registry.PROMETHEUS_CONTENT_TYPE)
  for (const h of histograms) h.exemplarsFrom(traceId)
}
