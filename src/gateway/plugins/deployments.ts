// Which deployment a request is for (docs/gateway.md#deployments: a deployment is its main host and its aliases),
// for every area of the public app that answers by itself: the account pages, the OAuth
// provider, the login API, OpenID Connect and the guide pages (the API is the core's, which
// decides the same way with the same module, src/common/deployment.ts). The public host is
// the one the origin plugin decided (trusted proxies only). Links name the deployment's
// main host, never the alias the request came by.
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify'
import type { Config } from '../../common/config.js'
import { deploymentMatcher, hostsOf, unknownDeploymentMessage, type Deployment } from '../../common/deployment.js'
import { errors } from '../../common/errors.js'

/** A request's deployment: its name, its main host, and its base URL for links. */
export interface RequestDeployment {
  name: Deployment
  /** The main host (config domesticHost or globalHost), as configured. */
  host: string
  /** `{scheme}://{main host}`, the scheme as the request reached the gateway. */
  baseUrl: string
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's deployment once read (deploymentOf below); null before, or for an unknown host. */
    deployment: RequestDeployment | null
    /** Whether `deployment` was read for this request. */
    deploymentRead: boolean
  }
  interface FastifyInstance {
    /** The deployment the request's public host names, or null for a host of no deployment. */
    deploymentOf(request: FastifyRequest): RequestDeployment | null
    /**
     * An onRequest hook for an area's own context: a request to a host of no deployment
     * is refused with 400 unknown_deployment, answered by that area's error renderer.
     */
    requireDeployment: onRequestHookHandler
  }
}

export interface DeploymentsOptions {
  config: Pick<Config, 'domesticHost' | 'globalHost' | 'publicScheme' | 'domesticHostAliases' | 'globalHostAliases'>
}

/** Host headers remembered with their deployment: the few a deployment answers to, and no more than this. */
const rememberedHosts = 64

async function deployments(app: FastifyInstance, { config }: DeploymentsOptions): Promise<void> {
  const hosts = hostsOf(config)
  const match = deploymentMatcher(hosts)
  const message = unknownDeploymentMessage(hosts)
  // Every answer there can be, made once (a deployment by the scheme the request came by):
  // the answer costs no allocation per request. They are frozen, being shared.
  const answer = (name: Deployment, scheme: 'http' | 'https'): RequestDeployment => {
    const host = name === 'domestic' ? config.domesticHost : config.globalHost
    return Object.freeze({ name, host, baseUrl: `${scheme}://${host}` })
  }
  const answers = {
    http: { domestic: answer('domestic', 'http'), global: answer('global', 'http') },
    https: { domestic: answer('domestic', 'https'), global: answer('global', 'https') },
  }
  // The Host headers seen, as sent, with their deployment (or none): a host is normalized
  // and matched once, not on every request. Bounded: hosts of no deployment sent at random
  // are matched every time once it is full, and never fill memory.
  const seen = new Map<string, Deployment | null>()

  const deploymentOf = (request: FastifyRequest): RequestDeployment | null => {
    if (request.deploymentRead) return request.deployment
    request.deploymentRead = true
    const origin = app.publicOrigin(request)
    let name = seen.get(origin.host)
    if (name === undefined) {
      name = match(origin.host)
      if (seen.size < rememberedHosts) seen.set(origin.host, name)
    }
    request.deployment = name === null ? null : answers[origin.scheme][name]
    return request.deployment
  }

  app.decorateRequest('deployment', null)
  app.decorateRequest('deploymentRead', false)
  app.decorate('deploymentOf', deploymentOf)
  app.decorate('requireDeployment', function requireDeployment(request: FastifyRequest, _reply: unknown, done: (err?: Error) => void) {
    if (deploymentOf(request) === null) return done(errors.badRequest('unknown_deployment', message))
    done()
  } as onRequestHookHandler)
}

export default fp(deployments, { name: 'kigo-deployments', fastify: '5.x', dependencies: ['kigo-origin'] })
