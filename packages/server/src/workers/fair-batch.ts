/**
 * Which pending events the consolidation worker takes next: plain functions over plain data.
 *
 * Fairness: the batch's slots are dealt round-robin, one event per user per round, over the users in
 * the order given (the worker rotates that order between ticks), so a user with a large backlog cannot
 * starve the others. Within a user, events go oldest first and never out of order: a correction must
 * be consolidated after the fact it corrects.
 *
 * Retries: an event that failed is retried alone (so one bad event cannot sink its neighbours) after a
 * backoff, and the user's later events wait behind it. After `maxAttempts` failures it is given up on.
 */
import type { PendingItem } from '@strata/store';

export interface UserQueue {
  user_id: string;
  /** the user's pending entries, oldest first */
  entries: PendingItem[];
}

export interface RetryState {
  attempts: number;
  /** epoch ms before which the event is not retried */
  retry_at: number;
  error: string;
}

export interface UserBatch {
  user_id: string;
  entries: PendingItem[];
}

export interface RetryPolicy {
  maxAttempts: number;
  /** wait after the first failure; multiplied by 4 after each further one */
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 3, baseDelayMs: 500, maxDelayMs: 10_000 };

/** The events of one user that may go into this tick's batch (before dealing slots). */
function eligible(queue: UserQueue, retries: ReadonlyMap<string, RetryState>, now: number): PendingItem[] {
  const first = queue.entries[0];
  if (!first) return [];
  const retry = retries.get(first.seq);
  if (retry) return retry.retry_at <= now ? [first] : [];
  const stop = queue.entries.findIndex((e) => retries.has(e.seq));
  return stop < 0 ? queue.entries : queue.entries.slice(0, stop);
}

/** Deals up to `batchSize` events round-robin over the users; one batch per user that got any, in queue order. */
export function pickFairBatch(queues: UserQueue[], batchSize: number, retries: ReadonlyMap<string, RetryState>, now: number): UserBatch[] {
  const candidates = queues.map((q) => eligible(q, retries, now));
  const taken = queues.map(() => 0);
  let slots = batchSize;
  for (let progress = true; slots > 0 && progress;) {
    progress = false;
    for (let i = 0; i < queues.length && slots > 0; i++) {
      if (taken[i] < candidates[i].length) {
        taken[i]++;
        slots--;
        progress = true;
      }
    }
  }
  return queues
    .map((q, i) => ({ user_id: q.user_id, entries: candidates[i].slice(0, taken[i]) }))
    .filter((b) => b.entries.length > 0);
}

/** The retry state of a failed batch's events after one more failure at `now`. */
export function noteFailure(
  retries: Map<string, RetryState>, entries: PendingItem[], error: string, now: number, policy: RetryPolicy = DEFAULT_RETRY_POLICY,
): { exhausted: PendingItem[] } {
  const exhausted: PendingItem[] = [];
  for (const e of entries) {
    const attempts = (retries.get(e.seq)?.attempts ?? 0) + 1;
    const delay = Math.min(policy.maxDelayMs, policy.baseDelayMs * 4 ** (attempts - 1));
    retries.set(e.seq, { attempts, retry_at: now + delay, error });
    if (attempts >= policy.maxAttempts) exhausted.push(e);
  }
  return { exhausted };
}

export function noteSuccess(retries: Map<string, RetryState>, entries: PendingItem[]): void {
  for (const e of entries) retries.delete(e.seq);
}
