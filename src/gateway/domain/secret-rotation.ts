// Rotating a secret with an overlap (docs/gateway.md#rotating-a-secret): the OAuth
// consumer secret, a login site's secret and an OpenID Connect client secret. The owner
// chooses how long the secret being replaced keeps working beside the new one, from a
// short closed list; a rotation stores the old secret sealed as the previous one with
// that expiry, replacing any earlier previous secret, and a rotation without overlap
// forgets it. The verifiers accept the current secret, or the previous one before its
// expiry (compared at the request's time, so a cached entry expires exactly).
import { ApiError } from '../../common/errors.js'
import { safeEqual } from '../../common/secrets.js'
import { isoSeconds } from '../../common/time.js'

/** The overlaps offered, in seconds: none, 1 hour, 24 hours, 7 days. */
export const overlapChoices = [
  { seconds: 0, label: 'None: the old secret stops working at once' },
  { seconds: 3600, label: '1 hour' },
  { seconds: 86_400, label: '24 hours' },
  { seconds: 604_800, label: '7 days' },
] as const

export type OverlapSeconds = (typeof overlapChoices)[number]['seconds']

/**
 * The overlap when none is chosen (the forms' preselected choice, a form or an operator
 * API call that names none, the CLI without --overlap): a day, so that a rotation never
 * stops the running application before it was given the new secret.
 */
export const defaultOverlapSeconds: OverlapSeconds = 86_400

const allowed: readonly number[] = overlapChoices.map((c) => c.seconds)

/** The overlap `value` names (a number, or its decimal text as a form posts it); null when it is not one of the choices. */
export function overlapOf(value: unknown): OverlapSeconds | null {
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\d{1,7}$/.test(value) ? Number(value) : NaN
  return allowed.includes(n) ? (n as OverlapSeconds) : null
}

/** The overlap a form posted (`overlap`); a form without the field is the default overlap. Null when it is not one of the choices. */
export const postedOverlap = (value: string | null): OverlapSeconds | null => overlapOf(value ?? defaultOverlapSeconds)

/**
 * The overlap of an operator API rotation: its optional JSON body `{ "overlap_seconds": N }`
 * (no body, or no such field, is the default overlap, a day). Anything else is a 400 that changes nothing.
 */
export function overlapFromBody(body: unknown): OverlapSeconds {
  if (body === undefined || body === null) return defaultOverlapSeconds
  const bad = (message: string) => new ApiError(400, 'invalid_parameter', `Invalid request body: ${message}`)
  if (typeof body !== 'object' || Array.isArray(body)) throw bad('send a JSON object, e.g. {"overlap_seconds": 3600}, or no body')
  const { overlap_seconds: value, ...rest } = body as Record<string, unknown>
  const extra = Object.keys(rest)
  if (extra.length > 0) throw bad(`unknown field ${JSON.stringify(extra[0])}; a rotation takes overlap_seconds only`)
  if (value === undefined) return defaultOverlapSeconds
  const overlap = typeof value === 'number' ? overlapOf(value) : null
  if (overlap === null) throw bad(`overlap_seconds must be one of ${allowed.join(', ')} (none, 1 hour, 24 hours, 7 days)`)
  return overlap
}

/** A secret that was replaced and still works until `expiresAt` (epoch ms). */
export interface PreviousSecret {
  secret: string
  expiresAt: number
}

/**
 * A stored previous secret, or undefined when the row keeps none: `sealed` is opened by
 * `open` only when its secret is read, and once. A lookup at every request (the login API,
 * OpenID Connect's token endpoint) does not decrypt a secret that has expired.
 */
export function storedPrevious(sealed: string | null | undefined, expiresAt: Date | string | null | undefined, open: (sealed: string) => string): PreviousSecret | undefined {
  if (!sealed || !expiresAt) return undefined
  let secret: string | undefined
  return {
    expiresAt: new Date(expiresAt).getTime(),
    get secret() {
      secret ??= open(sealed)
      return secret
    },
  }
}

/** The previous secret when it still works at `now` (epoch ms), else null. */
export function livePrevious(previous: PreviousSecret | null | undefined, now: number): PreviousSecret | null {
  return previous && now < previous.expiresAt ? previous : null
}

/**
 * Whether `given` is what `expected` makes of the secret or, when there is one, of the
 * previous secret: both computed and compared in constant time whichever matches, so the
 * answer's time says nothing of which one did.
 */
export function signedWithEither(given: string, expected: (secret: string) => string, secret: string, previous?: string): boolean {
  const current = safeEqual(given, expected(secret))
  if (previous === undefined) return current
  const old = safeEqual(given, expected(previous))
  return current || old
}

/** The rotation's account for the audit trail: the overlap chosen and until when the old secret works. */
export function rotationAudit(overlapSeconds: number, previousUntil: Date | null): { overlap_seconds: number; previous_secret_until: string | null } {
  return { overlap_seconds: overlapSeconds, previous_secret_until: previousUntil === null ? null : isoSeconds(previousUntil) }
}
