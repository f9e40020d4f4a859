// `kigo` run in-process against a running kigo (src/cli/kigo.ts's main), its output
// collected: the operator's command line as the tests drive it.
import { expect } from 'vitest'
import { main } from '../../src/cli/kigo.js'

export interface CliRun {
  code: number
  stdout: string
  stderr: string
}

/** `kigo` with `env` (KIGO_ADMIN_URL and KIGO_ADMIN_TOKEN); `json` adds --json, expects success and parses the answer. */
export function cliOf(env: () => Record<string, string>) {
  const kigo = async (...args: string[]): Promise<CliRun> => {
    let stdout = ''
    let stderr = ''
    const code = await main(args, env(), { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) } })
    return { code, stdout, stderr }
  }
  const json = async <T = Record<string, unknown>>(...args: string[]): Promise<T> => {
    const r = await kigo(...args, '--json')
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    return JSON.parse(r.stdout) as T
  }
  return { kigo, json }
}
