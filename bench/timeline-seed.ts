// The store behind the timeline scenarios (docs/performance.md#the-groups-and-their-keys): at least `total` entries, most of
// them written by one INSERT … SELECT generate_series straight into PostgreSQL, since
// 100,000 posts through the gateway would take longer than the measurements. The rows
// are what the core itself writes (migrations.ts; createEntry of sql-content-store.ts):
// the authors' profile copies and both keywords (the entry's and its source) exist
// first, `has_photos` is false because no body links a photo, and the keywords are
// topics, not `id:` user keywords, so every entry is on the public timeline's partial
// index (`entries_public … WHERE keyword NOT LIKE 'id:%'`). Each entry has one of
// `authors` authors and `keywords` keywords, and one in ten replies to the entry before
// it, so a page of 20 renders several users and its replies query finds rows.
import pg from 'pg'

export interface TimelineSeedOptions {
  databaseUrl: string
  /** Entries in the store afterwards, counting those already there. */
  total: number
  authors?: number
  keywords?: number
}

export interface TimelineSeed {
  /** Entries in the store after seeding. */
  entries: number
  /** Entries this call inserted. */
  inserted: number
  deployment: string
  ms: number
}

export async function seedTimeline(opts: TimelineSeedOptions): Promise<TimelineSeed> {
  const authors = opts.authors ?? 200
  const keywords = opts.keywords ?? 100
  const started = performance.now()
  const client = new pg.Client({ connectionString: opts.databaseUrl, connectionTimeoutMillis: 3000 })
  await client.connect()
  try {
    // The deployment and source of the entries already posted through the gateway, so the
    // new ones are on the same public timeline and look like them.
    const model = await client.query<{ deployment: string; source: string }>('SELECT deployment, source FROM kigo_core.entries ORDER BY id LIMIT 1')
    const deployment = model.rows[0]?.deployment ?? 'domestic'
    const source = model.rows[0]?.source ?? 'kigo bench'
    const existing = Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM kigo_core.entries')).rows[0]!.n)
    const n = Math.max(0, opts.total - existing)
    if (n > 0) {
      await client.query('BEGIN')
      await client.query(
        `INSERT INTO kigo_core.users (id, name) SELECT 'benchwriter' || a, 'Bench Writer ' || a FROM generate_series(1, $1::int) a ON CONFLICT (id) DO NOTHING`,
        [authors],
      )
      await client.query(
        `INSERT INTO kigo_core.keywords (word)
         SELECT w FROM (SELECT 'benchtopic' || k AS w FROM generate_series(1, $1::int) k UNION SELECT $2::text) words
         ORDER BY w ON CONFLICT (word) DO NOTHING`,
        [keywords, source],
      )
      // IDs are taken from the core's sequence as one block (base+1 … base+n) so that a
      // reply can name the entry before it; the sequence then continues after the block.
      const base = Number((await client.query<{ base: string }>(`SELECT nextval('kigo_core.entry_ids') AS base`)).rows[0]!.base)
      await client.query(
        `INSERT INTO kigo_core.entries (id, author, keyword, body, source, deployment, in_reply_to_status_id, in_reply_to_user_id, has_photos, created_at)
         SELECT $1::bigint + g,
                'benchwriter' || (g % $3::int + 1),
                'benchtopic' || (g % $4::int + 1),
                'seeded timeline entry ' || g || ': a short line of text about nothing much, as most entries are',
                $5, $6,
                CASE WHEN g % 10 = 0 THEN $1::bigint + g - 1 END,
                CASE WHEN g % 10 = 0 THEN 'benchwriter' || ((g - 1) % $3::int + 1) END,
                false,
                now() - ($2::int - g) * interval '1 millisecond'
         FROM generate_series(1, $2::int) g`,
        [base, n, authors, keywords, source, deployment],
      )
      await client.query(`SELECT setval('kigo_core.entry_ids', $1::bigint)`, [base + n])
      await client.query('COMMIT')
      // Fresh statistics, as a store that grew to this size over time would have, so the
      // planner sees the table as it is.
      await client.query('ANALYZE kigo_core.entries, kigo_core.users, kigo_core.keywords')
    }
    return { entries: existing + n, inserted: n, deployment, ms: Math.round(performance.now() - started) }
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined)
    throw err
  } finally {
    await client.end()
  }
}
