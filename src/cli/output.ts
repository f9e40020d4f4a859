// Human-readable output of the kigo command: one record as aligned `key  value` lines,
// a list as an aligned table. (`--json` bypasses this and prints the API's body.)

/** A field of the admin API's records, which are flat (its response schemas). */
export type Field = string | number | boolean | null | undefined | string[]

function cell(value: Field): string {
  if (value === null || value === undefined) return '-'
  if (Array.isArray(value)) return value.join(',')
  return String(value)
}

/** `key  value` lines, values aligned. */
export function formatRecord(record: Record<string, Field>): string {
  const keys = Object.keys(record)
  const width = Math.max(0, ...keys.map((k) => k.length))
  return keys.map((k) => `${k.padEnd(width)}  ${cell(record[k])}`.trimEnd()).join('\n') + '\n'
}

/** A table with an upper-case header row; `empty` when there are no rows. */
export function formatTable<C extends string>(rows: Array<Record<C, Field>>, columns: C[], empty: string): string {
  if (rows.length === 0) return empty + '\n'
  const cells = [columns.map((c) => c.toUpperCase()), ...rows.map((r) => columns.map((c) => cell(r[c])))]
  const widths = columns.map((_, i) => Math.max(...cells.map((line) => line[i]!.length)))
  return cells.map((line) => line.map((v, i) => v.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n') + '\n'
}
