// Throttling of failed Basic and WSSE attempts (SPEC §4.7) as a client sees it: past the
// threshold, 429 with Retry-After, even with the right password; other users unaffected.
import { afterAll, beforeAll, expect, it } from 'vitest'
import { startStack, type Stack } from '../helpers/stack.js'

let stack: Stack
let dave: { api_password: string }
let erin: { api_password: string }

beforeAll(async () => {
  stack = await startStack({ overrides: { gateway: { host: '127.0.0.1' }, auth: { throttle: { maxFailures: 3, windowSeconds: 60 } } } })
  dave = await stack.addUser('dave', 'Dave')
  erin = await stack.addUser('erin', 'Erin')
})

afterAll(async () => {
  await stack?.close()
})

const post = (user: string, password: string, ip = '203.0.113.7') =>
  fetch(`${stack.url}/api/statuses/update.json`, {
    method: 'POST',
    headers: {
      authorization: 'Basic ' + Buffer.from(`${user}:${password}`).toString('base64'),
      'content-type': 'application/x-www-form-urlencoded',
      // Not a trusted proxy: this must not change the address that is counted.
      'x-forwarded-for': ip,
    },
    body: 'status=throttle+test',
  })

it('answers 429 with Retry-After once a user has failed too often, even with the right password', async () => {
  for (let i = 0; i < 3; i++) expect((await post('dave', 'guess' + i)).status).toBe(401)
  const blocked = await post('dave', dave.api_password)
  expect(blocked.status).toBe(429)
  expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0)
  expect((await blocked.json()).error.code).toBe('too_many_requests')
})

it('counts per client address too: the same address is throttled for another user', async () => {
  const other = await post('erin', erin.api_password)
  expect(other.status).toBe(429)
})
