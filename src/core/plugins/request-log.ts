// The core's one line per request, written by the request-log plugin every app shares
// (src/common/request-log.ts); what it counts (src/core/metrics.ts) is given by the app.
import type { RequestLogOptions } from '../../common/request-log.js'
import { pathOf } from '../../common/request-log.js'
import { contextOf } from '../routes/context.js'

export function coreRequestLog(observe: RequestLogOptions['observe']): RequestLogOptions {
  return {
    ...(observe ? { observe } : {}),
    line: (request, reply) => ({
      method: request.method,
      path: pathOf(request.raw.url ?? ''),
      status: reply.statusCode,
      user: contextOf(request).identity?.user,
      ms: Math.round(reply.elapsedTime * 10) / 10,
    }),
  }
}
