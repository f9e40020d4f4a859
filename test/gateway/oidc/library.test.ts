// oidc-provider's "Unsupported runtime" warning on Node 20 goes to the gateway's logger as
// one structured line, not to stderr; on Node 22 and later there is nothing to say. The
// library prints it when a process first imports it, so the check runs in a new process
// (the built module, as `npm start` runs it).
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { expect, it } from 'vitest'

const libraryJs = fileURLToPath(new URL('../../../dist/src/gateway/oidc/library.js', import.meta.url))

it('loads the library without writing its runtime warning to stderr, and tells the logger once', () => {
  expect(existsSync(libraryJs), `${libraryJs} is missing: run npm run build`).toBe(true)
  const script = [
    `const { loadOidcLibrary } = await import(${JSON.stringify(pathToFileURL(libraryJs).href)})`,
    'const logged = []',
    'const library = await loadOidcLibrary((m) => logged.push(m))',
    // Rebuilding the providers loads it again: nothing more is said.
    'await loadOidcLibrary((m) => logged.push(m))',
    'console.log(JSON.stringify({ provider: typeof library.Provider, logged }))',
  ].join('\n')
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 })
  expect(run.status, run.stderr).toBe(0)
  expect(run.stderr).not.toMatch(/Unsupported runtime/)
  const { provider, logged } = JSON.parse(run.stdout) as { provider: string; logged: string[] }
  expect(provider).toBe('function')
  if (Number(process.versions.node.split('.')[0]) < 22) expect(logged).toEqual([expect.stringMatching(/^oidc-provider prefers Node 22 or later; this is Node 20\./)])
  else expect(logged).toEqual([])
})
