// The benchmark's CPU readings from /proc (per process, per server command, and the machine's), and the name its results give a build.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { buildName, commandCpuDeltaMs, commandCpuMs, cpuMs, machineBusyMs } from '../../bench/processes.js'

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

describe('the name a results file gives a build', () => {
  it('is the commit of a checkout, or the folder\'s own name, never a path', () => {
    const root = fileURLToPath(new URL('../../', import.meta.url))
    const name = buildName(root)
    expect(name).not.toContain('/')
    expect(name === basename(root) || /^[0-9a-f]{7,40}$/.test(name)).toBe(true)
    const dir = mkdtempSync(join(tmpdir(), 'kigo-build-'))
    try {
      expect(buildName(dir)).toBe(basename(dir))
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
