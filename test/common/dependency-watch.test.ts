// One outage, one pair of lines (docs/operations.md#dependability): a call that began
// before the outage started and answers after it proves nothing about now, so it does not
// end the outage; a call begun afterwards that answers does.
import { describe, expect, it } from 'vitest'
import { DependencyWatch } from '../../src/common/dependency-watch.js'

function watched() {
  let now = 1_000
  const lines: string[] = []
  const log = (_o: object, message: string) => lines.push(message)
  const watch = new DependencyWatch('postgres', { warn: log }, { now: () => now })
  return { watch, lines, tick: (ms: number) => (now += ms) }
}

describe('DependencyWatch', () => {
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
})
