// Registration of the public API's routes: each path answers its own method, and every
// other method gets 405 with `Allow` (RFC 9110 §15.5.6; SPEC §2), OPTIONS 204 with it.
import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { errors } from '../../common/errors.js'
import { ApiError } from '../../common/errors.js'
import { parseBodyFormats, type BodyFormat } from '../render/body-formats.js'
import { contextOf } from './context.js'
import { readParams, type Params, type ReadOptions } from './params.js'
import { isValidCallback } from '../../common/formats.js'
import { parseId } from '../entries/ids.js'

export type AuthNeed = 'required' | 'optional'

/** Route config read by the app's hooks. */
export interface RouteFlags {
  api: true
  auth: AuthNeed
  /** The handler records the requester's display name itself (no separate refresh). */
  storesProfile?: boolean
}

export function routeFlags(request: FastifyRequest): Partial<RouteFlags> {
  return (request.routeOptions.config ?? {}) as Partial<RouteFlags>
}

type Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>

const methods = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'] as const

/** A fixed API path with its `.json` and `.xml` forms (no extension means JSON). */
export function withExtensions(path: string): string[] {
  return [path, `${path}.json`, `${path}.xml`]
}

export function apiRoute(
  app: FastifyInstance,
  spec: { method: 'GET' | 'POST'; urls: string[]; auth: AuthNeed; storesProfile?: boolean; handler: Handler },
): void {
  const allowed = spec.method === 'GET' ? ['GET', 'HEAD'] : ['POST']
  for (const url of spec.urls) {
    app.route({
      method: spec.method,
      url,
      config: { api: true, auth: spec.auth, storesProfile: spec.storesProfile ?? false } satisfies RouteFlags as FastifyContextConfig,
      handler: spec.handler,
    })
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

/** Reads the parameters, then the two every operation takes: `callback` and `body_formats` (SPEC §2.5). */
export async function readEntryRequest(request: FastifyRequest, opts: ReadOptions): Promise<EntryRequest> {
  const ctx = contextOf(request)
  const params = await readParams(request, { ...opts, names: [...commonParams, ...opts.names] })
  // An empty callback is no callback.
  const callback = params.get('callback') || undefined
  ctx.callback = callback
  if (callback !== undefined && ctx.format === 'json' && !isValidCallback(callback)) {
    throw new ApiError(400, 'invalid_callback', 'callback must be a JavaScript identifier path of at most 128 characters')
  }
  return { params, bodyFormats: parseBodyFormats(params.get('body_formats')) }
}

/** The entry ID of `/…/{eid}.{format}`; an ID that cannot exist is 404 (SPEC §2.3). */
export function entryIdOf(request: FastifyRequest): string {
  const target = (request.params as { target?: string }).target ?? ''
  const id = parseId(target.replace(/\.(json|xml)$/, ''))
  if (id === null) throw errors.notFound('entry_not_found', 'No such entry')
  return id
}
