// The default migration guide: the URL the deprecation Link points at answers with a page.
import { afterAll, beforeAll, expect, it } from 'vitest'
import { startStack, type Stack } from '../../helpers/stack.js'

let stack: Stack
beforeAll(async () => {
  stack = await startStack()
})
afterAll(async () => {
  await stack?.close()
})

it('serves the guide the policy links to by default', async () => {
  expect(stack.config.migration.guideUrl).toBe(`${stack.url}/migration`)
  const res = await fetch(stack.config.migration.guideUrl)
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toMatch(/^text\/html/)
  const text = await res.text()
  expect(text).toContain('Moving from WSSE or Basic to OAuth')
  expect(text).toContain(`${stack.url}/oauth/initiate`)
})
