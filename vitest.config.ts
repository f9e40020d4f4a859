import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Suites share one PostgreSQL and one Redis; each uses its own schema or key prefix.
    pool: 'forks',
    reporters: ['default'],
  },
})
