// Human-readable output of the kigo command: one record as aligned `key  value` lines,
// a list as an aligned table. (`--json` bypasses this and prints the API's body.)

function cell(value: unknown): string {
  if (value === null || value === undefined) return '-'
  if (Array.isArray(value)) return value.join(',')
  return String(value)
}

/** `key  value` lines, values aligned. */
export function formatRecord(record: Record<string, unknown>): string {
  const keys = Object.keys(record)
  const width = Math.max(0, ...keys.map((k) => k.length))
  return keys.map((k) => `${k.padEnd(width)}  ${cell(record[k])}`.trimEnd()).join('\n') + '\n'
}

/** A table with an upper-case header row; `empty` when there are no rows. */
export function formatTable(rows: Array<Record<string, unknown>>, columns: string[], empty: string): string {
  if (rows.length === 0) return empty + '\n'
  const cells = [columns.map((c) => c.toUpperCase()), ...rows.map((r) => columns.map((c) => cell(r[c])))]
  const widths = columns.map((_, i) => Math.max(...cells.map((line) => line[i]!.length)))
  return cells.map((line) => line.map((v, i) => v.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n') + '\n'
}
