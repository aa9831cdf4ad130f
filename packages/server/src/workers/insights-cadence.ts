/**
 * When a user's insights (L2) are planned: a plain function over plain data.
 *
 * Planning a user's insights reads all of the user's units, edges and vectors and compares the units
 * pairwise, whatever changed; its command is applied on every replica. Planned after every batch, a
 * live trickle (a few events per user per batch, the shard idle between batches) paid that for each
 * event: the largest per-event cost of consolidation in issue 27's profile. So a user whose memory
 * changed is planned once the change settles, and at most once per interval:
 *   - when its memory has been unchanged for `quietMs` and the shard has no backlog (a conversation
 *     that paused: its insights follow soon after), and no sooner than `intervalMs` after its last
 *     planning (a user who keeps talking is planned on a cadence, not per batch);
 *   - in any case once `maxDelayMs` passed since its first change (a never-idle shard, a user who
 *     never pauses: insights lag memory by at most that).
 * What the planning decides is not changed, only how often it runs.
 */

export interface InsightsCadence {
  /** the user's memory unchanged this long (and the shard's backlog drained) before planning */
  quietMs: number;
  /** at least this long between two plannings of one user (unless maxDelayMs forces one) */
  intervalMs: number;
  /** at most this long from a user's first change to its planning */
  maxDelayMs: number;
}

export const DEFAULT_INSIGHTS_CADENCE: InsightsCadence = { quietMs: 1000, intervalMs: 10_000, maxDelayMs: 60_000 };

/** A user's memory changes since its last insights: when the first and the latest happened (epoch ms). */
export interface InsightsChange {
  first: number;
  last: number;
}

/** Whether the user's insights are planned now (`lastPlanned`: when they last were, if known). */
export function insightsDueNow(change: InsightsChange, lastPlanned: number | undefined, now: number, shardIdle: boolean, cadence: InsightsCadence): boolean {
  if (now - change.first >= cadence.maxDelayMs) return true;
  if (!shardIdle || now - change.last < cadence.quietMs) return false;
  return lastPlanned === undefined || now - lastPlanned >= cadence.intervalMs;
}
