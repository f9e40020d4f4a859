// A small client of the gateway's operator API (docs/gateway.md#the-operator-api-and-dashboard) for the kigo command: where
// it is, which bearer token to send, and every failure turned into one line.
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'

export type Env = Record<string, string | undefined>

export const defaultAdminUrl = 'http://127.0.0.1:9090'
export const requestTimeoutMs = 30_000

/** A failure to report as `kigo: <message>`, with the process exit code. */
export class CliError extends Error {
  override name = 'CliError'
  constructor(
    message: string,
    readonly exitCode: number,
    /** The operator API's error object, when it answered with one (printed as is under --json). */
    readonly apiError?: { status: number; code: string; message: string },
  ) {
    super(message)
  }
}

export const usageError = (message: string) => new CliError(message, 2)
export const runError = (message: string) => new CliError(message, 1)

/**
 * KIGO_ADMIN_URL (docs/operations.md#operator-command-line), checked to be an http(s) URL; unset, the operator port the
 * gateway itself listens on (KIGO_ADMIN_PORT, default 9090) on 127.0.0.1.
 */
export function adminUrl(env: Env): URL {
  const port = env.KIGO_ADMIN_PORT?.trim()
  if (!env.KIGO_ADMIN_URL && port) {
    if (!/^[0-9]{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) throw runError(`KIGO_ADMIN_PORT must be a port number (1-65535), got ${JSON.stringify(port)}`)
    return new URL(`http://127.0.0.1:${Number(port)}`)
  }
  const raw = env.KIGO_ADMIN_URL || defaultAdminUrl
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw runError(`KIGO_ADMIN_URL is not a URL: ${JSON.stringify(raw)}`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw runError(`KIGO_ADMIN_URL must be an http or https URL, got ${JSON.stringify(raw)}`)
  return url
}

/** KIGO_ADMIN_TOKEN, else the `admin-token` file the gateway generated in KIGO_DATA_DIR (docs/operations.md#configuration). */
export function adminToken(env: Env): string {
  const token = readAdminToken(env)
  // Only visible ASCII can travel in an Authorization header (RFC 9110 §5.5).
  if (!/^[\x21-\x7e]+$/.test(token)) throw runError('the admin token contains characters that cannot be sent in an HTTP header')
  return token
}

function readAdminToken(env: Env): string {
  const fromEnv = env.KIGO_ADMIN_TOKEN?.trim()
  if (fromEnv) return fromEnv
  const path = resolve(env.KIGO_DATA_DIR || './data', 'admin-token')
  let text: string
  try {
    text = readFileSync(path, 'utf8').trim()
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    const why = code === 'ENOENT' ? `${path} does not exist` : code === 'EACCES' ? `${path} is not readable` : `cannot read ${path} (${code ?? 'error'})`
    throw runError(`no admin token: set KIGO_ADMIN_TOKEN, or KIGO_DATA_DIR to the gateway's data directory (${why})`)
  }
  if (text === '') throw runError(`no admin token: ${path} is empty`)
  return text
}

export interface ApiResult {
  /** The response body exactly as received. */
  text: string
  json: unknown
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim()
}

export class AdminClient {
  constructor(
    private readonly base: URL,
    private readonly token: string,
    private readonly timeoutMs = requestTimeoutMs,
  ) {}

  private urlFor(path: string): string {
    return this.base.href.replace(/\/+$/, '') + path
  }

  /**
   * Sends one request; resolves with the 2xx body, throws CliError otherwise. `raw`: a 2xx
   * body that is not JSON (CSV) is fine. `extra`: more request headers (If-Match).
   */
  async request(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown, raw = false, extra: Record<string, string> = {}): Promise<ApiResult> {
    const url = this.urlFor(path)
    const headers: Record<string, string> = { ...extra, authorization: `Bearer ${this.token}`, accept: raw ? '*/*' : 'application/json' }
    if (body !== undefined) headers['content-type'] = 'application/json'
    let response: Response
    let text: string
    try {
      response = await fetch(url, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        redirect: 'manual',
        signal: AbortSignal.timeout(this.timeoutMs),
      })
      text = await response.text()
    } catch (err) {
      throw this.unreachable(err)
    }
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      json = undefined
    }
    if (response.ok && (json !== undefined || raw)) return { text, json }
    const error = (json as { error?: { status?: unknown; code?: unknown; message?: unknown } } | undefined)?.error
    if (error && typeof error.message === 'string') {
      const hint = response.status === 401 ? '; check KIGO_ADMIN_TOKEN or the admin-token file in KIGO_DATA_DIR' : ''
      const code = typeof error.code === 'string' ? error.code : 'error'
      throw new CliError(`${oneLine(error.message)} (HTTP ${response.status}${typeof error.code === 'string' ? ` ${error.code}` : ''})${hint}`, 1, {
        status: response.status,
        code,
        message: error.message,
      })
    }
    throw runError(`unexpected answer from the operator API at ${url}: HTTP ${response.status}${response.ok ? ' without a JSON body' : ''}`)
  }

  private unreachable(err: unknown): CliError {
    const where = this.base.origin
    if ((err as Error).name === 'TimeoutError' || (err as Error).name === 'AbortError') {
      return runError(`the operator API at ${where} did not answer within ${Math.round(this.timeoutMs / 1000)} s`)
    }
    const cause = (err as { cause?: { code?: unknown; message?: unknown } }).cause
    const reason = typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : (err as Error).message
    return runError(`cannot reach the operator API at ${where} (${oneLine(reason)}); is the gateway running? (set KIGO_ADMIN_URL to point elsewhere)`)
  }
}
