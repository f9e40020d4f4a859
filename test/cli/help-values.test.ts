// `kigo help` names the values the operator API accepts (docs/operations.md#operator-command-line):
// each option that takes one of a closed list prints exactly the list the gateway checks.
import { describe, expect, it } from 'vitest'
import { main } from '../../src/cli/kigo.js'
import { auditKinds } from '../../src/gateway/audit/store.js'
import { usageSortKeys } from '../../src/gateway/operator/usage-report.js'
import { usageMethods } from '../../src/gateway/operator/usage-api.js'
import { legacyMethods } from '../../src/gateway/policy/types.js'

async function help(...words: string[]): Promise<string> {
  let stdout = ''
  const code = await main(['help', ...words], {}, { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: () => undefined } })
  expect(code).toBe(0)
  return stdout
}

/** The values `--name` is shown to take (`--name a|b|c`). */
function shownValues(text: string, name: string): string[] {
  const m = new RegExp(`--${name} ([a-z0-9_|]+)`).exec(text)
  return m ? m[1]!.split('|') : []
}

describe('kigo help', () => {
  it('audit --kind: every kind the audit trail records', async () => {
    expect(shownValues(await help('audit'), 'kind').sort()).toEqual([...auditKinds].sort())
  })

  it('usage --method, --sort and --order: what GET /admin/usage accepts; and --user, --client, --limit', async () => {
    const text = await help('usage')
    expect(shownValues(text, 'method').sort()).toEqual([...usageMethods].sort())
    expect(shownValues(text, 'sort').sort()).toEqual([...usageSortKeys].sort())
    expect(shownValues(text, 'order')).toEqual(['asc', 'desc'])
    for (const option of ['--user', '--client', '--limit', '--since', '--moved']) expect(text).toContain(option)
  })

  it('policy history --method: every method the policy governs', async () => {
    expect(shownValues(await help('policy', 'history'), 'method').sort()).toEqual([...legacyMethods].sort())
  })

  it('reads what it claims: a list left short is seen', () => {
    expect(shownValues('  kigo audit [--kind policy|user] [--target T]', 'kind')).toEqual(['policy', 'user'])
  })
})
