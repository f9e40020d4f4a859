// The stores of the `scale` group (docs/performance.md#scale): a core store of a given size
// written straight from SQL (generate_series), on PostgreSQL or in an embedded (PGlite)
// data directory, with the core's own schema (migrations.ts) and rows as the core writes
// them. Reusable on its own: `seedScale({ databaseUrl }, scaleSizes.M)` fills any empty
// database (the export/import tool makes its M store this way).
//
// Distributions: entries spread over authors and keywords by a bounded power law whose
// exponent is chosen so that the top keyword holds 5 % of all entries and the top author
// 1 %; one entry in ten replies to one of the 100 entries before it; one in a hundred
// carries photos; one entry a second, the newest now, so a window of hours or days holds
// as many entries at every size from M up; about 2 stars an entry, more on recent ones;
// about 5 follows a user (popular users followed more) and one keyword follow; and one
// heavy follower, `heavy`, following 1,000 users and 100 keywords spread over the ranks.
import pg from 'pg'
import { migrate, openDb, type Db } from '../../src/common/sql.js'
import { coreSchema, migrations, rebuildKeywordSuffixesSql } from '../../src/core/store/migrations.js'

export interface ScaleSize {
  name: 'S' | 'M' | 'L'
  entries: number
  users: number
  keywords: number
}

export const scaleSizes: Record<ScaleSize['name'], ScaleSize> = {
  S: { name: 'S', entries: 100_000, users: 1_000, keywords: 1_000 },
  M: { name: 'M', entries: 1_000_000, users: 100_000, keywords: 100_000 },
  L: { name: 'L', entries: 10_000_000, users: 1_000_000, keywords: 1_000_000 },
}

/** Bumped when the seeded rows change; a kept store with another version is seeded again. */
export const scaleSeedVersion = 2

/** Shares of all entries held by the top keyword and the top author. */
const topKeywordShare = 0.05
const topAuthorShare = 0.01

export const heavyFollower = 'heavy'
export const heavyFollows = { users: 1_000, keywords: 100 }

/** What a measurement needs to know of a seeded store. */
export interface ScaleFixture {
  size: ScaleSize
  seedVersion: number
  /** Seconds the seeding took (the one that made the store, when it was kept from before). */
  seedSeconds: number
  /** The newest entry's ID and the lowest seeded ID. */
  firstId: string
  lastId: string
  topKeyword: string
  rareKeyword: string
  topAuthor: string
  /** A substring of keywords for keywords/list?word=, held by as many keywords at every size (substringOf). */
  substring: string
  /** How many keywords hold it. */
  substringMatches: number
}

/**
 * The exponent s of a power law over ranks 1…n (continuous, on [1, n+1)) whose rank 1
 * holds `share` of the draws: (2^(1-s) - 1) / ((n+1)^(1-s) - 1) = share, by bisection.
 */
export function powerLawExponent(n: number, share: number): number {
  const first = (s: number) => (Math.abs(1 - s) < 1e-9 ? Math.log(2) / Math.log(n + 1) : (2 ** (1 - s) - 1) / ((n + 1) ** (1 - s) - 1))
  let lo = 0.001
  let hi = 5
  for (let i = 0; i < 100; i++) {
    const mid = (lo + hi) / 2
    if (first(mid) < share) lo = mid
    else hi = mid
  }
  return (lo + hi) / 2
}

/** Anything that runs SQL: a pg client on PostgreSQL, a Db on PGlite. */
interface Runner {
  query(sql: string, params?: unknown[]): Promise<unknown>
  rows<T>(sql: string, params?: unknown[]): Promise<T[]>
}

const syllables = ['ka', 'ki', 'ku', 'ke', 'ko', 'sa', 'shi', 'su', 'se', 'so', 'ta', 'chi', 'tsu', 'te', 'to', 'na', 'ni', 'nu', 'ne', 'no', 'ha', 'hi', 'fu', 'he', 'ho', 'ma', 'mi', 'mu', 'me', 'mo', 'ya', 'yu', 'yo', 'ra', 'ri', 'ru', 're', 'ro', 'wa', 'ga', 'gi', 'gu', 'ge', 'go', 'za', 'ji']

/** The keyword of rank `i` (1 to 46^4 - 1): syllables spelling i in base 46, so words differ and share substrings. */
export function keywordOf(i: number): string {
  let word = ''
  let n = i
  do {
    word += syllables[n % syllables.length]
    n = Math.floor(n / syllables.length)
  } while (n > 0)
  return word
}

/**
 * Functions of the seeding session (pg_temp): a uniform draw in [0, 1) from (g, salt); a
 * power-law rank; the keyword of a rank, as keywordOf spells it.
 */
const sessionFunctions = [
  `CREATE FUNCTION pg_temp.u(g bigint, salt int) RETURNS float8 LANGUAGE sql IMMUTABLE AS
   $$ SELECT (hashint8(g * 64 + salt)::bigint & 2147483647)::float8 / 2147483648.0 $$`,
  `CREATE FUNCTION pg_temp.rank(u float8, n int, s float8) RETURNS int LANGUAGE sql IMMUTABLE AS
   $$ SELECT least(n, floor(power(1 + u * (power(n + 1.0, 1 - s) - 1), 1 / (1 - s)))::int) $$`,
  `CREATE FUNCTION pg_temp.word(i int) RETURNS text LANGUAGE sql IMMUTABLE AS
   $$ SELECT ${[0, 1, 2, 3].map((d) => `CASE WHEN i >= ${syllables.length ** d} THEN (ARRAY['${syllables.join("','")}'])[(i / ${syllables.length ** d}) % ${syllables.length} + 1] ELSE '' END`).join(' || ')} $$`,
]

/** The tables whose secondary indexes are dropped while rows go in, and made again after. */
const bulkTables = ['entries', 'stars', 'user_follows', 'keyword_follows', 'keywords']

async function seedRows(run: Runner, size: ScaleSize, log: (line: string) => void): Promise<void> {
  const { entries: n, users, keywords } = size
  const sKeyword = powerLawExponent(keywords, topKeywordShare)
  const sAuthor = powerLawExponent(users, topAuthorShare)
  const step = async (what: string, sql: string, params: unknown[] = []) => {
    const t = performance.now()
    await run.query(sql, params)
    log(`    ${what}: ${((performance.now() - t) / 1000).toFixed(1)} s`)
  }
  for (const f of sessionFunctions) await run.query(f)
  // Triggers (the maintained counts, the foreign keys) are off while rows go in; the
  // counts are set once at the end, and every reference is made valid by construction.
  await run.query(`SET session_replication_role = replica`)
  const indexes = await run.rows<{ name: string; def: string }>(
    `SELECT i.indexname AS name, i.indexdef AS def FROM pg_indexes i
     WHERE i.schemaname = 'kigo_core' AND i.tablename = ANY ($1::text[])
       AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)`,
    [bulkTables],
  )
  for (const i of indexes) await run.query(`DROP INDEX kigo_core.${i.name}`)
  await step(`${users} users`, `INSERT INTO kigo_core.users (id, name) SELECT 'user' || i, 'Scale User ' || i FROM generate_series(1, $1::int) i
     UNION ALL SELECT $2, 'Heavy Follower'`, [users, heavyFollower])
  await step(`${keywords} keywords`, `INSERT INTO kigo_core.keywords (word) SELECT pg_temp.word(i) FROM generate_series(1, $1::int) i UNION ALL SELECT 'kigo scale'`, [keywords])
  // The keywords' suffix index (migration 4) is kept by a trigger, which is off here.
  await step('keyword suffixes', rebuildKeywordSuffixesSql)
  const base = Number((await run.rows<{ base: string }>(`SELECT nextval('kigo_core.entry_ids')::text AS base`))[0]!.base) - 1
  // Entry g has ID base + g; its author and keyword are functions of g, so a reply can
  // name the author of the entry it replies to without reading it.
  const author = (g: string) => `'user' || pg_temp.rank(pg_temp.u(${g}, 1), $2::int, $3::float8)`
  await step(
    `${n} entries`,
    `INSERT INTO kigo_core.entries (id, author, keyword, body, source, deployment, in_reply_to_status_id, in_reply_to_user_id, has_photos, created_at)
     SELECT $1::bigint + g, ${author('g')}, pg_temp.word(pg_temp.rank(pg_temp.u(g, 2), $4::int, $5::float8)),
            'scale entry ' || g || ': a short line of text about the season, as most entries are',
            'kigo scale', 'domestic',
            CASE WHEN r THEN $1::bigint + g - 1 - t END,
            CASE WHEN r THEN ${author('g - 1 - t')} END,
            g % 100 = 37,
            now() - ($6::bigint - g) * interval '1 second'
     FROM (SELECT g, g % 10 = 5 AND g > 101 AS r, (pg_temp.u(g, 3) * 100)::int AS t FROM generate_series(1, $6::bigint) g) x`,
    [base, users, sAuthor, keywords, sKeyword, n],
  )
  await run.query(`SELECT setval('kigo_core.entry_ids', $1::bigint)`, [base + n])
  // About 2 stars an entry: the newest get about 4, the oldest none; each by a distinct user.
  await step(
    'stars',
    `INSERT INTO kigo_core.stars (entry_id, user_id, created)
     SELECT $1::bigint + g, 'user' || ((g * 7919 + j * 104729) % $2::int + 1), now() - ($3::bigint - g) * interval '1 second'
     FROM generate_series(1, $3::bigint) g, generate_series(1, floor(4.0 * g / $3::bigint + pg_temp.u(g, 4))::int) j
     WHERE j <= least(4, $2::int / 104729 + 4)`,
    [base, users, n],
  )
  await step(
    'follows',
    `INSERT INTO kigo_core.user_follows (follower, followee)
     SELECT DISTINCT 'user' || i, 'user' || f FROM (
       SELECT i, pg_temp.rank(pg_temp.u(i * 8 + j, 5), $1::int, $2::float8) AS f FROM generate_series(1, $1::int) i, generate_series(1, 5) j) x
     WHERE f <> i`,
    [users, sAuthor],
  )
  await step(
    'keyword follows',
    `INSERT INTO kigo_core.keyword_follows (user_id, word)
     SELECT 'user' || i, pg_temp.word(pg_temp.rank(pg_temp.u(i, 6), $2::int, $3::float8)) FROM generate_series(1, $1::int) i`,
    [users, keywords, sKeyword],
  )
  await step(
    'the heavy follower',
    `WITH a AS (INSERT INTO kigo_core.user_follows (follower, followee)
       SELECT $1, 'user' || (1 + (i - 1) * ($2::int / $3::int)) FROM generate_series(1, least($3::int, $2::int)) i)
     INSERT INTO kigo_core.keyword_follows (user_id, word)
     SELECT $1, pg_temp.word(1 + (i - 1) * ($4::int / $5::int)) FROM generate_series(1, least($5::int, $4::int)) i`,
    [heavyFollower, users, heavyFollows.users, keywords, heavyFollows.keywords],
  )
  await step(
    'counts',
    `WITH f AS (SELECT followee, count(*)::int AS n FROM kigo_core.user_follows GROUP BY followee)
     UPDATE kigo_core.users u SET followers_count = f.n FROM f WHERE f.followee = u.id`,
  )
  await step(
    'keyword counts',
    `WITH e AS (SELECT keyword, count(*)::int AS n FROM kigo_core.entries GROUP BY keyword),
          f AS (SELECT word, count(*)::int AS n FROM kigo_core.keyword_follows GROUP BY word)
     UPDATE kigo_core.keywords k SET entry_count = coalesce(e.n, 0), followers_count = coalesce(f.n, 0)
     FROM kigo_core.keywords k2 LEFT JOIN e ON e.keyword = k2.word LEFT JOIN f ON f.word = k2.word WHERE k2.word = k.word`,
  )
  await run.query(`SET session_replication_role = DEFAULT`)
  for (const i of indexes) await step(`index ${i.name}`, i.def)
  await step('VACUUM ANALYZE', 'VACUUM ANALYZE')
}

const metaTable = 'kigo_core.scale_seed'

async function recorded(run: Runner): Promise<ScaleFixture | null> {
  const found = await run.rows<{ t: string | null }>(`SELECT to_regclass('${metaTable}')::text AS t`)
  if (!found[0]?.t) return null
  const rows = await run.rows<{ fixture: ScaleFixture }>(`SELECT fixture FROM ${metaTable}`)
  return rows[0]?.fixture ?? null
}

async function fixtureOf(run: Runner, size: ScaleSize, seedSeconds: number): Promise<ScaleFixture> {
  const ids = (await run.rows<{ lo: string; hi: string }>(`SELECT min(id)::text AS lo, max(id)::text AS hi FROM kigo_core.entries`))[0]!
  const top = (await run.rows<{ word: string }>(`SELECT word FROM kigo_core.keywords ORDER BY entry_count DESC, word LIMIT 1`))[0]!.word
  // A rare keyword: one with a handful of entries.
  const rare = (await run.rows<{ word: string }>(`SELECT word FROM kigo_core.keywords WHERE entry_count BETWEEN 2 AND 20 ORDER BY word LIMIT 1`))[0]?.word ?? keywordOf(size.keywords)
  const author = (await run.rows<{ author: string }>(`SELECT author FROM kigo_core.entries WHERE id > $1::bigint - 100000 GROUP BY author ORDER BY count(*) DESC LIMIT 1`, [ids.hi]))[0]!.author
  return { size, seedVersion: scaleSeedVersion, seedSeconds, firstId: ids.lo, lastId: ids.hi, topKeyword: top, rareKeyword: rare, topAuthor: author, substring: '', substringMatches: 0 }
}

/** How many keywords the substring of keywords/list?word= matches, unless told otherwise. */
export const substringMatches = 30

/**
 * A substring held by `matches` keywords at this size, or by as near that many as any
 * candidate: the group asks the larger sizes for as many as the smallest holds, so that
 * keywords/list?word= answers lists of one length at S and at L and its growth is the
 * store's, not the answer's. (The first version took the first five letters of one
 * keyword: one match at S, 42 at L; the second, any count from 20 to 40: 22 at S and 33 at
 * L, an answer half as long again.) The candidates are the substrings of keywords near the
 * end of the ranks.
 */
async function substringOf(run: Runner, size: ScaleSize, matches: number): Promise<{ substring: string; substringMatches: number }> {
  // Distinct words among the first 1,000 suffixes of the range: a short prefix held by
  // many keywords is counted no further.
  const count = async (text: string) =>
    Number((await run.rows<{ n: string }>(
      `SELECT count(DISTINCT word)::text AS n FROM (SELECT word FROM kigo_core.keyword_suffixes WHERE suffix >= $1 COLLATE "C" AND suffix < kigo_core.after_prefix($1) COLLATE "C" LIMIT 1000) s`, [text],
    ))[0]!.n)
  let best: { text: string; n: number; off: number } | null = null
  const tried = new Set<string>()
  for (let k = 7; k < 300; k++) {
    const word = keywordOf(size.keywords - k)
    for (let from = 0; from < word.length - 1; from++) {
      for (let length = 2; from + length <= word.length; length++) {
        const text = word.slice(from, from + length)
        if (tried.has(text)) continue
        tried.add(text)
        const n = await count(text)
        const off = Math.abs(n - matches)
        if (off === 0) return { substring: text, substringMatches: n }
        if (best === null || off < best.off) best = { text, n, off }
        // Longer ones are held by fewer still.
        if (n < matches) break
      }
    }
  }
  if (best === null || best.off > matches / 3) throw new Error(`no substring held by about ${matches} keywords at ${size.name}`)
  return { substring: best.text, substringMatches: best.n }
}

/** Migrates, seeds and records an empty store; a store already seeded at this version and size is kept as it is. */
async function seedInto(run: Runner, size: ScaleSize, log: (line: string) => void, matches: number): Promise<ScaleFixture> {
  const before = await recorded(run)
  if (before && before.seedVersion === scaleSeedVersion && before.size.name === size.name) {
    log(`  ${size.name}: kept from an earlier run (seeded in ${before.seedSeconds} s)`)
    return { ...before, ...(await substringOf(run, size, matches)) }
  }
  const started = performance.now()
  await seedRows(run, size, log)
  const fixture = { ...(await fixtureOf(run, size, Math.round((performance.now() - started) / 100) / 10)), ...(await substringOf(run, size, matches)) }
  await run.query(`CREATE TABLE ${metaTable} (fixture jsonb NOT NULL)`)
  await run.query(`INSERT INTO ${metaTable} (fixture) VALUES ($1::jsonb)`, [JSON.stringify(fixture)])
  return fixture
}

/** The core's migrations on the store `db`, so the rows go into the schema the core reads. */
async function migrated(db: Db): Promise<void> {
  await migrate(db, coreSchema, migrations)
}

/**
 * Seeds the PostgreSQL database `databaseUrl` (which must be empty or seeded by this
 * function) to `size`. Returns what the measurements need.
 */
export async function seedScale(target: { databaseUrl: string } | { dataDir: string }, size: ScaleSize, log: (line: string) => void = () => undefined, matches = substringMatches): Promise<ScaleFixture> {
  if ('databaseUrl' in target) {
    const db = await openDb({ databaseUrl: target.databaseUrl, dataDir: '', timeouts: { connectTimeoutMs: 10_000, statementTimeoutMs: 0 } })
    try {
      await migrated(db)
    } finally {
      await db.close()
    }
    const client = new pg.Client({ connectionString: target.databaseUrl, connectionTimeoutMillis: 10_000 })
    await client.connect()
    try {
      await client.query(`SET maintenance_work_mem = '256MB'`)
      await client.query(`SET synchronous_commit = off`)
      const run: Runner = {
        query: (sql, params) => client.query(sql, params),
        rows: async <T>(sql: string, params?: unknown[]) => (await client.query(sql, params)).rows as T[],
      }
      return await seedInto(run, size, log, matches)
    } finally {
      await client.end()
    }
  }
  const db = await openDb({ dataDir: target.dataDir, timeouts: { connectTimeoutMs: 10_000, statementTimeoutMs: 0 } })
  try {
    await migrated(db)
    return await seedInto({ query: (sql, params) => db.query(sql, params), rows: (sql, params) => db.query(sql, params) }, size, log, matches)
  } finally {
    await db.close()
  }
}
