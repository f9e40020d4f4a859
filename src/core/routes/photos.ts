// The photo service (docs/api.md#photos): posting one image, and serving the bytes with a strong
// ETag and immutable caching (a photo's bytes never change under its URL).
import type { FastifyInstance } from 'fastify'
import { errors } from '../../common/errors.js'
import { checkPhotoText, checkSource, chooseSource } from '../entries/limits.js'
import { parseId, userIdPattern } from '../entries/ids.js'
import { html } from '../../common/html.js'
import { renderPhoto } from '../render/entry.js'
import { photoImageUrl } from '../render/urls.js'
import { apiRoute, readEntryRequest } from './api-route.js'
import { deploymentOf, requester, sendPayload } from './context.js'
import { renderContext, type CoreDeps } from './deps.js'
import { ProfileRefresher } from './profiles.js'
import { pageContext, sendNotFoundPage, sendPage, wantsPage } from './pages.js'
import { layout } from '../render/pages.js'

/** RFC 9110 §13.1.2: If-None-Match uses the weak comparison; `*` matches any. */
export function noneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false
  if (header.trim() === '*') return true
  const opaque = etag.replace(/^W\//, '')
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === opaque)
}

export function photoRoutes(app: FastifyInstance, deps: CoreDeps): void {
  const limits = deps.config.core.limits

  apiRoute(app, {
    operation: 'photos/create',
    storesProfile: true,
    takesFiles: true,
    handler: async (request, reply) => {
      const user = requester(request)
      const { params } = await readEntryRequest(request, { names: ['title', 'folder', 'source'], maxFiles: 1, fileBytes: limits.fileBytes, imageMaxSide: limits.imageMaxSide })
      const file = params.files[0]
      if (!file) throw errors.badRequest('file_required', 'file (one image, multipart/form-data) is required')
      const title = params.get('title')?.trim() ?? ''
      const folder = params.get('folder')?.trim() ?? ''
      checkPhotoText('title', title)
      checkPhotoText('folder', folder)
      const source = chooseSource(params.get('source'))
      checkSource(source, limits)
      const name = ProfileRefresher.displayName(user)
      const photo = await deps.store.createPhoto(user.user, name, source, deploymentOf(request), {
        contentType: file.image.contentType,
        ext: file.image.ext,
        bytes: file.bytes,
        title,
        folder,
      })
      deps.profiles.remember(user.user, name)
      // The name the profile copy holds: the gateway's, when it sent the user (profiles.ts).
      const shown = (await deps.store.getUser(user.user))?.name ?? name
      const r = renderPhoto(photo, { id: user.user, name: shown }, renderContext(deps, request))
      return sendPayload(request, reply, 'photo', r.json, r.xml)
    },
  })

  // `/photos/{user}/{id}.{ext}` returns the bytes; `/photos/{user}/{id}` a small page.
  app.get('/photos/:user/:file', async (request, reply) => {
    const { user, file } = request.params as { user: string; file: string }
    const m = /^([0-9]+)(?:\.([a-z]+))?$/.exec(file)
    const id = m ? parseId(m[1]!) : null
    // A browser opening a wrong photo address gets the 404 page; API clients and <img> the JSON error.
    const missing = () => (wantsPage(request) ? sendNotFoundPage(request, reply, deps) : Promise.reject(errors.notFound('photo_not_found', 'No such photo')))
    if (!m || id === null || !userIdPattern.test(user)) return missing()
    const photo = await deps.store.getPhoto(user, id)
    if (!photo || (m[2] !== undefined && m[2] !== photo.ext)) return missing()
    if (m[2] === undefined) {
      const title = photo.title || `Photo ${photo.id}`
      const ctx = pageContext(request, deps.hosts, photo.deployment)
      return sendPage(reply, 200, ctx, layout(ctx, title, html`<h1>${title}</h1><p class="body"><img src="${photoImageUrl(deps.hosts, photo)}" alt="${title}"></p>`))
    }
    const etag = `"${photo.sha256}"`
    reply.header('etag', etag).header('cache-control', 'public, max-age=31536000, immutable')
    if (noneMatch(request.headers['if-none-match'], etag)) return reply.code(304).send()
    return reply
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', "default-src 'none'")
      .type(photo.contentType)
      .send(photo.bytes)
  })
}
