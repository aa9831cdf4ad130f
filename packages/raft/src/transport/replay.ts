/**
 * Refuses a signed peer request seen before. Each sender numbers its requests `<boot>.<seq>` (a random
 * boot id per process, then 1, 2, 3…), so instead of remembering every nonce the receiver keeps, per
 * sender and boot, the highest sequence number and which of the last `window` numbers it has seen
 * (IPsec's anti-replay window). Memory is bounded by the number of live senders, not the request rate.
 * Requests far behind the highest number are refused too: a sender never has that many in flight.
 * A sender unheard of for `ttlMs` (at least twice the accepted clock skew, so its timestamps have
 * expired) is forgotten: its old requests are refused by their timestamp from then on.
 */
export class ReplayGuard {
  private readonly senders = new Map<string, { top: number; seen: Set<number>; lastMs: number }>();
  private accepted = 0;

  constructor(private readonly ttlMs: number, private readonly window = 4096) {}

  /** True the first time `seq` of `sender` (e.g. `3/9f2c…`) is offered; false for a replay. */
  accept(sender: string, seq: number, now: number): boolean {
    if (++this.accepted % 1024 === 0) this.sweep(now);
    let s = this.senders.get(sender);
    if (!s) {
      s = { top: 0, seen: new Set(), lastMs: now };
      this.senders.set(sender, s);
    }
    if (seq <= s.top - this.window || s.seen.has(seq)) return false;
    s.seen.add(seq);
    s.lastMs = now;
    if (seq > s.top) {
      // forget the numbers that just fell out of the window (at most `window` of them)
      for (let n = s.top - this.window + 1; n <= Math.min(seq - this.window, s.top); n++) s.seen.delete(n);
      s.top = seq;
    }
    return true;
  }

  /** senders remembered (tests, metrics) */
  get size(): number {
    return this.senders.size;
  }

  private sweep(now: number): void {
    for (const [key, s] of this.senders) if (now - s.lastMs > this.ttlMs) this.senders.delete(key);
  }
}
