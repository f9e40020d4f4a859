// Prometheus metrics of docs/gateway.md#metrics. One registry per gateway instance (tests build several
// in one process). Labels are bounded: auth method, a closed outcome set, route names.
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client'
import { LabelledCounter, LabelledHistogram } from '../../common/labelled-metrics.js'

export interface GatewayMetrics {
  registry: Registry
  /** Per request (labelled-metrics.ts): its series are counted without prom-client's label hashing. */
  authRequests: LabelledCounter<'method' | 'outcome' | 'route'>
  authDuration: LabelledHistogram<'method'>
  upstreamDuration: LabelledHistogram<'route' | 'status_class'>
  replayErrors: Counter<'method'>
  replayFailOpen: Counter<'method'>
  throttleErrors: Counter
  /** Attempts refused before verifying, by realm (api, web) and rule (pair, address, user, locked). */
  throttleRefusals: Counter<'realm' | 'rule'>
  /** The outbox's sends by kind of mail and outcome (docs/operations.md#mail). */
  mailSends: Counter<'kind' | 'outcome'>
  mailBudgetRefusals: Counter<'kind'>
}

export function createMetrics(options: { processMetrics?: boolean } = {}): GatewayMetrics {
  const registry = new Registry()
  if (options.processMetrics ?? true) collectDefaultMetrics({ register: registry })
  const registers = [registry]
  const metrics: GatewayMetrics = {
    registry,
    authRequests: new LabelledCounter({
      name: 'kigo_auth_requests_total',
      help: 'Requests seen by the gateway, by credential method, outcome and route',
      labelNames: ['method', 'outcome', 'route'],
      registers,
    }),
    authDuration: new LabelledHistogram({
      name: 'kigo_auth_duration_seconds',
      help: 'Time spent in the authentication stage alone',
      labelNames: ['method'],
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1],
      registers,
    }),
    upstreamDuration: new LabelledHistogram({
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
    throttleRefusals: new Counter({
      name: 'kigo_throttle_refusals_total',
      help: 'Password attempts refused before verifying, by realm and by the rule that refused them (user: the user is refused from every unknown address; locked: an operator lock)',
      labelNames: ['realm', 'rule'],
      registers,
    }),
    mailSends: new Counter({
      name: 'kigo_mail_total',
      help: 'Outbox sends by kind of mail and outcome (sent, failed attempt, expired unsent, unconfirmed claim taken over)',
      labelNames: ['kind', 'outcome'],
      registers,
    }),
    mailBudgetRefusals: new Counter({
      name: 'kigo_mail_budget_refusals_total',
      help: 'Mails not sent because their budget was spent (password_reset: one per user per 15 minutes; email_verify: 5 a day per user and per address)',
      labelNames: ['kind'],
      registers,
    }),
  }
  // Counters that can be zero are exported at zero from start-up: rate() and increase()
  // need a sample before the first event, or the first failure goes unseen by alerts.
  for (const method of ['wsse', 'oauth']) {
    metrics.replayErrors.inc({ method }, 0)
    metrics.replayFailOpen.inc({ method }, 0)
  }
  for (const kind of ['password_reset', 'email_verify', 'email_changed']) {
    for (const outcome of ['sent', 'failed']) metrics.mailSends.inc({ kind, outcome }, 0)
  }
  for (const kind of ['password_reset', 'email_verify']) metrics.mailBudgetRefusals.inc({ kind }, 0)
  return metrics
}

/**
 * The migration policy as gauges, read when Prometheus scrapes: the state in effect per
 * legacy method (1 for the current state, 0 for the others) and the announced sunset
 * (seconds since the epoch, 0 for none). The alert rules (config/alerts.yml) use them to
 * fire only after a sunset has passed.
 */
export function watchPolicy(metrics: GatewayMetrics, read: () => Array<{ method: string; state: string; sunset: string | null }>): void {
  const registers = [metrics.registry]
  const states = ['allow', 'deprecate', 'brownout', 'deny']
  new Gauge({
    name: 'kigo_policy_state',
    help: 'Migration policy state in effect per legacy method (1 for the current state)',
    labelNames: ['method', 'state'],
    registers,
    collect() {
      for (const p of read()) for (const state of states) this.set({ method: p.method, state }, p.state === state ? 1 : 0)
    },
  })
  new Gauge({
    name: 'kigo_policy_sunset_timestamp_seconds',
    help: 'Announced sunset of each legacy method, seconds since the epoch (0 for none)',
    labelNames: ['method'],
    registers,
    collect() {
      for (const p of read()) this.set({ method: p.method }, p.sunset === null ? 0 : Date.parse(p.sunset) / 1000)
    },
  })
}
