// Multipart uploads in the core are held in memory while they arrive (an entry's files are
// checked whole before anything is stored): what they may hold is bounded
// (docs/operations-memory.md). Each upload's bytes are counted as they come off the
// connection, before the multipart parser sees them, against a budget shared by every
// upload of the process and a share per user. Past either, or past the upload deadline,
// the upload stops being read at once and is answered in format (503 or 429 with
// Retry-After, or 408), and its connection closes; its bytes are given back when its
// answer is done. A multipart body to an operation that takes no file is guarded the same
// way, in time and in its own size (at most what a form may be, 413 past it), without
// counting against the uploads' budget.
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { ByteBudget } from '../../common/byte-budget.js'
import { ApiError, errors, Unavailable } from '../../common/errors.js'
import { closeAfterAnswer } from '../../common/linger.js'

export interface UploadLimits {
  /** The budget the body's bytes count against; none for a body without files (see maxBytes). */
  budget?: ByteBudget
  /** The most bytes the body may have (413 past it), whatever the budget holds. */
  maxBytes?: number
  timeoutMs: number
  /** Seconds a refused upload is told to wait (Retry-After). */
  retryAfterSeconds: number
}

/** The uploads in progress hold the process's budget already: a 503 by classifyFailure. */
export class UploadsBusy extends Unavailable {
  override name = 'UploadsBusy'
  constructor(retryAfterSeconds: number) {
    super('uploads_busy', 'Too many uploads are in progress; try again shortly', retryAfterSeconds)
  }
}

/** Why an upload was stopped: a refusal of the catalogue, or the uploads busy. */
export type UploadRefusal = ApiError | UploadsBusy

export interface UploadGuard {
  /** Rejects with the refusal to answer once the upload is stopped; never settles otherwise. */
  stop: Promise<never>
  /** That refusal once stopped, else null. */
  refusal(): UploadRefusal | null
}

/** Starts guarding `request`'s multipart body; the reader races its own reads against `stop`. */
export function guardUpload(request: FastifyRequest, reply: FastifyReply, holder: string, limits: UploadLimits): UploadGuard {
  const raw = request.raw
  const { budget } = limits
  let taken = 0
  let stopped: UploadRefusal | null = null
  let timer: NodeJS.Timeout | undefined
  let reject!: (err: UploadRefusal) => void
  const stop = new Promise<never>((_resolve, r) => (reject = r))
  // Nobody may be waiting yet (a profile refresh before the handler): never unhandled.
  stop.catch(() => undefined)

  const busy = () => new UploadsBusy(limits.retryAfterSeconds)

  const refuse = (err: UploadRefusal): void => {
    if (stopped) return
    stopped = err
    clearTimeout(timer)
    // Nothing more is read: the parser gets no more bytes, and the connection closes once
    // the answer is sent, so the rest of the body is never read either.
    raw.unpipe()
    raw.pause()
    raw.removeListener('data', count)
    closeAfterAnswer(raw, reply.raw)
    reject(err)
  }

  const tooLarge = (max: number) => errors.tooLarge('body_too_large', `A multipart body to an operation that takes no file may be at most ${max} bytes`)

  const count = (chunk: Buffer): void => {
    if (limits.maxBytes !== undefined && taken + chunk.length > limits.maxBytes) return refuse(tooLarge(limits.maxBytes))
    if (budget === undefined) {
      taken += chunk.length
      return
    }
    const refusal = budget.take(holder, chunk.length)
    if (refusal === null) {
      taken += chunk.length
      return
    }
    refuse(
      refusal === 'holder'
        ? new ApiError(429, 'too_many_requests', 'Your uploads in progress hold as much as one account may; try again when they are done', { 'retry-after': String(limits.retryAfterSeconds) })
        : busy(),
    )
  }

  // A declared length past what could ever be taken is refused before a byte is read.
  const declared = Number(request.headers['content-length'])
  if (Number.isFinite(declared) && limits.maxBytes !== undefined && declared > limits.maxBytes) {
    refuse(tooLarge(limits.maxBytes))
  } else if (budget !== undefined && Number.isFinite(declared) && declared > budget.perHolder) {
    refuse(errors.tooLarge('body_too_large', `The request body is larger than an upload may be (${budget.perHolder} bytes)`))
  } else if (budget !== undefined && Number.isFinite(declared) && declared > budget.total - budget.inUse) {
    // It could not be held whole now: refused at once rather than part way.
    refuse(busy())
  }

  if (!stopped) {
    timer = setTimeout(() => refuse(errors.requestTimeout(`The upload did not arrive within ${Math.round(limits.timeoutMs / 1000)} s; send it again on a faster connection`)), limits.timeoutMs)
    timer.unref()
    raw.on('data', count)
    // The listener would start the flow before the parser is attached: held until it is.
    raw.pause()
    raw.once('end', () => clearTimeout(timer))
  }
  // The bytes stay in use until the answer is done (the handler holds the files until then).
  reply.raw.once('close', () => {
    clearTimeout(timer)
    budget?.release(holder, taken)
    taken = 0
  })
  return { stop, refusal: () => stopped }
}

/** `work`, or the guard's refusal if it comes first. */
export function raceUpload<T>(work: Promise<T>, guard: UploadGuard | undefined): Promise<T> {
  return guard === undefined ? work : Promise.race([work, guard.stop])
}
