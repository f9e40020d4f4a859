// Mail budgets (docs/security.md#mail-on-demand): how many mails of one kind a key (a user,
// a recipient address) may cause within a window. The counters live in the gateway's
// store, so every gateway spends from the same budget; taking one is a single statement
// (an upsert that counts only while under the limit), so two gateways cannot both take
// the last one.
import type { Db } from '../../common/sql.js'

/** A budget: at most `limit` mails per `windowSeconds` for each key. */
export interface MailAllowance {
  limit: number
  windowSeconds: number
}

export class MailBudget {
  constructor(
    private readonly db: Db,
    /** Called with the mail's kind whenever a budget refuses one (kigo_mail_budget_refusals_total). */
    private readonly onRefusal: (kind: string) => void = () => {},
  ) {}

  /**
   * Takes one mail of `kind` from the budget of every key, in order: true when each had
   * one left. A key that refuses stops the rest (the keys before it keep what they spent).
   */
  async take(kind: string, keys: readonly string[], allowance: MailAllowance, now: number): Promise<boolean> {
    const at = new Date(now).toISOString()
    const ends = new Date(now + allowance.windowSeconds * 1000).toISOString()
    for (const key of keys) {
      const rows = await this.db.query<{ spent: number }>(
        `INSERT INTO kigo_gateway.mail_budgets (key, spent, window_ends) VALUES ($1, 1, $3)
         ON CONFLICT (key) DO UPDATE SET
           spent = CASE WHEN mail_budgets.window_ends <= $2 THEN 1 ELSE mail_budgets.spent + 1 END,
           window_ends = CASE WHEN mail_budgets.window_ends <= $2 THEN $3 ELSE mail_budgets.window_ends END
         WHERE mail_budgets.window_ends <= $2 OR mail_budgets.spent < $4
         RETURNING spent`,
        [`${kind}:${key}`, at, ends, allowance.limit],
      )
      if (rows.length === 0) {
        this.onRefusal(kind)
        return false
      }
    }
    return true
  }
}
