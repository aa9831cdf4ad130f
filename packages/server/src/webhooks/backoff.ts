/**
 * When to try a failed delivery again: exponential backoff with jitter. The wait doubles per failed
 * attempt from `initialMs` up to `maxMs`, and is drawn uniformly from its upper half ("equal jitter"), so
 * it keeps growing while receivers coming back are not hit by every subscription at the same moment.
 */
export interface BackoffPolicy {
  initialMs: number;
  maxMs: number;
}

/** The wait after the `failures`-th failed attempt of a delivery (1 for the first failure). */
export function retryDelay(failures: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxMs, policy.initialMs * 2 ** Math.min(Math.max(0, failures - 1), 30));
  return Math.round(ceiling / 2 + (ceiling / 2) * random());
}
