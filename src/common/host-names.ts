// The operator port and the core's metrics port answer only the Host names they are meant
// to be reached by (docs/security.md#request-edges): a page whose name an attacker
// re-points at such a port's address (DNS rebinding) sends its own name as Host, and is
// refused before any route, /metrics included, sees the request. Two Host fields, a port
// outside 1 to 65535, and a target that is not a path (absolute-form
// `GET http://evil.example/metrics`, or `*`; RFC 9112 §3.2: a server that is no proxy
// needs origin-form) are refused as on the public port.
import type { FastifyInstance } from 'fastify'
import { sendOperatorJson } from './api-errors.js'
import { errors } from './errors.js'
import { repeatedHost, repeatedHostError } from './request-edges.js'

/** The loopback names, answered on any port (a published port may differ from the one listened on). */
const loopbackNames = ['127.0.0.1', 'localhost', '[::1]']

/** The host part and the port of a Host value (`name`, `name:port`, `[v6]:port`), lower case. */
function split(value: string): { name: string; port: string | null } {
  const v = value.toLowerCase()
  const m = /^(\[[^\]]*\]|[^:]*)(?::([0-9]+))?$/.exec(v)
  return m ? { name: m[1]!, port: m[2] ?? null } : { name: v, port: null }
}

/**
 * Whether `host` is one such a port answers: a loopback name on any port, or a name of
 * `configured` (an entry without a port: that name on any port; with one: that port only).
 */
export function hostNameAllowed(host: string | undefined, configured: readonly string[]): boolean {
  if (host === undefined || host === '') return false
  const given = split(host)
  if (given.name === '') return false
  if (given.port !== null && !(Number(given.port) >= 1 && Number(given.port) <= 65_535)) return false
  if (loopbackNames.includes(given.name)) return true
  return configured.some((entry) => {
    const allowed = split(entry)
    return allowed.name === given.name && (allowed.port === null || allowed.port === given.port)
  })
}

/**
 * Refuses, in JSON and before any route, a request to `app` whose Host is not allowed
 * (hostNameAllowed) or is given twice. `port` and `setting` name the listener and the
 * variable that adds names, in the refusal's message.
 */
export function hostNameCheck(app: FastifyInstance, configured: readonly string[], listener: { port: string; setting: string }): void {
  const refusal = `The ${listener.port} does not answer to this Host; use 127.0.0.1, localhost or a name configured in ${listener.setting}`
  app.addHook('onRequest', (request, reply, done) => {
    if (repeatedHost(request.raw.rawHeaders)) return void sendOperatorJson(request, reply, repeatedHostError(), undefined)
    if (!request.raw.url?.startsWith('/')) return void sendOperatorJson(request, reply, errors.badRequest('bad_request', `The ${listener.port} takes a path as the request target (such as /metrics), not a full URL`), undefined)
    if (!hostNameAllowed(request.headers.host, configured)) return void sendOperatorJson(request, reply, errors.badRequest('bad_request', refusal), undefined)
    done()
  })
}
