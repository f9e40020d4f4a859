// kigo's share of a CPU profile (bench/profile.ts): self samples in dist/src/ over the
// samples of the timed window, idle ones left out; dependencies and Node's own code are not kigo's.
import { describe, expect, it } from 'vitest'
import { kigoFile, kigoShare } from '../../bench/profile.js'

describe('kigoShare', () => {
  const frame = (id: number, functionName: string, url: string) => ({ id, callFrame: { functionName, url } })
  const profile = {
    nodes: [
      frame(1, '(root)', ''),
      frame(2, '(idle)', ''),
      frame(3, 'forward', 'file:///srv/kigo/dist/src/gateway/proxy/forward.js'),
      frame(4, 'decide', 'file:///srv/kigo/dist/src/gateway/auth/authenticate.js'),
      frame(5, 'dispatch', 'file:///srv/kigo/node_modules/undici/lib/dispatcher/client.js'),
      frame(6, 'writeGeneric', 'node:internal/stream_base_commons'),
    ],
    startTime: 1_000,
    // One sample every 100 µs, at 1,100 … 2,000.
    samples: [3, 3, 2, 4, 5, 6, 6, 3, 2, 5],
    timeDeltas: Array.from({ length: 10 }, () => 100),
  }

  it('counts kigo\'s own self samples over the non-idle ones, per file', () => {
    expect(kigoShare(profile, 0, 10_000)).toEqual({
      samples: 8,
      percent: 50,
      files: [
        { file: 'gateway/proxy/forward.js', percent: 37.5 },
        { file: 'gateway/auth/authenticate.js', percent: 12.5 },
      ],
    })
  })

  it('leaves out the samples outside the window', () => {
    // 1,500 … 1,800: samples 5, 6, 6, 3.
    expect(kigoShare(profile, 1_450, 1_800)).toMatchObject({ samples: 4, percent: 25 })
  })

  it('names only files under dist/src/ outside node_modules as kigo\'s', () => {
    expect(kigoFile('file:///app/dist/src/common/sql.js')).toBe('common/sql.js')
    expect(kigoFile('file:///app/node_modules/x/dist/src/y.js')).toBeNull()
    expect(kigoFile('node:internal/http')).toBeNull()
  })
})
