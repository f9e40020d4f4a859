// Parameters of the public API (docs/api.md): from the query string, an urlencoded body or a
// multipart body, merged. A known parameter given twice, in one place or in two, is 400:
// which of two values a client meant cannot be guessed.
import { byteSize } from '../../common/formats.js'
import type { FastifyRequest } from 'fastify'
import { ApiError, errors } from '../../common/errors.js'
import { defaultImageMaxSide, sniffImage, type ImageType } from '../photos/sniff.js'
import { raceUpload, type UploadGuard } from './upload-guard.js'
import { decodeForm, queryBytes } from './form-decoding.js'
import { contextOf } from './context.js'

/** The parsed urlencoded body, as the content-type parser leaves it on `request.body`. */
export class FormBody {
  constructor(readonly pairs: Array<[string, string]>) {}
}

export interface UploadedFile {
  bytes: Buffer
  image: ImageType
}

export interface Params {
  get(name: string): string | undefined
  files: UploadedFile[]
}

export interface ReadOptions {
  /** Parameters this operation reads; others (such as OAuth's) are ignored. */
  names: readonly string[]
  /** How many `file` parts are accepted; 0 refuses any. */
  maxFiles: number
  fileBytes: number
  /** Longest side of an image accepted, in pixels (sniff.ts); its default otherwise. */
  imageMaxSide?: number
}

/** A text field of a multipart body may be this large; longer ones get 413. */
const multipartFieldBytes = 1024 * 1024
const multipartFields = 100

/**
 * Whether the body is multipart. @fastify/multipart, which tells, is registered only in the
 * scope of the operations that take a body (api-route.ts); elsewhere no body is read.
 */
function isMultipartBody(request: FastifyRequest): boolean {
  return (request as Partial<Pick<FastifyRequest, 'isMultipart'>>).isMultipart?.() === true
}

export async function readParams(request: FastifyRequest, opts: ReadOptions): Promise<Params> {
  const values = new Map<string, string>()
  const files: UploadedFile[] = []
  const take = (name: string, value: string) => {
    if (value.includes('\u0000')) throw errors.badRequest('invalid_parameter', `${name.slice(0, 40)} must not contain U+0000`)
    if (!opts.names.includes(name)) return
    if (values.has(name)) throw errors.badRequest('duplicate_parameter', `${name} was given more than once`)
    values.set(name, value)
  }
  for (const [name, value] of decodeForm(queryBytes(request.raw.url ?? ''))) {
    if (name === 'file') throw errors.badRequest('invalid_parameter', 'file must be sent as a multipart/form-data file part')
    take(name, value)
  }
  if (request.body instanceof FormBody) {
    for (const [name, value] of request.body.pairs) {
      if (name === 'file') throw errors.badRequest('invalid_parameter', 'file must be sent as a multipart/form-data file part')
      take(name, value)
    }
  } else if (isMultipartBody(request)) {
    const ctx = contextOf(request)
    await readMultipart(request, opts, take, files, ctx.upload)
    // A body the gateway signed a digest of (oauth_body_hash) is the body parsed here.
    const check = ctx.bodyCheck
    if (check !== undefined && !(await raceUpload(check, ctx.upload))) throw errors.unauthorized('invalid_identity', 'The identity of this request could not be verified')
  }
  return { get: (name) => values.get(name), files }
}

async function readMultipart(
  request: FastifyRequest,
  opts: ReadOptions,
  take: (name: string, value: string) => void,
  files: UploadedFile[],
  guard: UploadGuard | undefined,
): Promise<void> {
  // An upload refused before it was read (its declared length) is not read at all.
  const refused = guard?.refusal()
  if (refused) throw refused
  try {
    const parts = request.parts({
      limits: { fileSize: opts.fileBytes, files: opts.maxFiles + 1, fields: multipartFields, fieldSize: multipartFieldBytes, headerPairs: 100 },
    })[Symbol.asyncIterator]()
    // Each read races the upload guard: a stopped upload is answered at once.
    for (;;) {
      const next = await raceUpload(parts.next(), guard)
      if (next.done === true) break
      const part = next.value
      if (part.type === 'file') {
        if (part.fieldname !== 'file') {
          throw errors.badRequest('invalid_parameter', `${part.fieldname.slice(0, 40)} must not be a file`)
        }
        if (files.length >= opts.maxFiles) {
          throw opts.maxFiles === 0
            ? errors.badRequest('invalid_parameter', 'this operation takes no file')
            : errors.badRequest('too_many_files', `at most ${opts.maxFiles} file${opts.maxFiles === 1 ? '' : 's'} may be sent`)
        }
        const bytes = await raceUpload(part.toBuffer(), guard)
        const image = sniffImage(bytes, opts.imageMaxSide)
        if (!image) {
          throw errors.unsupportedMedia('not_an_image', `file must be a JPEG, PNG, GIF or WebP image whose header decodes, at most ${opts.imageMaxSide ?? defaultImageMaxSide} pixels a side`)
        }
        files.push({ bytes, image })
        continue
      }
      if (part.fieldname === 'file') throw errors.badRequest('invalid_parameter', 'file must be a file part, not a text field')
      if (part.fieldnameTruncated) throw errors.badRequest('invalid_parameter', 'a field name is too long')
      if (part.valueTruncated) throw errors.tooLarge('parameter_too_large', `${part.fieldname.slice(0, 40)} is too large`)
      if (typeof part.value !== 'string') throw errors.badRequest('invalid_parameter', `${part.fieldname.slice(0, 40)} must be text`)
      // Text parts are decoded by their declared charset (UTF-8 by default); bytes that
      // do not decode come out as U+FFFD, which is taken as a sign of invalid input.
      if (part.value.includes('\uFFFD')) throw errors.badRequest('bad_encoding', 'Parameters must be UTF-8')
      take(part.fieldname, part.value)
    }
  } catch (err) {
    if (err instanceof ApiError || (guard !== undefined && err === guard.refusal())) throw err
    const status = (err as { statusCode?: number }).statusCode
    const code = (err as { code?: string }).code
    if (code === 'FST_REQ_FILE_TOO_LARGE') throw errors.tooLarge('file_too_large', `each file must be at most ${byteSize(opts.fileBytes)}`)
    if (code === 'FST_FILES_LIMIT') throw errors.badRequest('too_many_files', `at most ${opts.maxFiles} files may be sent`)
    if (code === 'FST_FIELDS_LIMIT' || code === 'FST_PARTS_LIMIT') throw errors.tooLarge('too_many_parts', 'the multipart body has too many parts')
    if (status !== undefined && status >= 400 && status < 500 && status !== 406) throw new ApiError(status, 'bad_request', (err as Error).message)
    // Everything else here comes from parsing what the client sent.
    throw errors.badRequest('malformed_body', 'The multipart/form-data body could not be parsed')
  }
}
