// How the apps' Fastify instances log requests (core, public gateway, operator port): each
// app writes its own one line per request, so Fastify's are off, and request.log is made
// lazily. Fastify makes a pino child per request to carry the request ID, and pino runs
// every binding of a child through the redaction (the wildcard paths of logger.ts): in a
// CPU profile of the gateway under load that was about 2% of its busy time, for requests
// that at level warn write nothing. Here the child is made when the request first writes
// a line at an enabled level, and it is the same child pino would have made.
import { LogController, type FastifyBaseLogger, type FastifyServerOptions } from 'fastify'
import type { Bindings, ChildLoggerOptions } from 'pino'

export type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace'

interface LevelAware {
  isLevelEnabled?(level: string): boolean
}

class RequestLogger {
  #child: FastifyBaseLogger | undefined

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  #real(): FastifyBaseLogger {
    return (this.#child ??= this.parent.child(this.bindings, this.options))
  }

  #enabled(level: Level): boolean {
    const logger = (this.#child ?? this.parent) as FastifyBaseLogger & LevelAware
    return logger.isLevelEnabled ? logger.isLevelEnabled(level) : true
  }

  #write(level: Level, args: unknown[]): void {
    if (!this.#enabled(level)) return
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- needed: pino's LogFn overloads take no unknown[] spread (tsc TS2556 without it)
    ;(this.#real()[level] as (...a: unknown[]) => void)(...args)
  }

  get level(): string {
    return (this.#child ?? this.parent).level
  }

  set level(level: string) {
    this.#real().level = level
  }

  isLevelEnabled(level: Level): boolean {
    return this.#enabled(level)
  }

  fatal(...args: unknown[]): void {
    this.#write('fatal', args)
  }

  error(...args: unknown[]): void {
    this.#write('error', args)
  }

  warn(...args: unknown[]): void {
    this.#write('warn', args)
  }

  info(...args: unknown[]): void {
    this.#write('info', args)
  }

  debug(...args: unknown[]): void {
    this.#write('debug', args)
  }

  trace(...args: unknown[]): void {
    this.#write('trace', args)
  }

  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#real().child(bindings, options)
  }
}

/**
 * The request's logger, made lazily. A route with its own log level (a child option)
 * gets its pino child at once: its level differs from the parent's.
 */
export function requestLoggerFactory(): NonNullable<FastifyServerOptions['childLoggerFactory']> {
  return (logger, bindings, options) => {
    if (options.level !== undefined) return logger.child(bindings, options)
    // Every method Fastify and the routes call is here (fatal … trace, silent, child, level).
    return new RequestLogger(logger, bindings, options)
  }
}

/** The Fastify options every app of kigo logs requests with. */
export function requestLogging(): Pick<FastifyServerOptions, 'logController' | 'childLoggerFactory'> {
  return { logController: new LogController({ disableRequestLogging: true }), childLoggerFactory: requestLoggerFactory() }
}
