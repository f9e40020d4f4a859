// The API reference's error table (docs/api.md#errors) against the error catalogue
// (errorCodes in src/common/errors.ts), both ways: every code kigo may send is in the
// table, in one row, and the table names no code the catalogue lacks.
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { errorCodes } from '../../src/common/errors.js'

const apiMd = readFileSync(fileURLToPath(new URL('../../docs/api.md', import.meta.url)), 'utf8')

/** The rows of the table whose header is `| status | codes | when |`: each row's status cell and codes. */
function errorTable(markdown: string): Array<{ status: string; codes: string[] }> {
  const lines = markdown.split('\n')
  const start = lines.findIndex((l) => /^\|\s*status\s*\|\s*codes\s*\|\s*when\s*\|$/.test(l.trim()))
  if (start < 0) return []
  const rows: Array<{ status: string; codes: string[] }> = []
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break
    const cells = line.split('|').slice(1, -1).map((c) => c.trim())
    rows.push({ status: cells[0]!, codes: [...cells[1]!.matchAll(/`([a-z0-9_]+)`/g)].map((m) => m[1]!) })
  }
  return rows
}

describe('docs/api.md#errors', () => {
  const rows = errorTable(apiMd)
  const documented = rows.flatMap((r) => r.codes)

  it('is found, with a row per status', () => {
    expect(rows.map((r) => r.status)).toEqual(expect.arrayContaining(['400', '401', '403', '404', '408', '413', '429', '500', '503']))
  })

  it('lists every code of the catalogue', () => {
    expect(errorCodes.filter((code) => !documented.includes(code))).toEqual([])
  })

  it('lists no code the catalogue lacks, and each code once', () => {
    expect(documented.filter((code) => !(errorCodes as readonly string[]).includes(code))).toEqual([])
    expect(documented.filter((code, i) => documented.indexOf(code) !== i)).toEqual([])
  })

  it('is read as the test claims: a code left out of a table, or one made up, is seen', () => {
    const table = '| status | codes | when |\n|---|---|---|\n| 400 | `bad_request`, `made_up_code` | x |\n\nafter'
    expect(errorTable(table)).toEqual([{ status: '400', codes: ['bad_request', 'made_up_code'] }])
  })
})
