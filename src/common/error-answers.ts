// Where every error answer of an app is shaped (docs/operations.md#error-answers): one plugin
// per app installs its not-found handler and its one error handler. Whatever a route throws
// is read by the one classifier (errors.ts: the client's 4xx, a dependency's 503, kigo's own
// 500) in the area's words, then written by the area's renderer: JSON or XML by the
// request's format, the operator API's JSON, an HTML page. An area of an app that answers
// in another shape (the account pages beside the API, the dashboard beside the operator
// API) declares its own wording and renderer for its scope with `answerErrorsAs`; nothing
// else sets an error handler.
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ApiError, classifyFailure, failureResponse, errors, type FailureWording } from './errors.js'

/**
 * Writes an answer. `thrown` is what the route threw (undefined for a request no route
 * has), for a renderer with a page of its own for one kind of failure.
 */
export type ErrorRenderer = (request: FastifyRequest, reply: FastifyReply, answer: ApiError, thrown: unknown) => FastifyReply

/** How one area of an app answers failures. */
export interface ErrorArea {
  /** What each failure class is called here (its 503 and 500, its reading of a framework 4xx). */
  wording: FailureWording
  render: ErrorRenderer
  /** The area's own errors (a store's NotFound, a library's refusal) as catalogue answers; undefined: classify. */
  known?: (thrown: unknown) => ApiError | undefined
  /** The message of the log line of a 500 (default "request failed"). */
  logMessage?: string
  /**
   * Logs a failure instead of the default (a 500's error with its stack; an outage at
   * debug only, since it is logged once where it starts and ends, dependency-watch.ts).
   * For an app whose failures may be the client's going away (core/app.ts).
   */
  log?: (request: FastifyRequest, reply: FastifyReply, thrown: unknown, answer: ApiError) => void
}

export interface ErrorAnswersOptions extends ErrorArea {
  /** The answer to a request no route has (default: 404 `not_found`, rendered by `render`). */
  notFound?: (request: FastifyRequest, reply: FastifyReply) => FastifyReply | Promise<FastifyReply>
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The error area of the scope the route was declared in (answerErrorsAs). */
    errorArea?: ErrorArea
  }
  interface FastifyInstance {
    /**
     * Every route declared in this scope (and the scopes inside it) after this call
     * answers its failures as `area` says, instead of as the app does.
     */
    answerErrorsAs(area: ErrorArea): void
  }
}

/** The answer to anything thrown in `area`, by the one classifier and the area's wording. */
export function answerFor(area: ErrorArea, thrown: unknown): ApiError {
  return area.known?.(thrown) ?? failureResponse(thrown, area.wording)
}

function defaultLog(request: FastifyRequest, thrown: unknown, answer: ApiError, message: string): void {
  if (answer.status < 500 || thrown instanceof ApiError) return
  const err = thrown as Error
  if (classifyFailure(thrown).kind === 'unavailable') request.log.debug({ err: { message: err?.message, name: err?.name } }, 'dependency unavailable')
  else request.log.error({ err: thrown }, message)
}

async function errorAnswers(app: FastifyInstance, options: ErrorAnswersOptions): Promise<void> {
  app.decorate('answerErrorsAs', function (this: FastifyInstance, area: ErrorArea) {
    this.addHook('onRoute', (route) => {
      route.config = { ...route.config, errorArea: area }
    })
  })
  const notFound = options.notFound ?? ((request: FastifyRequest, reply: FastifyReply) => options.render(request, reply, errors.notFound(), undefined))
  // A method no route has (TRACE, PROPFIND…) too: the app's 404, never Fastify's default body.
  app.setNotFoundHandler(notFound)
  app.setErrorHandler((thrown: unknown, request, reply) => {
    const area = request.routeOptions.config?.errorArea ?? options
    const answer = answerFor(area, thrown)
    if (area.log) area.log(request, reply, thrown, answer)
    else defaultLog(request, thrown, answer, area.logMessage ?? 'request failed')
    return area.render(request, reply, answer, thrown)
  })
}

/** The app's error answers: register once per app, at its root. */
export default fp(errorAnswers, { name: 'kigo-error-answers', fastify: '5.x' })
