/**
 * Failed-login throttle: after `maxAttempts` failures from one client address within `windowMs`,
 * that address is refused until the window since its first counted failure has passed. Per node, in
 * memory (a login attempt is not state worth replicating).
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

  recordFailure(address: string): void {
    const recent = this.recent(address);
    recent.push(this.now());
    this.failures.set(address, recent);
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
