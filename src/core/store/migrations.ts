// The core's schema `kigo_core` as numbered migrations (docs/operations.md#stored-data), applied at start-up
// by `migrate` of src/common/sql.ts. The same SQL runs on PGlite and on PostgreSQL.
// Statements end with `;` at a line end: that is where `migrate` splits them.
import type { Migration } from '../../common/sql.js'

export const coreSchema = 'kigo_core'

/** A keyword's suffixes are kept to this many characters: a longer substring is found by its first ones, then checked whole. */
export const keywordSuffixChars = 32

/**
 * Fills kigo_core.keyword_suffixes from the keywords: the migration that adds it, an import
 * (the table is derived, so it is rebuilt by the target's own lower(), not moved), and the
 * scale seed, whose bulk insert runs without triggers.
 */
export const rebuildKeywordSuffixesSql = `INSERT INTO kigo_core.keyword_suffixes (suffix, word)
SELECT s, k.word FROM kigo_core.keywords k, kigo_core.keyword_suffixes_of(k.word) s ORDER BY s COLLATE "C", k.word`

export const migrations: Migration[] = [
  {
    version: 1,
    name: 'users, keywords, entries, stars, photos',
    sql: `
CREATE TABLE kigo_core.users (
  id text PRIMARY KEY,
  name text NOT NULL,
  updated timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE kigo_core.keywords (
  word text PRIMARY KEY,
  created timestamptz NOT NULL DEFAULT now()
);

-- A sequence gives IDs that are unique and increasing across every core process
-- sharing one database (docs/api.md#objects); NO CYCLE keeps them from ever repeating.
CREATE SEQUENCE kigo_core.entry_ids AS bigint NO CYCLE;

-- in_reply_to_status_id has no foreign key: a reply keeps naming its target after the
-- target is deleted (docs/api.md#statusesshow-and-statusesdestroy).
CREATE TABLE kigo_core.entries (
  id bigint PRIMARY KEY DEFAULT nextval('kigo_core.entry_ids'),
  author text NOT NULL REFERENCES kigo_core.users (id),
  keyword text NOT NULL REFERENCES kigo_core.keywords (word),
  body text NOT NULL,
  source text NOT NULL,
  deployment text NOT NULL CHECK (deployment IN ('domestic', 'global')),
  in_reply_to_status_id bigint,
  in_reply_to_user_id text,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX entries_keyword_id ON kigo_core.entries (keyword, id DESC);

CREATE INDEX entries_author_id ON kigo_core.entries (author, id DESC);

CREATE INDEX entries_in_reply_to ON kigo_core.entries (in_reply_to_status_id) WHERE in_reply_to_status_id IS NOT NULL;

-- A star's user has no foreign key: anyone authenticated may star, including users
-- who never posted and so have no profile copy here.
CREATE TABLE kigo_core.stars (
  entry_id bigint NOT NULL REFERENCES kigo_core.entries (id) ON DELETE CASCADE,
  user_id text NOT NULL,
  created timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (entry_id, user_id)
);

CREATE INDEX stars_user ON kigo_core.stars (user_id);

CREATE SEQUENCE kigo_core.photo_ids AS bigint NO CYCLE;

-- Photo bytes live beside the entries so that every core process serves them (docs/api.md#photos).
CREATE TABLE kigo_core.photos (
  id bigint PRIMARY KEY DEFAULT nextval('kigo_core.photo_ids'),
  user_id text NOT NULL REFERENCES kigo_core.users (id),
  content_type text NOT NULL,
  ext text NOT NULL,
  title text NOT NULL DEFAULT '',
  folder text NOT NULL DEFAULT '',
  source text NOT NULL,
  deployment text NOT NULL CHECK (deployment IN ('domestic', 'global')),
  sha256 text NOT NULL,
  size integer NOT NULL CHECK (size >= 0),
  bytes bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX photos_user_id ON kigo_core.photos (user_id, id DESC);
`,
  },
  {
    version: 2,
    name: 'follows, keyword follows and relations, album and timeline indexes',
    sql: `
-- docs/api.md#users-and-follows: who follows whom. Both ends have a profile copy (the follower's is stored
-- by the follow itself).
CREATE TABLE kigo_core.user_follows (
  follower text NOT NULL REFERENCES kigo_core.users (id),
  followee text NOT NULL REFERENCES kigo_core.users (id),
  created timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (follower, followee),
  CHECK (follower <> followee)
);

CREATE INDEX user_follows_followee ON kigo_core.user_follows (followee, follower);

-- docs/api.md#keywords: keywords a user follows (part of the antenna, docs/api.md#timelines).
CREATE TABLE kigo_core.keyword_follows (
  user_id text NOT NULL REFERENCES kigo_core.users (id),
  word text NOT NULL REFERENCES kigo_core.keywords (word),
  created timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, word)
);

CREATE INDEX keyword_follows_word ON kigo_core.keyword_follows (word);

-- Relations are symmetric: both directions are stored, so either word finds the other
-- with one index lookup.
CREATE TABLE kigo_core.keyword_relations (
  word1 text NOT NULL REFERENCES kigo_core.keywords (word),
  word2 text NOT NULL REFERENCES kigo_core.keywords (word),
  PRIMARY KEY (word1, word2),
  CHECK (word1 <> word2)
);

-- The album (docs/api.md#timelines) lists entries that carry photos.
ALTER TABLE kigo_core.entries ADD COLUMN has_photos boolean NOT NULL DEFAULT false;

UPDATE kigo_core.entries SET has_photos = true WHERE body ~ '/photos/[^/ ]+/[0-9]+[.](jpg|png|gif|webp)';

-- The public timeline: a deployment's entries on keywords that are not user keywords,
-- newest first. The predicate is written the same way in the query, so the planner
-- uses this partial index.
CREATE INDEX entries_public ON kigo_core.entries (deployment, id DESC) WHERE keyword NOT LIKE 'id:%';

CREATE INDEX entries_album ON kigo_core.entries (id DESC) WHERE has_photos;

CREATE INDEX entries_album_keyword ON kigo_core.entries (keyword, id DESC) WHERE has_photos;

-- keywords/hot and sort=hot look at recent entries only.
CREATE INDEX entries_created_at ON kigo_core.entries (created_at);
`,
  },
  {
    version: 3,
    name: 'maintained counts, keyword substring index',
    sql: `
-- docs/performance.md#scale: counts a page shows (an author's followers, a keyword's
-- entries and followers) are kept up to date by triggers, so reading one is a key
-- lookup however many follows or entries there are. Bodies stay on one line: migrate
-- splits statements at a semicolon that ends a line.
ALTER TABLE kigo_core.users ADD COLUMN followers_count integer NOT NULL DEFAULT 0;

ALTER TABLE kigo_core.keywords ADD COLUMN entry_count integer NOT NULL DEFAULT 0;

ALTER TABLE kigo_core.keywords ADD COLUMN followers_count integer NOT NULL DEFAULT 0;

UPDATE kigo_core.users u SET followers_count = f.n
FROM (SELECT followee, count(*)::int AS n FROM kigo_core.user_follows GROUP BY followee) f WHERE f.followee = u.id;

UPDATE kigo_core.keywords k SET entry_count = e.n
FROM (SELECT keyword, count(*)::int AS n FROM kigo_core.entries GROUP BY keyword) e WHERE e.keyword = k.word;

UPDATE kigo_core.keywords k SET followers_count = f.n
FROM (SELECT word, count(*)::int AS n FROM kigo_core.keyword_follows GROUP BY word) f WHERE f.word = k.word;

-- Statement-level triggers over the transition tables: one update per user or keyword a
-- statement touches, however many rows it writes.
CREATE FUNCTION kigo_core.count_user_follows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN IF TG_OP = 'INSERT' THEN UPDATE kigo_core.users u SET followers_count = u.followers_count + d.n FROM (SELECT followee, count(*)::int AS n FROM new_rows GROUP BY followee) d WHERE u.id = d.followee; ELSE UPDATE kigo_core.users u SET followers_count = u.followers_count - d.n FROM (SELECT followee, count(*)::int AS n FROM old_rows GROUP BY followee) d WHERE u.id = d.followee; END IF; RETURN NULL; END
$$;

CREATE TRIGGER user_follows_count_insert AFTER INSERT ON kigo_core.user_follows
REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION kigo_core.count_user_follows();

CREATE TRIGGER user_follows_count_delete AFTER DELETE ON kigo_core.user_follows
REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION kigo_core.count_user_follows();

CREATE FUNCTION kigo_core.count_keyword_follows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN IF TG_OP = 'INSERT' THEN UPDATE kigo_core.keywords k SET followers_count = k.followers_count + d.n FROM (SELECT word, count(*)::int AS n FROM new_rows GROUP BY word) d WHERE k.word = d.word; ELSE UPDATE kigo_core.keywords k SET followers_count = k.followers_count - d.n FROM (SELECT word, count(*)::int AS n FROM old_rows GROUP BY word) d WHERE k.word = d.word; END IF; RETURN NULL; END
$$;

CREATE TRIGGER keyword_follows_count_insert AFTER INSERT ON kigo_core.keyword_follows
REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION kigo_core.count_keyword_follows();

CREATE TRIGGER keyword_follows_count_delete AFTER DELETE ON kigo_core.keyword_follows
REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION kigo_core.count_keyword_follows();

CREATE FUNCTION kigo_core.count_keyword_entries() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN IF TG_OP IN ('DELETE', 'UPDATE') THEN UPDATE kigo_core.keywords k SET entry_count = k.entry_count - d.n FROM (SELECT keyword, count(*)::int AS n FROM old_rows GROUP BY keyword) d WHERE k.word = d.keyword; END IF; IF TG_OP IN ('INSERT', 'UPDATE') THEN UPDATE kigo_core.keywords k SET entry_count = k.entry_count + d.n FROM (SELECT keyword, count(*)::int AS n FROM new_rows GROUP BY keyword) d WHERE k.word = d.keyword; END IF; RETURN NULL; END
$$;

CREATE TRIGGER entries_keyword_count_insert AFTER INSERT ON kigo_core.entries
REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION kigo_core.count_keyword_entries();

CREATE TRIGGER entries_keyword_count_delete AFTER DELETE ON kigo_core.entries
REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION kigo_core.count_keyword_entries();

CREATE TRIGGER entries_keyword_count_update AFTER UPDATE ON kigo_core.entries
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION kigo_core.count_keyword_entries();

-- keywords/list: by entry count without a filter; with one, a substring of the
-- lower-cased word through a trigram index (docs/api.md#keywords).
CREATE INDEX keywords_entry_count ON kigo_core.keywords (entry_count DESC, word);

CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE INDEX keywords_word_trgm ON kigo_core.keywords USING gin (lower(word) gin_trgm_ops);
`,
  },
  {
    version: 4,
    name: 'keyword suffixes for substring search',
    sql: `
-- keywords/list?word= (docs/performance.md#keyword-search): every suffix of each keyword's
-- lower-cased word, cut to ${keywordSuffixChars} characters, so that a substring is the prefix of a suffix and
-- found by one range of this key. The trigram index it replaces cost as much as its
-- trigrams' lists were long, and those grow with the number of keywords. Byte order
-- (COLLATE "C") makes a prefix one range.
CREATE TABLE kigo_core.keyword_suffixes (
  suffix text COLLATE "C" NOT NULL,
  word text NOT NULL,
  PRIMARY KEY (suffix, word)
);

CREATE FUNCTION kigo_core.keyword_suffixes_of(word text) RETURNS SETOF text LANGUAGE sql IMMUTABLE STRICT AS $$
SELECT DISTINCT left(substr(lower(word), i), ${keywordSuffixChars}) FROM generate_series(1, length(lower(word))) i
$$;

-- The first string after every string that starts with p, in byte order (p lower-cased and
-- cut as suffixes are): p with its last character one code point up, skipping the
-- surrogates, and with trailing U+10FFFF dropped first; after only U+10FFFF, a string
-- longer than any suffix.
CREATE FUNCTION kigo_core.after_prefix(p text) RETURNS text LANGUAGE sql IMMUTABLE STRICT AS $$
SELECT CASE WHEN t = '' THEN repeat(chr(1114111), ${keywordSuffixChars + 1})
  ELSE left(t, -1) || chr(CASE ascii(right(t, 1)) WHEN 55295 THEN 57344 ELSE ascii(right(t, 1)) + 1 END) END
FROM (SELECT rtrim(p, chr(1114111)) AS t) x
$$;

CREATE FUNCTION kigo_core.index_keyword_suffixes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO kigo_core.keyword_suffixes (suffix, word) SELECT s, n.word FROM new_rows n, kigo_core.keyword_suffixes_of(n.word) s; RETURN NULL; END
$$;

CREATE TRIGGER keywords_suffixes_insert AFTER INSERT ON kigo_core.keywords
REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION kigo_core.index_keyword_suffixes();

${rebuildKeywordSuffixesSql};

DROP INDEX kigo_core.keywords_word_trgm;
`,
  },
  {
    version: 5,
    name: 'the version of each profile copy',
    sql: `
-- docs/gateway.md#registered-users-in-the-core: the gateway sends every registered user
-- with the version of their name, raised by each change; a copy takes a name only from a
-- higher version, so two sends that cross keep the newer. 0: made by a request, never sent.
ALTER TABLE kigo_core.users ADD COLUMN name_version bigint NOT NULL DEFAULT 0;
`,
  },
]
