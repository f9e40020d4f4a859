// How an entry's keyword is chosen (docs/api.md#statusesupdate rule 3). Pure: no HTTP, no storage.

/** The keyword every user owns: entries posted to it are that user's own diary. */
export function userKeyword(userId: string): string {
  return `id:${userId}`
}

export interface KeywordChoice {
  keyword: string
  /** The body to store: `status` without a `keyword=` prefix that named the keyword. */
  body: string
}

/**
 * docs/api.md#statusesupdate rule 3: the explicit `keyword` (trimmed) when non-empty; otherwise, when
 * `status` contains `=`, the part before the first `=` (trimmed, non-empty), removed with
 * the `=` from the body; otherwise the poster's user keyword.
 */
export function chooseKeyword(input: { keyword?: string | undefined; status?: string | undefined; poster: string }): KeywordChoice {
  const status = input.status ?? ''
  const explicit = input.keyword?.trim() ?? ''
  if (explicit !== '') return { keyword: explicit, body: status }
  const eq = status.indexOf('=')
  if (eq !== -1) {
    const prefix = status.slice(0, eq).trim()
    if (prefix !== '') return { keyword: prefix, body: status.slice(eq + 1) }
  }
  return { keyword: userKeyword(input.poster), body: status }
}
