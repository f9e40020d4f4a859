// An audit event as people read it (the dashboard and `kigo audit`): what the action did,
// and for a change, only the fields that changed, each value whole (never cut mid-value).
// The default policy's `since` (the epoch: no change was ever made) reads "(default)".

export interface FieldChange {
  /** The field's path, e.g. `sunset` or `windows`. */
  field: string
  before: string
  after: string
}

const epoch = '1970-01-01T00:00:00Z'

/** A value as one line of JSON; absent values read "(none)", the epoch reads "(default)". */
export function valueText(value: unknown): string {
  if (value === undefined) return '(none)'
  if (value === epoch) return '(default)'
  return JSON.stringify(value) ?? 'null'
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The top-level fields that differ between before and after (a missing side counts as no fields). */
export function fieldChanges(before: unknown, after: unknown): FieldChange[] {
  if (!isRecord(before) && !isRecord(after)) {
    return JSON.stringify(before) === JSON.stringify(after) ? [] : [{ field: 'value', before: valueText(before ?? undefined), after: valueText(after ?? undefined) }]
  }
  const b = isRecord(before) ? before : {}
  const a = isRecord(after) ? after : {}
  return [...new Set([...Object.keys(b), ...Object.keys(a)])]
    .filter((k) => JSON.stringify(b[k]) !== JSON.stringify(a[k]))
    .map((k) => ({ field: k, before: valueText(b[k]), after: valueText(a[k]) }))
}

/** What an action did, in words: for actions that carry no before/after to compare, and for an owner's edits (their changed fields follow). */
const actionWords: Record<string, string> = {
  'user.reset_api_password': 'API password reset (the old one stops working)',
  'user.reset_password': 'sign-in password reset',
  // A rotation's fields say how long the old secret kept working (overlap_seconds, previous_secret_until).
  'app.rotate_secret': 'consumer secret rotated',
  'site.rotate_secret': 'login site secret rotated',
  'oidc_client.rotate_secret': 'OpenID Connect client secret rotated',
  'account.change_password': 'sign-in password changed',
  'account.reset_api_password': 'API password reset (the old one stops working)',
  'account.app_rotate_secret': 'consumer secret rotated',
  'account.revoke': 'access revoked',
  'account.reset_password_by_mail': 'sign-in password reset through the mailed link',
  'account.oidc_revoke': 'OpenID Connect site’s access revoked',
  'account.app_edit': 'application edited by its owner',
  'site.edit': 'login site edited by its owner',
  'oidc_client.edit': 'OpenID Connect client edited by its owner',
}

/** The event in one line: its verb, then `field: old -> new` for each changed field (a creation: the new fields). */
export function eventSummary(action: string, before: unknown, after: unknown): string {
  const words = actionWords[action]
  const changes = fieldChanges(before, after).map((c) => `${c.field}: ${c.before} -> ${c.after}`)
  if (words !== undefined) return [words, ...changes].join('; ')
  if (before === null && after === null) return action
  // A deletion is its verb alone (what was deleted stays in --json's `before`).
  if (after === null) return 'deleted'
  if (before === null) return ['created', ...changes].join('; ')
  return changes.length === 0 ? 'unchanged' : changes.join('; ')
}

/** The verb of an event for a list of field changes beside it ("created", "deleted", a reset), or null for a plain change. */
export function eventVerb(action: string, before: unknown, after: unknown): string | null {
  return actionWords[action] ?? (before === null && after === null ? action : before === null ? 'created' : after === null ? 'deleted' : null)
}
