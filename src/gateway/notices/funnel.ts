// The notices' funnel (docs/gateway.md#migration-notices): did telling people work? For
// each recipient of a method, from their first notice: moved (usage/moved.ts, the usage
// report's rule: every one of their clients seen with OAuth, OAuth 2.0 or OpenID Connect
// after its last legacy request; a site through its owner's own OpenID Connect clients),
// not moved, or too early to tell. Shown on the dashboard and by GET /admin/notices/funnel.
//
// Choices: a recipient moved when their last legacy request came (the move is known once
// a modern request follows it). "Moved within 7 (30) days" counts recipients who moved
// and whose last legacy request was within 7 (30) days of their first notice: a move is
// counted as soon as it is seen, so the 30-day column holds the 7-day one. A recipient who
// has not moved is "too early to tell" until 7 days after their notice, and "not moved"
// from then on; for the 30-day column, until 30 days. Silence is not moving, and neither
// is a refusal: a user the policy refuses is "not moved", with the date they were first
// refused.
import { movedRule, oauth1Rule, recipientMoved } from '../usage/moved.js'
import { oauth1Applications } from './oauth1.js'
import type { NoticeStore, RecipientRow } from './store.js'
import type { FunnelLine } from '../host/notices.js'

const dayMs = 86_400_000

/** A recipient who has not moved, a week or more after their first notice. */
export type { FunnelApplication, FunnelLine, NotMoved } from '../host/notices.js'

/** Recipients read per batch. */
const batch = 500

export async function noticeFunnel(store: Pick<NoticeStore, 'firstTold' | 'recipientRows' | 'modernRows' | 'oauth1Facts'>, now: number, listed = 50): Promise<FunnelLine[]> {
  const told = await store.firstTold()
  const methods = [...new Set(told.map((t) => t.method))].sort()
  const out: FunnelLine[] = []
  for (const method of methods) {
    const line: FunnelLine = { method, told: 0, moved7: 0, moved30: 0, moved: 0, notMoved: 0, refused: 0, tooEarly: 0, tooEarly30: 0, notMovedList: [] }
    const recipients = told.filter((t) => t.method === method)
    for (let i = 0; i < recipients.length; i += batch) {
      const part = recipients.slice(i, i + batch)
      const ids = part.map((t) => t.user)
      const [rows, modern] = await Promise.all([store.recipientRows(method, ids, 0), method === 'oauth1' ? Promise.resolve([]) : store.modernRows(method, ids)])
      // oauth1: an owner's row per application (notices/oauth1.ts), moved by the oauth1 rule.
      const apps = method === 'oauth1' ? oauth1Applications(rows, oauth1Rule(await store.oauth1Facts([...new Set(rows.map((r) => r.clientId ?? ''))]))) : null
      if (apps !== null) {
        line.applications ??= []
        for (const a of apps) {
          const count = (state: string) => a.tokens.filter((t) => t.state === state).length
          line.applications.push({ application: a.application, name: a.name, owner: a.owner, moved: a.moved, exchanged: count('exchanged'), authorizedAgain: count('authorized_again'), onOauth1: count('on_oauth1') })
        }
      }
      const appMoved = new Map(apps?.map((a) => [a.application, a.moved]) ?? [])
      const rule = movedRule(modern)
      const moved = (r: RecipientRow) => (apps !== null ? appMoved.get(r.clientId ?? '') === true : rule({ method, user: r.user, client: r.client, lastSeen: r.lastSeen, owner: r.recipient }))
      const byRecipient = new Map<string, RecipientRow[]>()
      for (const r of rows) {
        const own = byRecipient.get(r.recipient)
        if (own) own.push(r)
        else byRecipient.set(r.recipient, [r])
      }
      for (const t of part) {
        const own = byRecipient.get(t.user) ?? []
        line.told += 1
        const within = (days: number) => own.length > 0 && Math.max(...own.map((r) => r.lastSeen)) < t.toldAt + days * dayMs
        if (recipientMoved(own, moved)) {
          line.moved += 1
          if (within(7)) line.moved7 += 1
          if (within(30)) line.moved30 += 1
          continue
        }
        if (now < t.toldAt + 30 * dayMs) line.tooEarly30 += 1
        if (now < t.toldAt + 7 * dayMs) {
          line.tooEarly += 1
          continue
        }
        const refused = own.filter((r) => r.refusedByPolicy > 0)
        const refusedSince = refused.length === 0 ? null : Math.min(...refused.map((r) => r.firstRefused ?? r.lastSeen))
        line.notMoved += 1
        if (refusedSince !== null) line.refused += 1
        line.notMovedList.push({ user: t.user, toldAt: t.toldAt, refusedSince })
      }
    }
    line.notMovedList.sort((a, b) => a.toldAt - b.toldAt || a.user.localeCompare(b.user))
    line.notMovedList = line.notMovedList.slice(0, listed)
    line.applications?.sort((a, b) => b.onOauth1 - a.onOauth1 || a.name.localeCompare(b.name) || a.application.localeCompare(b.application))
    out.push(line)
  }
  return out
}
