#!/usr/bin/env node
// The kigo operator command (docs/operations.md#operator-command-line). The code is src/cli/kigo.ts, compiled by `npm run build`.
let cli
try {
  cli = await import('../dist/src/cli/kigo.js')
} catch (err) {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('cli/kigo.js')) {
    process.stderr.write('kigo: not built yet; run "npm run build" first\n')
    process.exit(1)
  }
  throw err
}
process.exitCode = await cli.main(process.argv.slice(2), process.env, process)
