// Which deployment a request belongs to (docs/gateway.md#deployments, docs/api.md#statusesupdate rule 1): a
// deployment is its main host and its aliases. The Host must be exactly one of them,
// compared case-insensitively (RFC 9110 §4.2.3: the host is case-insensitive), with the
// scheme's default port treated as absent. Shared by the core (src/core/plugins/identity.ts)
// and the gateway (src/gateway/plugins/deployments.ts).
import type { Config } from './config.js'

export type Deployment = 'domestic' | 'global'

export interface Hosts {
  domesticHost: string
  globalHost: string
  publicScheme: 'http' | 'https'
  /** Further host names each deployment answers to (config domesticHostAliases, globalHostAliases). */
  domesticAliases?: string[]
  globalAliases?: string[]
}

function normalize(host: string, scheme: 'http' | 'https'): string {
  const h = host.trim().toLowerCase()
  const defaultPort = scheme === 'https' ? ':443' : ':80'
  return h.endsWith(defaultPort) ? h.slice(0, -defaultPort.length) : h
}

/**
 * The deployment a Host header names (docs/api.md#statusesupdate rule 1: exactly one of the configured
 * names or aliases, case-insensitively, the scheme's default port optional), or null.
 * The configured names are normalized once, when the matcher is made.
 */
export function deploymentMatcher(hosts: Hosts): (host: string | undefined) => Deployment | null {
  const known = new Map<string, Deployment>()
  // Domestic before global, names before aliases: the first name that matches decides.
  const names: Array<[string, Deployment]> = [
    [hosts.domesticHost, 'domestic'],
    [hosts.globalHost, 'global'],
    ...(hosts.domesticAliases ?? []).map((a): [string, Deployment] => [a, 'domestic']),
    ...(hosts.globalAliases ?? []).map((a): [string, Deployment] => [a, 'global']),
  ]
  for (const [name, deployment] of names) {
    const n = normalize(name, hosts.publicScheme)
    if (!known.has(n)) known.set(n, deployment)
  }
  return (host) => (host ? (known.get(normalize(host, hosts.publicScheme)) ?? null) : null)
}

/** The deployments' names as configured (config domesticHost, globalHost and their aliases). */
export function hostsOf(config: Pick<Config, 'domesticHost' | 'globalHost' | 'publicScheme' | 'domesticHostAliases' | 'globalHostAliases'>): Hosts {
  return {
    domesticHost: config.domesticHost,
    globalHost: config.globalHost,
    publicScheme: config.publicScheme,
    domesticAliases: config.domesticHostAliases ?? [],
    globalAliases: config.globalHostAliases ?? [],
  }
}

/** Every host name the deployments answer to, for the unknown_deployment message. */
export function expectedHosts(hosts: Hosts): string[] {
  return [hosts.domesticHost, ...(hosts.domesticAliases ?? []), hosts.globalHost, ...(hosts.globalAliases ?? [])]
}

/** `{scheme}://{domain}` of a deployment, spelled as configured. */
export function baseUrl(hosts: Hosts, deployment: Deployment): string {
  return `${hosts.publicScheme}://${deployment === 'domestic' ? hosts.domesticHost : hosts.globalHost}`
}

/** The message of 400 unknown_deployment: the names expected, and how to serve another. */
export function unknownDeploymentMessage(hosts: Hosts): string {
  return `The request host is not a deployment of this service; use one of ${expectedHosts(hosts).join(', ')} (to serve another host name, set KIGO_DOMESTIC_HOST and KIGO_GLOBAL_HOST, and KIGO_DOMESTIC_HOST_ALIASES or KIGO_GLOBAL_HOST_ALIASES for more names; see docs/operations.md)`
}
