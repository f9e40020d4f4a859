// The benchmark measures what is deployed: the core and the gateway run with the same
// Node.js flags in the Dockerfile, in `npm run start:gateway` / `start:core`, and in the
// benchmark's topology.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { productionNodeFlags } from '../../bench/topology.js'

const root = new URL('../../', import.meta.url)

describe('production Node.js flags', () => {
  it('are the same in the Dockerfile, the npm start scripts and the benchmark', () => {
    expect(productionNodeFlags.length).toBeGreaterThan(0)
    const entrypoint = /^ENTRYPOINT (\[.*\])$/m.exec(readFileSync(new URL('Dockerfile', root), 'utf8'))
    expect(entrypoint).not.toBeNull()
    expect(JSON.parse(entrypoint![1]!)).toEqual(['node', ...productionNodeFlags, 'dist/src/main.js'])
    const scripts = (JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { scripts: Record<string, string> }).scripts
    for (const app of ['core', 'gateway']) {
      expect(scripts[`start:${app}`]).toBe(`node ${productionNodeFlags.join(' ')} dist/src/main.js ${app}`)
    }
  })

  it('are all known to the Node.js running the tests, as are those of npm start (an unknown one stops node before it starts)', () => {
    const scripts = (JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { scripts: Record<string, string> }).scripts
    const embeddedFlags = /^node ((?:--\S+ )+)dist\/src\/main\.js embedded$/.exec(scripts.start!)
    expect(embeddedFlags).not.toBeNull()
    for (const flags of [productionNodeFlags, embeddedFlags![1]!.trim().split(' ')]) {
      const out = execFileSync(process.execPath, [...flags, '-p', 'process.execArgv.filter((a) => a.startsWith("--")).join(" ")'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
      expect(out.trim()).toBe(flags.join(' '))
    }
  })
})
