// docker-compose.yml, the Dockerfile and config/prometheus.yml cannot be run here (no
// container engine), so they are checked against what they configure: every variable is
// one kigo reads and docs/operations.md documents, the compose environment passes the config
// schema, ports and health checks match the configured ports, commands name real modes,
// Prometheus scrapes every kigo service, and every service restarts.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { envNames, loadConfig, projectRoot } from '../../src/common/config.js'
import { tracingSettings, tracingVariables } from '../../src/common/tracing.js'

const read = (...path: string[]) => readFileSync(join(projectRoot, ...path), 'utf8')

interface Service {
  image?: string
  build?: string
  command?: string[]
  environment?: Record<string, string | number>
  ports?: string[]
  restart?: string
  profiles?: string[]
  healthcheck?: { test: string[] }
  volumes?: string[]
}

const compose = parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, Service> }
const services = compose.services
const kigoServices = Object.entries(services).filter(([, s]) => s.build === '.')
const readme = read('README.md')
/** The operator's reference: every variable and port a deployment sets. */
const operations = read('docs', 'operations.md')
const dockerfile = read('Dockerfile')

/** The environment a kigo container gets, with compose's ${VAR:?…} filled in. */
function containerEnv(s: Service): Record<string, string> {
  const secrets: Record<string, string> = { KIGO_SECRET_KEY: Buffer.alloc(32, 7).toString('base64'), KIGO_ADMIN_TOKEN: 'x'.repeat(48) }
  return Object.fromEntries(Object.entries(s.environment ?? {}).map(([k, v]) => [k, String(v).replace(/\$\{([A-Z_]+)[^}]*\}/g, (_, name: string) => secrets[name] ?? '')]))
}

/** `"127.0.0.1:9090:9090"` → { host: 9090, container: 9090 }. */
function portMapping(spec: string) {
  const parts = spec.split(':')
  return { host: Number(parts.at(-2)), container: Number(parts.at(-1)), bind: parts.length === 3 ? parts[0] : '0.0.0.0' }
}

describe('docker-compose.yml', () => {
  it('runs a core and two gateways built from the Dockerfile, with real modes', () => {
    const modes = kigoServices.map(([, s]) => s.command?.[0]).sort()
    expect(modes).toEqual(['core', 'gateway', 'gateway'])
    const main = read('src', 'main.ts')
    for (const mode of modes) expect(main).toContain(`'${mode}'`)
    expect(dockerfile).toMatch(/^ENTRYPOINT \[.*"dist\/src\/main\.js"\]$/m)
  })

  it('sets only variables kigo reads, each documented in docs/operations.md', () => {
    const known = new Set<string>([...Object.values(envNames), 'KIGO_CONFIG', 'KIGO_ADMIN_URL', ...tracingVariables])
    for (const [name, s] of kigoServices) {
      for (const variable of Object.keys(s.environment ?? {})) {
        expect(known.has(variable), `${name}: ${variable}`).toBe(true)
        expect(operations, variable).toContain(`\`${variable}\``)
      }
    }
  })

  it('gives each kigo container an environment that passes the config schema, with ports that match', () => {
    for (const [name, s] of kigoServices) {
      const config = loadConfig({ env: containerEnv(s) })
      const published = (s.ports ?? []).map(portMapping)
      const health = (s.healthcheck?.test ?? []).join(' ')
      if (s.command?.[0] === 'gateway') {
        expect(published.map((p) => p.container).sort(), name).toEqual([config.gateway.port, config.gateway.adminPort].sort())
        expect(health, name).toContain(`127.0.0.1:${config.gateway.port}/readyz`)
        // The public port as clients reach it is one of the deployments' host names.
        const publicPort = published.find((p) => p.container === config.gateway.port)!.host
        const hosts = [config.domesticHost, config.globalHost, ...config.domesticHostAliases, ...config.globalHostAliases]
        expect(hosts, name).toContain(`localhost:${publicPort}`)
        expect(hosts, name).toContain(`127.0.0.1:${publicPort}`)
        // The operator port is published on loopback only.
        expect(published.find((p) => p.container === config.gateway.adminPort)!.bind, name).toBe('127.0.0.1')
        expect(new URL(config.gateway.coreUrl).port).toBe(String(loadConfig({ env: containerEnv(services.core!) }).core.port))
      } else {
        expect(health, name).toContain(`127.0.0.1:${config.core.port}/readyz`)
        expect(config.core.host).toBe('0.0.0.0')
        expect(config.core.metricsHost).toBe('0.0.0.0')
      }
      for (const port of [config.gateway.port, config.gateway.adminPort, config.core.port, config.core.metricsPort]) {
        expect(dockerfile).toMatch(new RegExp(`^EXPOSE .*\\b${port}\\b`, 'm'))
      }
    }
  })

  it('publishes distinct host ports, named in docs/operations.md', () => {
    const hostPorts = Object.values(services).flatMap((s) => (s.ports ?? []).map((p) => portMapping(p).host))
    expect(new Set(hostPorts).size).toBe(hostPorts.length)
    for (const port of hostPorts) expect(operations, String(port)).toMatch(new RegExp(`\\b${port}\\b`))
  })

  it('restarts every service', () => {
    for (const [name, s] of Object.entries(services)) expect(s.restart, name).toMatch(/^(always|unless-stopped|on-failure)/)
  })

  it('has a monitoring profile: Prometheus scraping every kigo service with the alert rules, Grafana provisioned', () => {
    const prometheus = services.prometheus!
    const grafana = services.grafana!
    expect(prometheus.profiles).toEqual(['monitoring'])
    expect(grafana.profiles).toEqual(['monitoring'])
    expect(prometheus.volumes).toContain('./config/prometheus.yml:/etc/prometheus/prometheus.yml:ro')
    expect(prometheus.volumes).toContain('./config/alerts.yml:/etc/prometheus/alerts.yml:ro')
    expect(grafana.volumes).toContain('./config/grafana/provisioning:/etc/grafana/provisioning:ro')
    expect(grafana.volumes).toContain('./config/grafana-dashboard.json:/var/lib/grafana/dashboards/kigo.json:ro')
    const provider = parse(read('config', 'grafana', 'provisioning', 'dashboards', 'kigo.yml')) as { providers: Array<{ options: { path: string } }> }
    expect(provider.providers[0]!.options.path).toBe('/var/lib/grafana/dashboards')
    const datasource = parse(read('config', 'grafana', 'provisioning', 'datasources', 'prometheus.yml')) as { datasources: Array<{ url: string; type: string }> }
    expect(datasource.datasources[0]).toMatchObject({ type: 'prometheus', url: 'http://prometheus:9090' })

    const scrape = parse(read('config', 'prometheus.yml')) as { rule_files: string[]; scrape_configs: Array<{ job_name: string; static_configs: Array<{ targets: string[] }> }> }
    expect(scrape.rule_files).toEqual(['alerts.yml'])
    const targets = Object.fromEntries(scrape.scrape_configs.map((j) => [j.job_name, j.static_configs.flatMap((c) => c.targets).sort()]))
    const expected: Record<string, string[]> = { 'kigo-gateway': [], 'kigo-core': [] }
    for (const [name, s] of kigoServices) {
      const config = loadConfig({ env: containerEnv(s) })
      if (s.command?.[0] === 'gateway') expected['kigo-gateway']!.push(`${name}:${config.gateway.adminPort}`)
      else expected['kigo-core']!.push(`${name}:${config.core.metricsPort}`)
    }
    expect(targets).toEqual({ 'kigo-gateway': expected['kigo-gateway']!.sort(), 'kigo-core': expected['kigo-core']!.sort() })
  })

  it('has a trace backend in the monitoring profile: every kigo service exports to it when OTEL_TRACES_EXPORTER=otlp is set, none otherwise; Grafana reads it', () => {
    const jaeger = services.jaeger!
    expect(jaeger.profiles).toEqual(['monitoring'])
    expect(String(jaeger.environment?.COLLECTOR_OTLP_ENABLED)).toBe('true')
    // ${NAME:-default} as compose fills it in, from `given`.
    const expand = (s: Service, given: Record<string, string>) =>
      Object.fromEntries(Object.entries(containerEnv({ ...s, environment: Object.fromEntries(Object.entries(s.environment ?? {}).map(([k, v]) => [k, String(v).replace(/\$\{([A-Z_]+):-([^}]*)\}/g, (_, name: string, fallback: string) => given[name] ?? fallback)])) })))
    for (const [name, s] of kigoServices) {
      expect(tracingSettings(expand(s, {})), name).toBeNull()
      const on = expand(s, { OTEL_TRACES_EXPORTER: 'otlp' })
      expect(tracingSettings(on), name).toEqual({ protocol: 'http/protobuf', serviceName: '', continueCaller: false })
      // Jaeger's OTLP/HTTP port on the compose network.
      expect(new URL(on.OTEL_EXPORTER_OTLP_ENDPOINT!).host, name).toBe('jaeger:4318')
    }
    const datasource = parse(read('config', 'grafana', 'provisioning', 'datasources', 'jaeger.yml')) as { datasources: Array<{ url: string; type: string }> }
    expect(datasource.datasources[0]).toMatchObject({ type: 'jaeger', url: 'http://jaeger:16686' })
    expect(jaeger.ports).toContain('127.0.0.1:16686:16686')
  })

  it('links a latency chart\'s exemplars to their traces: Prometheus keeps exemplars, Grafana opens their trace_id in Jaeger, every p99 panel asks for them', () => {
    expect(services.prometheus!.command).toContain('--enable-feature=exemplar-storage')
    const sources = parse(read('config', 'grafana', 'provisioning', 'datasources', 'prometheus.yml')) as { datasources: Array<{ jsonData?: { exemplarTraceIdDestinations?: Array<{ name: string; datasourceUid: string }> } }> }
    const jaegerUid = (parse(read('config', 'grafana', 'provisioning', 'datasources', 'jaeger.yml')) as { datasources: Array<{ uid: string }> }).datasources[0]!.uid
    expect(sources.datasources[0]!.jsonData?.exemplarTraceIdDestinations).toEqual([{ name: 'trace_id', datasourceUid: jaegerUid }])
    const dashboard = JSON.parse(read('config', 'grafana-dashboard.json')) as { panels: Array<{ targets?: Array<{ expr?: string; exemplar?: boolean }> }> }
    const p99 = dashboard.panels.flatMap((p) => p.targets ?? []).filter((t) => t.expr?.startsWith('histogram_quantile(0.99,'))
    expect(p99.length).toBe(3)
    for (const t of p99) expect(t.exemplar, t.expr).toBe(true)
  })
})

describe('Dockerfile and supported Node.js versions', () => {
  it('builds on Node 24, which the README names as supported beside Node 20', () => {
    const froms = [...dockerfile.matchAll(/^FROM node:(\d+)-/gm)].map((m) => m[1])
    expect(froms).toEqual(['24', '24'])
    expect(readme).toMatch(/Node\.js 20 and 24/)
  })
})
