// A store that is away is a failing dependency (docs/api.md#errors, docs/operations.md#dependability): 503 with
// Retry-After, as the classifier reads its error; any other failure is a 500, its cause
// logged but never shown. Domain outcomes (ReplyTargetNotFound) pass through.
import type { FastifyBaseLogger } from 'fastify'
import { classifyFailure, errors, failureResponse, type FailureWording } from '../../common/errors.js'
import { ReplyTargetNotFound, type ContentStore } from '../store/types.js'

const storeWording: FailureWording = {
  unavailable: () => errors.unavailable('store_unavailable', 'The content store is unavailable; try again shortly'),
  internalMessage: 'Internal server error',
}

export function guardStore(store: ContentStore, log: FastifyBaseLogger, onError?: (operation: string) => void): ContentStore {
  // One guarded function per method, made on first use (every request calls the store).
  const guarded = new Map<string | symbol, { method: unknown; guard: unknown }>()
  return new Proxy(store, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver) as unknown
      if (typeof value !== 'function' || name === 'close') return value
      const known = guarded.get(name)
      if (known?.method === value) return known.guard
      const guard = async (...args: unknown[]) => {
        try {
          return await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args)
        } catch (err) {
          if (err instanceof ReplyTargetNotFound) throw err
          // A store that is away is an outage, logged once when it starts and once when it
          // ends (dependency-watch.ts); each request's own line shows its 503. Anything else
          // is a fault worth its stack trace.
          if (classifyFailure(err).kind !== 'unavailable') log.error({ err, operation: String(name) }, 'content store failed')
          onError?.(String(name))
          throw failureResponse(err, storeWording)
        }
      }
      guarded.set(name, { method: value, guard })
      return guard
    },
  })
}
