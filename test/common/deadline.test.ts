import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { DeadlineExceeded, withDeadline } from '../../src/common/deadline.js'

const never = () => new Promise<never>(() => undefined)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** When `p` settled, in ms after `start`, and how. */
async function settledAt<T>(p: Promise<T>, start: number): Promise<{ ms: number; value?: T; error?: unknown }> {
  try {
    const value = await p
    return { ms: performance.now() - start, value }
  } catch (error) {
    return { ms: performance.now() - start, error }
  }
}

describe('withDeadline', () => {
  const unhandled: unknown[] = []
  const onUnhandled = (reason: unknown) => void unhandled.push(reason)
  // Removed after this file: the worker runs other files next (vitest.config.ts `isolate: false`).
  beforeAll(() => void process.on('unhandledRejection', onUnhandled))
  afterAll(() => void process.off('unhandledRejection', onUnhandled))
  afterEach(() => {
    expect(unhandled).toEqual([])
  })

  it('gives the work’s value or error when it settles in time', async () => {
    await expect(withDeadline(Promise.resolve(7), 1000, 'quick')).resolves.toBe(7)
    await expect(withDeadline(Promise.reject(new Error('store down')), 1000, 'quick')).rejects.toThrow('store down')
    await expect(withDeadline(sleep(20).then(() => 'late but in time'), 1000, 'slow')).resolves.toBe('late but in time')
  })

  it('rejects work that never settles with DeadlineExceeded, not before its time', async () => {
    const start = performance.now()
    const { ms, error } = await settledAt(withDeadline(never(), 80, 'authentication'), start)
    expect(error).toBeInstanceOf(DeadlineExceeded)
    expect((error as DeadlineExceeded).what).toBe('authentication')
    expect((error as Error).message).toBe('authentication took longer than 80 ms')
    expect(ms).toBeGreaterThanOrEqual(79)
    expect(ms).toBeLessThan(500)
  })

  it('each hanging piece of work gets its own full time, whatever settled around it', async () => {
    const start = performance.now()
    const first = settledAt(withDeadline(never(), 120, 'first'), start)
    // Many that settle at once, before and after the second hanging one.
    for (let i = 0; i < 1000; i++) await withDeadline(Promise.resolve(i), 120, 'settles')
    await sleep(60)
    const secondStart = performance.now()
    const second = settledAt(withDeadline(never(), 120, 'second'), secondStart)
    for (let i = 0; i < 1000; i++) await withDeadline(Promise.resolve(i), 120, 'settles')
    const [a, b] = await Promise.all([first, second])
    expect((a.error as DeadlineExceeded).what).toBe('first')
    expect((b.error as DeadlineExceeded).what).toBe('second')
    expect(a.ms).toBeGreaterThanOrEqual(119)
    expect(b.ms).toBeGreaterThanOrEqual(119)
    expect(a.ms).toBeLessThan(600)
    expect(b.ms).toBeLessThan(600)
  })

  it('deadlines of different lengths run out each at its own time', async () => {
    const start = performance.now()
    const long = settledAt(withDeadline(never(), 200, 'long'), start)
    const short = settledAt(withDeadline(never(), 50, 'short'), start)
    const [l, s] = await Promise.all([long, short])
    expect(s.ms).toBeGreaterThanOrEqual(49)
    expect(s.ms).toBeLessThan(l.ms)
    expect(l.ms).toBeGreaterThanOrEqual(199)
  })

  it('a late answer changes nothing, and a late failure is never an unhandled rejection', async () => {
    let fail!: (err: Error) => void
    let succeed!: (v: string) => void
    const failing = withDeadline(new Promise<string>((_, reject) => (fail = reject)), 30, 'fails late')
    const succeeding = withDeadline(new Promise<string>((resolve) => (succeed = resolve)), 30, 'answers late')
    await expect(failing).rejects.toBeInstanceOf(DeadlineExceeded)
    await expect(succeeding).rejects.toBeInstanceOf(DeadlineExceeded)
    fail(new Error('too late'))
    succeed('too late')
    await sleep(20)
    await expect(failing).rejects.toBeInstanceOf(DeadlineExceeded)
  })
})
