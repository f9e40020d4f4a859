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

async function deployments(app: FastifyInstance, { config }: DeploymentsOptions): Promise<void> {
  const hosts = hostsOf(config)
  const match = deploymentMatcher(hosts)
  const message = unknownDeploymentMessage(hosts)
  const mainHost = { domestic: config.domesticHost, global: config.globalHost }
  const known = new WeakSet<FastifyRequest>()

  const deploymentOf = (request: FastifyRequest): RequestDeployment | null => {
    if (known.has(request)) return request.deployment
    known.add(request)
    const origin = app.publicOrigin(request)
    const name = match(origin.host)
    request.deployment = name === null ? null : { name, host: mainHost[name], baseUrl: `${origin.scheme}://${mainHost[name]}` }
    return request.deployment
  }

  app.decorateRequest('deployment', null)
  app.decorate('deploymentOf', deploymentOf)
  app.decorate('requireDeployment', function requireDeployment(request: FastifyRequest, _reply: unknown, done: (err?: Error) => void) {
    if (deploymentOf(request) === null) return done(errors.badRequest('unknown_deployment', message))
    done()
  } as onRequestHookHandler)
}

export default fp(deployments, { name: 'kigo-deployments', fastify: '5.x', dependencies: ['kigo-origin'] })
