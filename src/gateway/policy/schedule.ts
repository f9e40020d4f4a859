// One schedule per method, never contradicted by itself (docs/gateway.md#one-schedule).
// A change is what a write adds: the state set now (when it differs from the stored one)
// and each scheduled entry that was not there before. The entries that were already
// scheduled and would undo a change are replaced by it:
// - an entry after the change's instant whose state is less strict (allow < deprecate <
//   brownout < deny): a deny made now drops a pending brownout, deprecate or allow;
// - an entry of the same state, before or after it: `deny --from D` replaces the deny
//   scheduled earlier, and a deny made now the deny still pending;
// - an entry at the same instant as a new one.
// Entries earlier than the change and stricter than it stay. So the state goes back
// towards allow only where a write asks for it in so many words (a change to allow or
// deprecate, now or scheduled): never through an entry left over from before a stricter change.
import type { PolicyState } from './types.js'

/** allow < deprecate < brownout < deny: how much of the method each state refuses. */
export const strictness: Record<PolicyState, number> = { allow: 0, deprecate: 1, brownout: 2, deny: 3 }

export interface TimedState {
  state: PolicyState
  /** The instant, ms. */
  at: number
}

export interface ScheduleResolution<E extends TimedState> {
  /** The entries that stay, in time order. */
  kept: E[]
  /** The entries that were scheduled before this write and are dropped by it, in time order. */
  replaced: E[]
}

/**
 * The schedule after a write: `entries` (pending, in time order), of which `wasScheduled`
 * tells the ones stored before; `now` is the state set at `since`, a change when it is not
 * `previous` (the state stored before).
 */
export function resolveSchedule<E extends TimedState>(
  previous: PolicyState,
  now: TimedState,
  entries: readonly E[],
  wasScheduled: (e: E) => boolean,
): ScheduleResolution<E> {
  const changes: Array<TimedState & { scheduled: boolean }> = [
    ...(now.state !== previous ? [{ ...now, scheduled: false }] : []),
    ...entries.filter((e) => !wasScheduled(e)).map((e) => ({ state: e.state, at: e.at, scheduled: true })),
  ]
  const undoes = (old: E) => changes.some((c) =>
    c.state === old.state || (c.scheduled && c.at === old.at) || (c.at < old.at && strictness[old.state] < strictness[c.state]))
  const kept: E[] = []
  const replaced: E[] = []
  for (const e of entries) (wasScheduled(e) && undoes(e) ? replaced : kept).push(e)

  return { kept, replaced }
}
