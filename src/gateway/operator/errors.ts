// The operator API's error answers (docs/gateway.md#the-operator-api-and-dashboard): the
// catalogue's error as {"error":{status,code,message}}, never cached. Every area of the API
// reads a bad body the same way (src/common/operator-errors.ts); each names only which
// store is away and its store's refusals.
import { sendOperatorJson } from '../../common/api-errors.js'
import type { ErrorArea } from '../../common/error-answers.js'
import { ApiError, errors } from '../../common/errors.js'
import { operatorErrorArea } from '../../common/operator-errors.js'

/**
 * The operator app's own answers (the policy, usage, audit, locks and sessions routes):
 * Fastify's 4xx (bad JSON, wrong media type) keep their status; the gateway store away is
 * a 503 (docs/operations.md#dependability); anything else a 500 without detail.
 */
export const operatorErrors: ErrorArea = operatorErrorArea({
  unavailable: () => errors.unavailable('store_unavailable', 'The gateway store is unavailable; try again shortly'),
  logMessage: 'operator request failed',
})

/** No operator resource at the request's method and path. */
export const noOperatorResource = (method: string, url: string): ApiError => new ApiError(404, 'not_found', `No operator resource at ${method} ${url.split('?')[0]}`)

export { sendOperatorJson }
