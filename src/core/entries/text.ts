// The `text` field of an Entry (docs/api.md#objects): the body alone on the author's own user
// keyword, `{keyword}={body}` everywhere else.
import { userKeyword } from './keyword.js'

export function entryText(entry: { keyword: string; body: string; authorId: string }): string {
  return entry.keyword === userKeyword(entry.authorId) ? entry.body : `${entry.keyword}=${entry.body}`
}
