// The soak's accounting (docs/operations.md#reliability): every write in the ledger
// (load.ts) against what the store holds once the run is over.
// - acknowledged (200): the entry, star, follow or keyword follow exists exactly once; an
//   acknowledged delete's entry is gone. Otherwise the write is lost.
// - refused (an answer that says nothing was done): nothing of it is in the store, neither
//   the entry nor a photo without its entry. Otherwise it was half-applied.
// - in doubt (no answer, 502, 504, the core's 503): it may or may not be there, once at most.
// A text entry is found by the unique marker in its text, a photo entry by its image's
// SHA-256 and its ID.
import pg from 'pg'
import type { Write } from './load.js'

export interface Accounting {
  acknowledged_writes: number
  refused_writes: number
  in_doubt_writes: number
  lost_writes: number
  duplicated_writes: number
  /** Refused writes found (wholly or partly) in the store. */
  half_applied_writes: number
  /** Up to 20 examples of each failure, for the report. */
  examples: { lost: string[]; duplicated: string[]; half_applied: string[] }
}

export async function account(databaseUrl: string, writes: readonly Write[]): Promise<Accounting> {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    const markers = new Map<string, string[]>()
    for (const r of (await client.query<{ id: string; body: string }>(`SELECT id::text AS id, body FROM kigo_core.entries WHERE body LIKE 'entry soak-%'`)).rows) {
      const m = /soak-[0-9a-f]{16}/.exec(r.body)
      if (m) markers.set(m[0], [...(markers.get(m[0]) ?? []), r.id])
    }
    const entryIds = new Set((await client.query<{ id: string }>('SELECT id::text AS id FROM kigo_core.entries')).rows.map((r) => r.id))
    const photos = new Map<string, number>()
    for (const r of (await client.query<{ sha256: string; n: string }>('SELECT sha256, count(*) AS n FROM kigo_core.photos GROUP BY sha256')).rows) photos.set(r.sha256, Number(r.n))
    const pairs = {
      star: new Set((await client.query<{ k: string }>(`SELECT user_id || ' ' || entry_id::text AS k FROM kigo_core.stars`)).rows.map((r) => r.k)),
      follow: new Set((await client.query<{ k: string }>(`SELECT follower || ' ' || followee AS k FROM kigo_core.user_follows`)).rows.map((r) => r.k)),
      keyword_follow: new Set((await client.query<{ k: string }>(`SELECT user_id || ' ' || word AS k FROM kigo_core.keyword_follows`)).rows.map((r) => r.k)),
    }

    const a: Accounting = { acknowledged_writes: 0, refused_writes: 0, in_doubt_writes: 0, lost_writes: 0, duplicated_writes: 0, half_applied_writes: 0, examples: { lost: [], duplicated: [], half_applied: [] } }
    const note = (list: string[], what: string) => {
      if (list.length < 20) list.push(what)
    }
    const lost = (what: string) => {
      a.lost_writes++
      note(a.examples.lost, what)
    }
    const duplicated = (what: string) => {
      a.duplicated_writes++
      note(a.examples.duplicated, what)
    }
    const halfApplied = (what: string) => {
      a.half_applied_writes++
      note(a.examples.half_applied, what)
    }
    // Entries whose delete was acknowledged or is in doubt: their absence is no loss.
    const deleted = new Set<string>()
    const maybeDeleted = new Set<string>()
    for (const w of writes) {
      if (w.kind !== 'delete') continue
      if (w.outcome === 'acknowledged') deleted.add(w.entryId)
      else if (w.outcome === 'in_doubt') maybeDeleted.add(w.entryId)
    }
    // Pairs some write acknowledged or left in doubt: a refused repeat of them finds them there.
    const pairOk = new Set<string>()
    for (const w of writes) if ((w.kind === 'star' || w.kind === 'follow' || w.kind === 'keyword_follow') && w.outcome !== 'refused') pairOk.add(`${w.kind} ${w.user} ${w.target}`)

    for (const w of writes) {
      if (w.outcome === 'acknowledged') a.acknowledged_writes++
      else if (w.outcome === 'refused') a.refused_writes++
      else a.in_doubt_writes++
      if (w.kind === 'entry') {
        const count = w.photo ? (photos.get(w.marker) ?? 0) : (markers.get(w.marker)?.length ?? 0)
        const what = `${w.photo ? 'photo entry' : 'entry'} ${w.marker}${w.id ? ` (id ${w.id})` : ''}`
        if (w.outcome === 'acknowledged') {
          const gone = deleted.has(w.id!) || maybeDeleted.has(w.id!)
          if (count > 1) duplicated(`${what}: ${count} times`)
          else if (!gone && (count === 0 || !entryIds.has(w.id!))) lost(what)
        } else if (w.outcome === 'refused') {
          if (count > 0) halfApplied(`${what} was refused yet stored`)
        } else if (count > 1) duplicated(`${what}: ${count} times`)
      } else if (w.kind === 'delete') {
        const present = entryIds.has(w.entryId)
        if (w.outcome === 'acknowledged' && present) lost(`delete of ${w.entryId}: still there`)
        else if (w.outcome === 'refused' && !present) halfApplied(`delete of ${w.entryId} was refused yet applied`)
      } else {
        const present = pairs[w.kind].has(`${w.user} ${w.target}`)
        const what = `${w.kind} ${w.user} → ${w.target}`
        if (w.outcome === 'acknowledged' && !present) lost(what)
        else if (w.outcome === 'refused' && present && !pairOk.has(`${w.kind} ${w.user} ${w.target}`)) halfApplied(`${what} was refused yet stored`)
      }
    }
    return a
  } finally {
    await client.end()
  }
}

/**
 * How long a fault's recovery is waited for: ten times the run's own start of the apps, and
 * at least a minute. A recovery restarts what a start starts, so a machine busy with other
 * work stretches both alike; a recovery beyond this is one that does not come.
 */
export function recoveryLimitSeconds(startSeconds: number): number {
  return Math.max(60, Math.ceil(10 * startSeconds))
}
