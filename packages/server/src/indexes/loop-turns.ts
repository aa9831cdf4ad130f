/**
 * Turns of the event loop for the CPU-bound parts of concurrent requests (a retrieval's searches and
 * fusion): one holder at a time, first come first served, and once the holders of the current turn have
 * run for `budgetMs` the next one waits for a new turn of the loop, so the loop's other phases (timers
 * such as Raft ticks and heartbeats, sockets such as /livez and ingest requests) are served in between.
 *
 * Why: a query's searches and fusion are a few milliseconds of synchronous work. When several queries'
 * reads finished together, their continuations ran back to back in one phase of the loop, and anything
 * else waited for all of them (8 concurrent clients: up to 8 queries' worth). With turns, another
 * request waits for about `budgetMs` plus one query. The budget keeps throughput: a turn per query
 * (budget 0) made each query also wait for whatever else the loop runs per turn, and with background
 * work in slices (insight planning after a drain) queries/s fell by ten.
 *
 * An immediate queued from inside an immediate callback runs in the next turn (Node's documented
 * semantics), after timers and I/O.
 */
export class LoopTurns {
  private readonly waiting: (() => void)[] = [];
  private held = false;
  private scheduled = false;
  private turnStarted = -Infinity;

  constructor(readonly budgetMs = 8) {}

  /**
   * Resolves when the caller holds the turn, with the function that gives it back (call it exactly
   * once, also on failure: the next waiter waits for it).
   */
  enter(): Promise<() => void> {
    return new Promise((resolve) => {
      this.waiting.push(() => resolve(this.releaser()));
      this.pump();
    });
  }

  /** Waiters not yet holding the turn (how many queries wait for the CPU). */
  get queued(): number {
    return this.waiting.length;
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.held = false;
      this.pump();
    };
  }

  private pump(): void {
    if (this.held || this.waiting.length === 0) return;
    if (performance.now() - this.turnStarted < this.budgetMs) {
      this.grant(); // within the current turn's budget: no need to let the loop turn
      return;
    }
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (this.held || this.waiting.length === 0) return;
      this.turnStarted = performance.now();
      this.grant();
    });
  }

  private grant(): void {
    this.held = true;
    this.waiting.shift()!();
  }
}
