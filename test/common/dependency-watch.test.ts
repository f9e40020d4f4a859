// One outage, one pair of lines (docs/operations.md#dependability): a call that began
// before the outage started and answers after it proves nothing about now, so it does not
// end the outage; a call begun afterwards that answers does. The watch's own probe is such
// a call too.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { DependencyWatch } from '../../src/common/dependency-watch.js'

function watched() {
  let now = 1_000
  const lines: string[] = []
  const log = (_o: object, message: string) => lines.push(message)
  const watch = new DependencyWatch('postgres', { warn: log }, { now: () => now })
  return { watch, lines, tick: (ms: number) => (now += ms) }
}

describe('DependencyWatch', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it('keeps an outage open when a call begun before it answers late, and ends it on a call begun after', () => {
    const { watch, lines, tick } = watched()
    const early = watch.mark()
    tick(10)
    watch.failed(new Error('connect ECONNREFUSED'))
    tick(10)
    watch.succeeded(early)
    expect(watch.down).toBe(true)
    expect(lines).toEqual(['postgres outage started'])
    const later = watch.mark()
    tick(10)
    watch.succeeded(later)
    expect(watch.down).toBe(false)
    expect(lines).toEqual(['postgres outage started', 'postgres outage ended'])
    watch.close()
  })

  it('keeps an outage open when a probe asked during an earlier outage answers late', async () => {
    vi.useFakeTimers()
    let now = 1_000
    const lines: string[] = []
    const probes: Array<{ resolve: () => void; reject: (err: Error) => void }> = []
    const probe = () => new Promise<void>((resolve, reject) => probes.push({ resolve, reject }))
    const watch = new DependencyWatch('postgres', { warn: (_o, message) => lines.push(message) }, { probe, probeMs: 1000, now: () => now })
    watch.failed(new Error('Query read timeout'))
    now += 1000
    await vi.advanceTimersByTimeAsync(1000)
    expect(probes).toHaveLength(1)
    // The first outage ends on a request's answer while its probe is still on its way;
    // a second starts.
    watch.succeeded(watch.mark())
    now += 500
    watch.failed(new Error('Query read timeout'))
    probes[0]!.resolve()
    await vi.advanceTimersByTimeAsync(0)
    expect(watch.down).toBe(true)
    expect(lines).toEqual(['postgres outage started', 'postgres outage ended', 'postgres outage started'])
    // The second outage's own probe, asked after it started, ends it; the first probe left no timer behind.
    now += 1000
    await vi.advanceTimersByTimeAsync(1000)
    expect(probes).toHaveLength(2)
    probes[1]!.resolve()
    await vi.advanceTimersByTimeAsync(0)
    expect(watch.down).toBe(false)
    expect(lines).toEqual(['postgres outage started', 'postgres outage ended', 'postgres outage started', 'postgres outage ended'])
    await vi.advanceTimersByTimeAsync(5000)
    expect(probes).toHaveLength(2)
    watch.close()
  })

  it('probes once a second while the outage lasts, whatever an earlier outage\'s probe does', async () => {
    vi.useFakeTimers()
    let now = 1_000
    const probes: Array<{ resolve: () => void; reject: (err: Error) => void }> = []
    const probe = () => new Promise<void>((resolve, reject) => probes.push({ resolve, reject }))
    const watch = new DependencyWatch('postgres', { warn: () => undefined }, { probe, probeMs: 1000, now: () => now })
    watch.failed(new Error('Query read timeout'))
    now += 1000
    await vi.advanceTimersByTimeAsync(1000)
    watch.succeeded(watch.mark())
    watch.failed(new Error('Query read timeout'))
    // The first outage's probe fails after its outage ended: the second keeps one probe chain.
    probes[0]!.reject(new Error('Query read timeout'))
    now += 1000
    await vi.advanceTimersByTimeAsync(1000)
    expect(probes).toHaveLength(2)
    probes[1]!.reject(new Error('Query read timeout'))
    now += 1000
    await vi.advanceTimersByTimeAsync(1000)
    expect(probes).toHaveLength(3)
    watch.close()
  })
})
