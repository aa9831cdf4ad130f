import { unavailable } from '@strata/store';

/**
 * Bounds the password hashing running at once. scrypt runs on libuv's thread pool (4 threads), which
 * LevelDB and file I/O share: 60 simultaneous logins held every thread and an unrelated request's
 * latency rose from 6 ms to 5 s. At most `concurrency` hashes run; up to `queueLimit` more wait in
 * arrival order; beyond that `run` refuses at once (503 with Retry-After) instead of queueing forever.
 */
export class HashGate {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly concurrency: number, private readonly queueLimit: number) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running < this.concurrency) {
      this.running++;
    } else {
      if (this.waiting.length >= this.queueLimit) {
        throw unavailable('Too many logins are being checked right now; retry shortly.', 'unavailable', 1);
      }
      // the slot is handed over by the finishing hash (running stays the same)
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}
