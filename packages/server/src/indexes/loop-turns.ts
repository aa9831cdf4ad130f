/**
 * One waiter per turn of the event loop: `next()` resolves in a turn of its own, first come first
 * served, so the CPU-bound parts that follow it (a retrieval's search and fusion) run one per turn, with
 * the loop's other phases (timers such as Raft heartbeats and ticks, sockets such as /livez and ingest
 * requests) served between two of them.
 *
 * Why: a query's searches and fusion are a few milliseconds of synchronous work. When several queries'
 * reads finish together, their continuations ran back to back in one phase of the loop, and anything
 * else waited for all of them (8 concurrent clients: up to 8 queries' worth). Taking turns costs no
 * throughput (the thread is one either way), only a loop turn per query, and bounds what another request
 * waits for to about one query.
 *
 * An immediate queued from inside an immediate callback runs in the next turn (Node's documented
 * semantics), after timers and I/O: so each resolution schedules the next one from its own callback.
 */
export class LoopTurns {
  private readonly waiting: (() => void)[] = [];
  private scheduled = false;

  /** Resolves in a turn of the event loop that resolves no other waiter. */
  next(): Promise<void> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.schedule();
    });
  }

  /** Waiters not yet resolved (a gauge of how many queries are queued for the CPU). */
  get queued(): number {
    return this.waiting.length;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      const resolve = this.waiting.shift();
      // the next one in the next turn (queued from this callback), after the loop has served the rest
      if (this.waiting.length > 0) this.schedule();
      resolve?.();
    });
  }
}
