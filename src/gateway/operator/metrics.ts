// Prometheus metrics of SPEC §6.2. One registry per gateway instance (tests build several
// in one process). Labels are bounded: auth method, a closed outcome set, route names.
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client'

export interface GatewayMetrics {
  registry: Registry
  authRequests: Counter<'method' | 'outcome' | 'route'>
  authDuration: Histogram<'method'>
  upstreamDuration: Histogram<'route' | 'status_class'>
  replayErrors: Counter<'method'>
  replayFailOpen: Counter<'method'>
  throttleErrors: Counter
}

/**
 * The labelled child of a metric for one combination of label values, made once: every
 * request records three observations, and looking a child up by its label object costs
 * more than the observation itself. Label values are bounded, so the map is too.
 */
export function childOf<C>(cache: Map<string, C>, make: (...values: string[]) => C, ...values: string[]): C {
  const key = values.join('\u0000')
  let child = cache.get(key)
  if (child === undefined) {
    child = make(...values)
    cache.set(key, child)
  }
  return child
}

export function createMetrics(options: { processMetrics?: boolean } = {}): GatewayMetrics {
  const registry = new Registry()
  if (options.processMetrics ?? true) collectDefaultMetrics({ register: registry })
  const registers = [registry]
  return {
    registry,
    authRequests: new Counter({
      name: 'kigo_auth_requests_total',
      help: 'Requests seen by the gateway, by credential method, outcome and route',
      labelNames: ['method', 'outcome', 'route'],
      registers,
    }),
    authDuration: new Histogram({
      name: 'kigo_auth_duration_seconds',
      help: 'Time spent in the authentication stage alone',
      labelNames: ['method'],
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1],
      registers,
    }),
    upstreamDuration: new Histogram({
      name: 'kigo_upstream_duration_seconds',
      help: 'Time from forwarding a request to the core until the response to the client is finished',
      labelNames: ['route', 'status_class'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    replayErrors: new Counter({
      name: 'kigo_replay_cache_errors_total',
      help: 'Replay-cache claims that failed because the cache was unavailable',
      labelNames: ['method'],
      registers,
    }),
    replayFailOpen: new Counter({
      name: 'kigo_replay_cache_fail_open_total',
      help: 'Nonce claims answered by the in-process fallback while the shared cache was unavailable',
      labelNames: ['method'],
      registers,
    }),
    throttleErrors: new Counter({
      name: 'kigo_throttle_errors_total',
      help: 'Failed-attempt counts that fell back to this process because the shared store was unavailable',
      registers,
    }),
  }
}
