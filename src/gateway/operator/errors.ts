// The operator API's error answers (docs/gateway.md#the-operator-api-and-dashboard): the
// catalogue's error as {"error":{status,code,message}}, never cached. Each area of the API
// keeps its own wording (which store is away, its reading of a bad body) and declares it
// with the error-answers plugin (src/common/error-answers.ts).
import { sendOperatorJson } from '../../common/api-errors.js'
import type { ErrorArea } from '../../common/error-answers.js'
import { ApiError, errors } from '../../common/errors.js'

/**
 * The operator app's own answers (the policy, usage, audit, locks and sessions routes):
 * Fastify's 4xx (bad JSON, wrong media type) keep their status; the gateway store away is
 * a 503 (docs/operations.md#dependability); anything else a 500 without detail.
 */
export const operatorErrors: ErrorArea = {
  wording: {
    request: (f) => {
      const code = f.reason === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' ? 'unsupported_media_type' : /JSON/.test(f.message) ? 'invalid_json' : 'bad_request'
      return new ApiError(f.status, code, code === 'invalid_json' ? 'The request body is not valid JSON' : f.message)
    },
    unavailable: () => errors.unavailable('store_unavailable', 'The gateway store is unavailable; try again shortly'),
    internalMessage: 'Internal error',
  },
  render: sendOperatorJson,
  logMessage: 'operator request failed',
}

/** No operator resource at the request's method and path. */
export const noOperatorResource = (method: string, url: string): ApiError => new ApiError(404, 'not_found', `No operator resource at ${method} ${url.split('?')[0]}`)

export { sendOperatorJson }
