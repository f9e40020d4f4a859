// Who may delete an entry (docs/api.md#statusesshow-and-statusesdestroy): its author, and the owner of the user keyword it
// was posted to (so an entry written on `id:X` can be removed by X).
import { userKeyword } from './keyword.js'

export function mayDelete(entry: { authorId: string; keyword: string }, requester: string): boolean {
  return requester === entry.authorId || entry.keyword === userKeyword(requester)
}
