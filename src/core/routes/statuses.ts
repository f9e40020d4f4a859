// statuses/update, statuses/show, statuses/destroy (docs/api.md#statusesupdate, docs/api.md#statusesshow-and-statusesdestroy).
import type { FastifyInstance } from 'fastify'
import { errors } from '../../common/errors.js'
import { chooseKeyword } from '../entries/keyword.js'
import { checkBody, checkKeyword, checkSource, chooseSource } from '../entries/limits.js'
import { parseId } from '../entries/ids.js'
import { mayDelete } from '../entries/rights.js'
import { renderEntry, renderEntryWithReplies } from '../render/entry.js'
import { photoImageUrl } from '../render/urls.js'
import { ReplyTargetNotFound, type EntryRow } from '../store/types.js'
import { apiRoute, entryIdOf, readEntryRequest } from './api-route.js'
import { contextOf, deploymentOf, requester, sendPayload } from './context.js'
import { renderContext, type CoreDeps } from './deps.js'
import { ProfileRefresher } from './profiles.js'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { BodyFormat } from '../render/body-formats.js'

export function sendEntry(
  deps: CoreDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  entry: EntryRow,
  favorited: boolean,
  bodyFormats: BodyFormat[],
): FastifyReply {
  const r = renderEntry(entry, favorited, bodyFormats, renderContext(deps, request))
  return sendPayload(request, reply, 'status', r.json, r.xml)
}

/** `in_reply_to_status_id`: absent or empty for none; otherwise it must name an entry (rule 5). */
function replyTarget(value: string | undefined): string | null {
  if (value === undefined || value.trim() === '') return null
  if (!/^[0-9]+$/.test(value.trim())) throw errors.badRequest('invalid_parameter', 'in_reply_to_status_id must be an entry ID (digits)')
  const id = parseId(value.trim())
  if (id === null) throw errors.badRequest('reply_target_not_found', 'in_reply_to_status_id names no entry')
  return id
}

export function statusRoutes(app: FastifyInstance, deps: CoreDeps): void {
  const limits = deps.config.core.limits

  apiRoute(app, {
    operation: 'statuses/update',
    storesProfile: true,
    takesFiles: true,
    handler: async (request, reply) => {
      const poster = requester(request)
      const { params, bodyFormats } = await readEntryRequest(request, {
        names: ['keyword', 'status', 'in_reply_to_status_id', 'source'],
        maxFiles: limits.files,
        fileBytes: limits.fileBytes,
        imageMaxSide: limits.imageMaxSide,
      })
      // Rule 2: exactly one of a non-blank status and files.
      const status = params.get('status')
      const hasStatus = status !== undefined && status.trim() !== ''
      const files = params.files
      if (hasStatus && files.length > 0) throw errors.badRequest('status_and_file', 'status and file cannot be sent together: post the photo with file alone, or the text with status alone')
      if (!hasStatus && files.length === 0) throw errors.badRequest('status_required', 'status (or file) is required')
      // Rule 3.
      const choice = chooseKeyword({ keyword: params.get('keyword'), status: hasStatus ? status : undefined, poster: poster.user })
      if (hasStatus && choice.body.trim() === '') throw errors.badRequest('status_required', 'status has no text after the keyword')
      checkKeyword(choice.keyword, limits)
      if (hasStatus) checkBody(choice.body, limits)
      // Rule 4.
      const source = chooseSource(params.get('source'))
      checkSource(source, limits)
      const inReplyTo = replyTarget(params.get('in_reply_to_status_id'))

      const authorName = ProfileRefresher.displayName(poster)
      let entry: EntryRow
      try {
        entry = await deps.store.createEntry(
          { authorId: poster.user, authorName, keyword: choice.keyword, source, deployment: deploymentOf(request), inReplyToStatusId: inReplyTo },
          files.map((f) => ({ contentType: f.image.contentType, ext: f.image.ext, bytes: f.bytes, title: '', folder: '' })),
          // Rule 6: each photo's image URL on its own line, in upload order.
          (photos) => (hasStatus ? choice.body : photos.map((p) => photoImageUrl(deps.hosts, p)).join('\n')),
        )
      } catch (err) {
        if (err instanceof ReplyTargetNotFound) throw errors.badRequest('reply_target_not_found', 'in_reply_to_status_id names no entry')
        throw err
      }
      deps.profiles.remember(poster.user, authorName)
      return sendEntry(deps, request, reply, entry, false, bodyFormats)
    },
  })

  apiRoute(app, {
    operation: 'statuses/show',
    handler: async (request, reply) => {
      const { bodyFormats } = await readEntryRequest(request, { names: [], maxFiles: 0, fileBytes: limits.fileBytes })
      const id = entryIdOf(request)
      const viewer = contextOf(request).identity
      // With its replies, as on the timelines (clients refresh a thread with it), asked for
      // at the same time: one more round trip only when there are replies.
      const [found, page] = await Promise.all([deps.store.getEntryFor(id, viewer ? viewer.user : null), deps.store.repliesOf(id, viewer ? viewer.user : null)])
      if (!found) throw errors.notFound('entry_not_found', 'No such entry')
      const r = renderEntryWithReplies(page, found.entry, bodyFormats, renderContext(deps, request), found.favorited)
      return sendPayload(request, reply, 'status', r.json, r.xml)
    },
  })

  apiRoute(app, {
    operation: 'statuses/destroy',
    handler: async (request, reply) => {
      const user = requester(request)
      const { params, bodyFormats } = await readEntryRequest(request, { names: ['author_url_name'], maxFiles: 0, fileBytes: limits.fileBytes })
      const id = entryIdOf(request)
      const entry = await deps.store.getEntry(id)
      if (!entry) throw errors.notFound('entry_not_found', 'No such entry')
      const author = params.get('author_url_name')
      if (author !== undefined && author !== '' && author !== entry.authorId) throw errors.notFound('entry_not_found', 'No such entry by that author')
      if (!mayDelete(entry, user.user)) throw errors.forbidden('not_allowed', 'Only the author or the owner of the keyword may delete this entry')
      const deleted = await deps.store.deleteEntry(id)
      if (!deleted) throw errors.notFound('entry_not_found', 'No such entry')
      // Its stars went with it (docs/api.md#statusesshow-and-statusesdestroy).
      return sendEntry(deps, request, reply, deleted, false, bodyFormats)
    },
  })
}
