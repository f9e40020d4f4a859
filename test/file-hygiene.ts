// Run around every test file (vitest.config.ts `setupFiles`). A worker runs file after file
// in one process (`isolate: false`), so a file must leave the process as it found it: no
// listener added to `process` and left there (it would swallow or change what later files
// see), no fake timers left on.
import { afterAll, beforeAll, expect, vi } from 'vitest'

const events = ['unhandledRejection', 'uncaughtException', 'warning', 'exit', 'beforeExit', 'SIGTERM', 'SIGINT'] as const
const counts = () => Object.fromEntries(events.map((e) => [e, process.listenerCount(e)]))

let before: Record<string, number>
beforeAll(() => {
  before = counts()
})
afterAll(() => {
  expect(vi.isFakeTimers(), 'this file left fake timers on').toBe(false)
  expect(counts(), 'listeners this file added to process and left there').toEqual(before)
})
