// What the stores of registered clients share (src/gateway/registrations/lifecycle.ts): an
// owner's or the operator's edit of a registration's row, answered with the row before
// and after for the audit trail.
import type { Db } from '../../common/sql.js'

export interface RowEdit {
  /** The schema-qualified table and the column naming a registration. */
  table: string
  idColumn: string
  /** The columns read back (the same before and after). */
  columns: string
  id: string
  /** Assignments with $2, $3, … for `values` ($1 is the id). */
  set: string
  values: unknown[]
}

/**
 * The row locked and read first, so that the audit's "before" is the state this edit
 * replaced, then updated in the same transaction; null when there is no such row.
 */
export function editRow<R>(db: Db, e: RowEdit): Promise<{ before: R; after: R } | null> {
  return db.transaction(async (tx) => {
    const old = await tx.query<R>(`SELECT ${e.columns} FROM ${e.table} WHERE ${e.idColumn} = $1 FOR UPDATE`, [e.id])
    if (!old[0]) return null
    const rows = await tx.query<R>(`UPDATE ${e.table} SET ${e.set} WHERE ${e.idColumn} = $1 RETURNING ${e.columns}`, [e.id, ...e.values])
    return { before: old[0], after: rows[0]! }
  })
}
