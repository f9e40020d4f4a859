// What the core knows about a request once its hooks have run, and how a payload or an
// error goes out in the request's format (docs/api.md#callback-and-body_formats, docs/api.md#errors).
import type { FastifyReply, FastifyRequest } from 'fastify'
import { ApiError, errors } from '../../common/errors.js'
import { writeApiError } from '../../common/api-errors.js'
import { formatOfPath, render, type Format, type XmlObject } from '../../common/formats.js'
import type { Identity, IdentityCheck } from '../../common/identity.js'
import type { Deployment } from '../store/types.js'
import type { Operation } from '../../common/route-table.js'
import type { UploadGuard } from './upload-guard.js'

export interface RequestContext {
  format: Format
  /** JSONP callback once known; only a valid name is ever used. */
  callback: string | undefined
  identity: Identity | null
  /** Set for /api/ paths, whose host must name a deployment. */
  deployment: Deployment | null
  /** The operation a verified signature names ('' for none); unset for an unsigned request. */
  signedOperation?: string
  /** The body digest the gateway signed, when it read the body whole. */
  bodySha256?: string
  /** For a multipart body under a signed digest: whether the body read was the one signed. */
  bodyCheck?: Promise<boolean>
  /**
   * The operation the request runs: the routed one, or its `/{id}` form when the parameters
   * name an `id` (docs/api-differences.md#id-parameter). Unset before admission.
   */
  operation?: Operation | undefined
  /** A verified signature whose admission waits for the parsed body (app.ts). */
  pendingIdentity?: IdentityCheck & { ok: true }
  /** For a multipart upload: rejects with the answer when it is stopped (upload-guard.ts). */
  upload?: UploadGuard
  /** The routed route's config (its flags and pattern), read once by the onRequest hook. */
  route?: RouteConfig
}

export type AuthNeed = 'required' | 'optional'

/** Route config read by the app's hooks (set by api-route.ts). */
export interface RouteFlags {
  api: true
  auth: AuthNeed
  /** The operation of the shared route table this route runs (absent on the 405 routes). */
  operation?: Operation
  /** The handler records the requester's display name itself (no separate refresh). */
  storesProfile?: boolean
  /** The operation takes files (multipart uploads): its bodies count against the upload budget. */
  takesFiles?: boolean
}

/** What the app's hooks read of a route's config: api-route.ts's flags and Fastify's pattern. */
export type RouteConfig = Partial<RouteFlags> & { url?: string }

declare module 'fastify' {
  interface FastifyRequest {
    /** The core's view of the request, made on first use (contextOf); declared null by the app. */
    coreContext: RequestContext | null
  }
}

export function contextOf(request: FastifyRequest): RequestContext {
  return (request.coreContext ??= { format: formatOfPath(request.raw.url ?? '/') ?? 'json', callback: undefined, identity: null, deployment: null })
}

/** The route's config, as the onRequest hook read it (read here when that hook did not run). */
export function routeOf(request: FastifyRequest): RouteConfig {
  const ctx = contextOf(request)
  return (ctx.route ??= request.routeOptions.config ?? {})
}

/** The requester of a route that needs one; 401 otherwise (the gateway sends the challenges). */
export function requester(request: FastifyRequest): Identity {
  const id = contextOf(request).identity
  if (!id) throw errors.unauthorized('authentication_required', 'This operation requires authentication')
  return id
}

export function deploymentOf(request: FastifyRequest): Deployment {
  return contextOf(request).deployment ?? 'domestic'
}

export function sendPayload(request: FastifyRequest, reply: FastifyReply, root: string, json: unknown, xml: XmlObject): FastifyReply {
  const ctx = contextOf(request)
  const out = render(ctx.format, root, json, xml, ctx.callback)
  // The status is already 200 unless something set another (Reply.code validates it anew).
  if (reply.statusCode !== 200) reply.code(200)
  return reply.headers(out.headers).type(out.contentType).send(out.body)
}

/** Sends an ApiError in the format the request's context holds (docs/api.md#errors). */
export function sendError(request: FastifyRequest, reply: FastifyReply, err: ApiError): FastifyReply {
  const ctx = contextOf(request)
  // Errors of paths outside /api/ are JSON; an /api/ error keeps the path's format.
  return writeApiError(reply, err, request.raw.url?.startsWith('/api/') ? ctx.format : 'json', ctx.callback)
}
