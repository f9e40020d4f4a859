// The generated profile icon every user has (SPEC §2.1 `profile_image_url`).
import { createHash } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { errors } from '../../common/errors.js'
import { userIdPattern } from '../entries/ids.js'
import { identiconPng } from '../photos/identicon.js'
import { noneMatch } from './photos.js'

const maxCached = 1000

export function userRoutes(app: FastifyInstance): void {
  const cache = new Map<string, { png: Buffer; etag: string }>()
  app.get('/users/:id/profile.png', async (request, reply) => {
    const { id } = request.params as { id: string }
    if (!userIdPattern.test(id)) throw errors.notFound('user_not_found', 'No such user')
    let icon = cache.get(id)
    if (!icon) {
      const png = identiconPng(id)
      icon = { png, etag: `"${createHash('sha256').update(png).digest('base64url')}"` }
      if (cache.size >= maxCached) cache.delete(cache.keys().next().value!)
      cache.set(id, icon)
    }
    reply.header('etag', icon.etag).header('cache-control', 'public, max-age=86400')
    if (noneMatch(request.headers['if-none-match'], icon.etag)) return reply.code(304).send()
    return reply.header('x-content-type-options', 'nosniff').type('image/png').send(icon.png)
  })
}
