// The generated profile icon every user has (docs/api.md#objects `profile_image_url`), and its
// small rendition `profile_s.png` (the login API's thumbnail_url, docs/login-api.md).
import { createHash } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { errors } from '../../common/errors.js'
import { userIdPattern } from '../entries/ids.js'
import { identiconPng, smallIdenticonScale } from '../photos/identicon.js'
import { noneMatch } from './photos.js'

const maxCached = 1000

export function userRoutes(app: FastifyInstance): void {
  const cache = new Map<string, { png: Buffer; etag: string }>()
  const icon = (name: 'profile.png' | 'profile_s.png', scale: number) =>
    app.get(`/users/:id/${name}`, async (request, reply) => {
      const { id } = request.params as { id: string }
      if (!userIdPattern.test(id)) throw errors.notFound('user_not_found', 'No such user')
      const key = `${scale} ${id}`
      let found = cache.get(key)
      if (!found) {
        const png = identiconPng(id, scale)
        found = { png, etag: `"${createHash('sha256').update(png).digest('base64url')}"` }
        if (cache.size >= maxCached) cache.delete(cache.keys().next().value!)
        cache.set(key, found)
      }
      reply.header('etag', found.etag).header('cache-control', 'public, max-age=86400')
      if (noneMatch(request.headers['if-none-match'], found.etag)) return reply.code(304).send()
      return reply.header('x-content-type-options', 'nosniff').type('image/png').send(found.png)
    })
  icon('profile.png', 1)
  icon('profile_s.png', smallIdenticonScale)
}
