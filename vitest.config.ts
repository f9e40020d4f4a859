import { defineConfig } from 'vitest/config'
import { LongFirstSequencer } from './test/sequencer.js'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // One blank embedded database, copied for each test that starts a store (test/helpers/embedded-template.ts).
    globalSetup: ['test/global-setup.ts'],
    // Each file leaves the worker's process as it found it (isolate: false below).
    setupFiles: ['test/file-hygiene.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Suites share one PostgreSQL and one Redis; each uses its own schema or key prefix.
    pool: 'forks',
    // A worker runs file after file in one process, loading kigo's modules once rather than
    // for each of some 200 files (a fifth of the suite's CPU time). Files share no state:
    // each starts and closes its own apps, stores, servers, timers and listeners
    // (docs/development.md#running-the-tests).
    isolate: false,
    // Three files at a time. Most of the suite waits on processes it started, on sockets,
    // PostgreSQL and Redis, not on its own CPU: on a 2-core machine vitest's default (one
    // worker per core, less one) ran one file at a time (docs/development.md#running-the-tests).
    maxWorkers: 3,
    sequence: { sequencer: LongFirstSequencer },
    reporters: ['default'],
  },
})
