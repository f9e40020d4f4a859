// Labelled children of Prometheus metrics (prom-client), shared by the gateway's metrics
// and the core's.

/**
 * The labelled child of a metric for one combination of label values, made once: every
 * request records observations, and looking a child up by its label object costs more
 * than the observation itself. Label values are bounded, so the map is too.
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
