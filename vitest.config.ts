import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Suites share one PostgreSQL and one Redis; each uses its own schema or key prefix.
    pool: 'forks',
    // Three files at a time. Most of the suite waits on processes it started, on sockets,
    // PostgreSQL and Redis, not on its own CPU: on a 2-core machine vitest's default (one
    // worker per core, less one) ran one file at a time. Measured on 2 cores: the whole suite
    // in 1,121 s with three workers while other work held a load average of 6 to 10, where
    // one worker took 1,556 s on a quiet machine (docs/development.md#running-the-tests).
    maxWorkers: 3,
    reporters: ['default'],
  },
})
