// The benchmark's CPU readings from /proc: per process, per server command, and the machine's.
import { describe, expect, it } from 'vitest'
import { commandCpuDeltaMs, commandCpuMs, cpuMs, machineBusyMs } from '../../bench/processes.js'

describe('CPU readings', () => {
  it('finds this process under its command name, and sees its CPU time grow', () => {
    const earlier = cpuMs(process.pid)!
    const before = commandCpuMs(['node', 'no-such-command'])
    const later = cpuMs(process.pid)!
    expect(before['no-such-command'].size).toBe(0)
    expect(before.node.get(process.pid)).toBeGreaterThanOrEqual(earlier)
    expect(before.node.get(process.pid)).toBeLessThanOrEqual(later)
    const machineBefore = machineBusyMs()!
    const until = Date.now() + 150
    while (Date.now() < until) Math.sqrt(Math.random())
    const after = commandCpuMs(['node'])
    expect(after.node.get(process.pid)!).toBeGreaterThan(before.node.get(process.pid)!)
    expect(machineBusyMs()!).toBeGreaterThan(machineBefore)
  })

  it('sums what each process used in between: a new one whole, an ended one left out', () => {
    const before = new Map([[1, 100], [2, 50]])
    const after = new Map([[1, 130], [3, 20]])
    expect(commandCpuDeltaMs(before, after)).toBe(50)
    expect(commandCpuDeltaMs(before, new Map())).toBeNull()
  })
})
