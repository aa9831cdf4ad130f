/**
 * How long a write looks for a shard's leader: `cluster.forward_timeout_ms`, counted from the first
 * attempt, and counted afresh after a definite "not stored" answer (NotStoredError: leadership moved
 * before the write committed), at most `MAX_NOT_STORED_RENEWALS` times per write.
 *
 * Why afresh: a leader that loses leadership with a proposal in flight rejects it as not stored only
 * once the *new* leader has committed an entry at its index, that is after an election. On a busy
 * machine that wait alone may last the whole forward timeout, and a bound counted from the first
 * attempt then ran out exactly when a leader existed again and the write was known to be safe to send
 * again: the write (an import's chunk, a forwarded request) failed with 503 "not stored; retry"
 * (issue 25). The answer is news that a leader exists now, so looking for it gets its own bound.
 * Capped: a write whose leader changes that many times in a row gives up (each renewal needs an
 * election), so the time a write takes stays bounded.
 */

/** A write dropped by this many leader changes in a row gives up (503) rather than look again. */
export const MAX_NOT_STORED_RENEWALS = 3;

export class LeaderDeadline {
  private until: number;
  private renewed = 0;

  constructor(private readonly timeoutMs: number, private readonly maxRenewals = MAX_NOT_STORED_RENEWALS) {
    this.until = Date.now() + timeoutMs;
  }

  /** The time (ms since the epoch) after which no further attempt starts. */
  get at(): number {
    return this.until;
  }

  passed(): boolean {
    return Date.now() >= this.until;
  }

  /** How many "not stored" answers started the bound afresh so far. */
  get renewals(): number {
    return this.renewed;
  }

  /**
   * A definite "not stored" answer arrived: the bound starts again from now, unless the renewals are
   * used up (false: the bound stays as it was).
   */
  renew(): boolean {
    if (this.renewed >= this.maxRenewals) return false;
    this.renewed++;
    this.until = Date.now() + this.timeoutMs;
    return true;
  }
}
