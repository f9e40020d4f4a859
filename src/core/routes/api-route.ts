// Registration of the public API's routes from the shared route table (src/common/
// route-table.ts): each path answers its own method, and every other method gets 405 with
// `Allow` (RFC 9110 §15.5.6; docs/api.md), OPTIONS 204 with it.
import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import multipart from '@fastify/multipart'
import { allowOf, fastifyUrls, operations, type Operation } from '../../common/route-table.js'
import { errors } from '../../common/errors.js'
import { ApiError } from '../../common/errors.js'
import { parseBodyFormats, type BodyFormat } from '../render/body-formats.js'
import { contextOf, type AuthNeed, type RouteFlags } from './context.js'
import { readParams, type Params, type ReadOptions } from './params.js'
import { isValidCallback } from '../../common/formats.js'
import { parseId } from '../entries/ids.js'

type Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>

const methods = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'] as const

/** The operation of the route table named `name` (a typo is a start-up error, not a silent 404). */
export function operationNamed(name: string): Operation {
  const o = operations.find((op) => op.name === name)
  if (!o) throw new Error(`No operation ${name} in the route table`)
  return o
}

/**
 * The routes of the operations that take a body (POST), per app, registered in a scope of
 * their own where @fastify/multipart is. The plugin hooks every request of its scope twice
 * (an async onRequest that listens for the response's close, an async onResponse), both to
 * delete files saved to disk, which kigo never saves: on the core's reads, 6 to 22 µs of
 * CPU per request in bench/micro/core-overhead.ts (docs/performance.md#multipart-only-where-bodies-are-read). The app's own parser for multipart bodies,
 * which leaves them unread, serves everywhere else.
 */
const bodyRoutes = new WeakMap<FastifyInstance, RouteOptions[]>()

function routeTakingBody(app: FastifyInstance, route: RouteOptions): void {
  let routes = bodyRoutes.get(app)
  if (routes === undefined) bodyRoutes.set(app, (routes = []))
  routes.push(route)
}

/** Registers the routes that take a body in their scope: once, after every route module has run. */
export async function registerBodyRoutes(app: FastifyInstance): Promise<void> {
  const scoped = bodyRoutes.get(app) ?? []
  bodyRoutes.delete(app)
  await app.register(async (scope) => {
    scope.removeContentTypeParser('multipart/form-data')
    await scope.register(multipart, { defCharset: 'utf8' })
    for (const r of scoped) scope.route(r)
  })
}

/**
 * Registers the handler of the route table's operation `spec.operation` under every URL
 * the table gives it, and 405 for the other methods.
 */
export function apiRoute(app: FastifyInstance, spec: { operation: string; storesProfile?: boolean; takesFiles?: boolean; handler: Handler }): void {
  const operation = operationNamed(spec.operation)
  const allowed = allowOf(operation)
  const auth: AuthNeed = operation.anonymous ? 'optional' : 'required'
  for (const url of fastifyUrls(operation)) {
    const route: RouteOptions = {
      method: operation.method,
      url,
      config: { api: true, auth, operation, storesProfile: spec.storesProfile ?? false, takesFiles: spec.takesFiles ?? false } satisfies RouteFlags as FastifyContextConfig,
      handler: spec.handler,
    }
    if (operation.method === 'GET') app.route(route)
    else routeTakingBody(app, route)
    // A read answers POST as GET (docs/api-differences.md#post-reads): the same operation and
    // handler, its parameters from the body too (urlencoded or multipart).
    if (operation.readByPost) routeTakingBody(app, { ...route, method: 'POST' })
    app.route({
      method: methods.filter((m) => !allowed.includes(m)),
      url,
      // The method is wrong whoever asks: no authentication needed to learn that.
      config: { api: true, auth: 'optional' } satisfies RouteFlags as FastifyContextConfig,
      handler: async (request, reply) => {
        if (request.method === 'OPTIONS') return reply.code(204).header('allow', [...allowed, 'OPTIONS'].join(', ')).send()
        throw errors.methodNotAllowed(allowed)
      },
    })
  }
}

export const commonParams = ['callback', 'body_formats'] as const

export interface EntryRequest {
  params: Params
  bodyFormats: BodyFormat[]
}

/** Reads the parameters, then the two every operation takes: `callback` and `body_formats` (docs/api.md#callback-and-body_formats). */
export async function readEntryRequest(request: FastifyRequest, opts: ReadOptions): Promise<EntryRequest> {
  const ctx = contextOf(request)
  // Written out, not spread: this runs on every request.
  const names = opts.names.length === 0 ? commonParams : [...commonParams, ...opts.names]
  const params = await readParams(request, { names, maxFiles: opts.maxFiles, fileBytes: opts.fileBytes, ...(opts.imageMaxSide === undefined ? {} : { imageMaxSide: opts.imageMaxSide }) })
  // An empty callback is no callback.
  const callback = params.get('callback') || undefined
  ctx.callback = callback
  if (callback !== undefined && ctx.format === 'json' && !isValidCallback(callback)) {
    throw new ApiError(400, 'invalid_callback', 'callback must be a JavaScript identifier path of at most 128 characters')
  }
  return { params, bodyFormats: parseBodyFormats(params.get('body_formats')) }
}

/** The entry ID of `/…/{eid}.{format}`; an ID that cannot exist is 404 (docs/api.md#statusesshow-and-statusesdestroy). */
export function entryIdOf(request: FastifyRequest): string {
  const target = (request.params as { eid?: string }).eid ?? ''
  const id = parseId(target.replace(/\.(json|xml)$/, ''))
  if (id === null) throw errors.notFound('entry_not_found', 'No such entry')
  return id
}
