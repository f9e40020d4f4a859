// Registered users from the gateway (docs/gateway.md#registered-users-in-the-core): `POST /users`
// signed for its own operation, which no forwarded request carries, with the signed digest
// of its form body (verified by the bodies plugin before this runs). Anything else is the
// 404 of a path that is not there.
import type { FastifyInstance } from 'fastify'
import { errors } from '../../common/errors.js'
import { provisionOperation, provisionPath, readProvisionedUsers } from '../../common/user-provisioning.js'
import { userIdPattern } from '../entries/ids.js'
import { contextOf } from './context.js'
import type { CoreDeps } from './deps.js'
import { FormBody } from './params.js'

export function provisionRoutes(app: FastifyInstance, deps: CoreDeps): void {
  app.post(provisionPath, async (request, reply) => {
    const ctx = contextOf(request)
    const body = request.body
    if (ctx.signedOperation !== provisionOperation || ctx.identity !== null || ctx.bodySha256 === undefined || !(body instanceof FormBody)) {
      throw errors.notFound()
    }
    const values = body.pairs.filter(([name]) => name === 'users')
    const users = readProvisionedUsers(values.length === 1 ? values[0]![1] : undefined, (id) => userIdPattern.test(id))
    if (typeof users === 'string') throw errors.badRequest('invalid_parameter', users)
    await deps.store.provisionUsers(users)
    return reply.send({ users: users.length })
  })
}
