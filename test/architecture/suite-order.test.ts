// The files test/sequencer.ts starts first exist: a renamed or removed one would silently
// fall back to vitest's order, and the suite would wait on it at its end again.
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'
import { startFirst } from '../sequencer.js'

it('names only files of the suite', () => {
  expect(startFirst.length).toBeGreaterThan(0)
  for (const name of startFirst) {
    expect(name, name).toMatch(/^test\/.+\.test\.ts$/)
    expect(existsSync(fileURLToPath(new URL(`../../${name}`, import.meta.url))), name).toBe(true)
  }
})
