/**
 * Failed-login throttle: after `maxAttempts` failures from one client address within `windowMs`,
 * that address is refused until the window since its first counted failure has passed. Per node, in
 * memory (a login attempt is not state worth replicating).
 *
 * An attempt is counted as a failure when it starts (`attempt`), before its password hash is checked,
 * and forgiven only when it succeeds: otherwise N simultaneous guesses would all pass the check while
 * none of them had failed yet (30 concurrent wrong passwords were all answered 401 with a limit of 5).
 */
export class LoginThrottle {
  private readonly failures = new Map<string, number[]>();

  constructor(private readonly maxAttempts: number, private readonly windowMs: number, private readonly now: () => number = Date.now) {}

  /** Seconds until the address may try again, or 0 when it may try now. */
  retryAfter(address: string): number {
    const recent = this.recent(address);
    if (recent.length < this.maxAttempts) return 0;
    return Math.max(1, Math.ceil((recent[0] + this.windowMs - this.now()) / 1000));
  }

  /**
   * Counts an attempt from `address` now, as a failure until `recordSuccess` says otherwise. Returns 0
   * when the attempt may proceed, else the seconds to wait (the attempt is then not counted).
   */
  attempt(address: string): number {
    const wait = this.retryAfter(address);
    if (wait > 0) return wait;
    const recent = this.recent(address);
    recent.push(this.now());
    this.failures.set(address, recent);
    return 0;
  }

  /** Takes back the attempt `attempt` counted last, when it never got to check a password (server busy). */
  cancel(address: string): void {
    this.failures.get(address)?.pop();
  }

  recordSuccess(address: string): void {
    this.failures.delete(address);
  }

  private recent(address: string): number[] {
    const cutoff = this.now() - this.windowMs;
    const list = (this.failures.get(address) ?? []).filter((t) => t > cutoff);
    if (list.length === 0) this.failures.delete(address);
    else this.failures.set(address, list);
    return list;
  }
}
