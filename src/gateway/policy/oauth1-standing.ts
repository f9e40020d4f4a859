// What a user is told on their account page about the applications they authorized while
// OAuth 1.0a is being retired (docs/gateway.md#oauth-10a-as-a-legacy-method): the users
// of an application get no mail (its owner must change its code), so the page says which
// of their applications uses a method being retired, and when, in policyOutlook's words
// for that user and application (an exception for either counts).
import { effectiveState } from './evaluate.js'
import { policyOutlook } from './outlook.js'
import type { MethodPolicy } from './types.js'

/** Whether OAuth 1.0a is being retired at `now`: not allowed, or a change away from allow scheduled. */
export const oauth1Retiring = (policy: MethodPolicy, now: number): boolean =>
  effectiveState(policy, now) !== 'allow' || policy.schedule.some((e) => e.state !== 'allow' && Date.parse(e.from) > now)

/**
 * The line for each of `user`'s authorized applications (by consumer key) while OAuth 1.0a
 * is being retired; null while it is not.
 */
export function oauth1Standing(policy: MethodPolicy, now: number, user: string): ((consumerKey: string) => string) | null {
  if (!oauth1Retiring(policy, now)) return null
  return (application) => {
    const outlook = policyOutlook(policy, now, { user, application, client: () => '' })
    return `This application signs its requests with OAuth 1.0a, which is being retired: ${outlook.summary} Its developer has been told; once it moves to OAuth 2.0 you may be asked to authorize it again.`
  }
}
