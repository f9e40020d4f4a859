// oidc-provider's "Unsupported runtime" warning on Node 20 goes to the gateway's logger as
// one structured line, not to stderr; on Node 22 and later there is nothing to say.
import { expect, it, vi } from 'vitest'
import { loadOidcLibrary } from '../../../src/gateway/oidc/library.js'

it('loads the library without writing its runtime warning to stderr', async () => {
  const warn = vi.spyOn(console, 'warn')
  const logged: string[] = []
  const library = await loadOidcLibrary((m) => logged.push(m))
  expect(typeof library.Provider).toBe('function')
  expect(warn.mock.calls.flat().join(' ')).not.toMatch(/Unsupported runtime/)
  if (Number(process.versions.node.split('.')[0]) < 22) expect(logged).toEqual([expect.stringMatching(/^oidc-provider prefers Node 22 or later; this is Node 20\./)])
  else expect(logged).toEqual([])
  // Told once, however often the providers are rebuilt.
  await loadOidcLibrary((m) => logged.push(m))
  expect(logged.length).toBeLessThanOrEqual(1)
  warn.mockRestore()
})
