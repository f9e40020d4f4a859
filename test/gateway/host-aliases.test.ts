// A deployment answers to its host name and to the aliases configured for it (a second
// gateway reached on its own port, as in docker-compose.yml); any other host is 400
// unknown_deployment with a message naming the hosts that are expected.
import { request } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../helpers/stack.js'

let stack: Stack

beforeAll(async () => {
  stack = await startStack({ overrides: { domesticHostAliases: ['localhost:18082'], globalHostAliases: ['127.0.0.1:18082'] } })
})

afterAll(async () => {
  await stack?.close()
})

function get(path: string, host: string): Promise<{ status: number; body: string }> {
  const url = new URL(stack.url)
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: url.port, path, headers: { host } }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => (body += c))
      res.on('end', () => resolve({ status: res.statusCode!, body }))
    })
    req.on('error', reject)
    req.end()
  })
}

describe('deployment host names', () => {
  it('answers on an alias as on the host itself', async () => {
    const viaAlias = await get('/api/statuses/show/1.json', 'localhost:18082')
    expect(viaAlias.status).toBe(404)
    expect(JSON.parse(viaAlias.body).error.code).toBe('entry_not_found')
    expect(JSON.parse((await get('/api/statuses/show/2.json', '127.0.0.1:18082')).body).error.code).not.toBe('unknown_deployment')
  })

  it('names the expected hosts in unknown_deployment', async () => {
    const r = await get('/api/statuses/show/1.json', 'elsewhere.example')
    expect(r.status).toBe(400)
    const { error } = JSON.parse(r.body)
    expect(error.code).toBe('unknown_deployment')
    const port = new URL(stack.url).port
    expect(error.message).toBe(`The request host is not a deployment of this service; use one of localhost:${port}, localhost:18082, 127.0.0.1:${port}, 127.0.0.1:18082 (to serve another host name, set KIGO_DOMESTIC_HOST and KIGO_GLOBAL_HOST, and KIGO_DOMESTIC_HOST_ALIASES or KIGO_GLOBAL_HOST_ALIASES for more names; see docs/operations.md)`)
  })
})
