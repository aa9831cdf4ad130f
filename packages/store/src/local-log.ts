import { Level } from 'level';
import type { CommandLog, LogStatus } from './command-log';
import type { Command } from './commands';
import { StrataError, unavailable } from './errors';
import { padIndex } from './keys';
import type { CommandAnswer, StateMachine } from './state-machine';

interface Waiter {
  command: Command;
  resolve: (result: unknown) => void;
  reject: (err: Error) => void;
}

/** Entries kept behind the applied index before they are dropped (the state machine holds their effect). */
const KEEP_BEHIND = 1000;
const MAX_BATCH = 512;

/**
 * An unreplicated command log for in-process use (tests of workers, indexes and apply; tools): an
 * append-only LevelDB log with group commit (many proposals, one synced write), applied in order to
 * the state machine; on open it replays entries that were logged but not yet applied. Nodes never use
 * it: even a single node runs a Raft group of one (RaftCommandLog).
 */
export class LocalLog implements CommandLog {
  private lastIndex = 0;
  private queue: Waiter[] = [];
  private flushing: Promise<void> | null = null;
  private closed = false;
  private broken: Error | null = null;
  private truncatedTo = 0;

  private constructor(private readonly db: Level<string, string>, private readonly sm: StateMachine) {}

  static async open(path: string, sm: StateMachine): Promise<LocalLog> {
    const db = new Level<string, string>(path, { valueEncoding: 'utf8' });
    await db.open();
    const log = new LocalLog(db, sm);
    for await (const key of db.keys({ reverse: true, limit: 1 })) log.lastIndex = Number(key);
    if (log.lastIndex < sm.appliedIndex()) {
      // Entries already applied were truncated away; the state machine is ahead of the surviving log.
      log.lastIndex = sm.appliedIndex();
    }
    for await (const [key, value] of db.iterator({ gt: padIndex(sm.appliedIndex()) })) {
      await sm.apply(Number(key), JSON.parse(value) as Command);
    }
    log.truncatedTo = sm.appliedIndex();
    return log;
  }

  propose<C extends Command>(command: C): Promise<CommandAnswer<C['type']>> {
    if (this.closed) return Promise.reject(unavailable('The node is shutting down; retry on another node.'));
    if (this.broken) return Promise.reject(this.broken);
    return new Promise<unknown>((resolve, reject) => {
      this.queue.push({ command, resolve, reject });
      this.kick();
    }) as Promise<CommandAnswer<C['type']>>; // the state machine answers the command's own type
  }

  /** Starts the flush loop unless it runs; when it ends with work queued meanwhile, starts it again. */
  private kick(): void {
    if (this.flushing) return;
    this.flushing = this.flushLoop()
      // The waiters already got the error; the node stays up to answer reads and report itself unready.
      .catch((err) => console.error(JSON.stringify({ level: 'fatal', msg: 'apply failed', err: String(err) })))
      .finally(() => {
        this.flushing = null;
        // A proposal that arrived after the loop's last check but before this cleanup would wait forever.
        if (this.queue.length > 0 && !this.broken && !this.closed) this.kick();
      });
  }

  async readBarrier(): Promise<void> {
    // Proposals resolve only after apply, so everything acknowledged is already applied here.
  }

  isLeader(): boolean {
    return !this.closed && !this.broken;
  }

  status(): LogStatus {
    return { role: 'leader', term: 1, leader: null, commit_index: this.lastIndex, applied_index: this.sm.appliedIndex() };
  }

  async close(): Promise<void> {
    this.closed = true;
    while (this.flushing) await this.flushing;
    await this.db.close();
  }

  private async flushLoop(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, MAX_BATCH);
      const first = this.lastIndex + 1;
      try {
        await this.db.batch(
          batch.map((w, i) => ({ type: 'put' as const, key: padIndex(first + i), value: JSON.stringify(w.command) })),
          { sync: true } as never,
        );
      } catch (err) {
        const error = unavailable(`The command log could not be written: ${(err as Error).message}`);
        batch.forEach((w) => w.reject(error));
        continue;
      }
      this.lastIndex = first + batch.length - 1;
      for (let i = 0; i < batch.length; i++) {
        try {
          batch[i].resolve(await this.sm.apply(first + i, batch[i].command));
        } catch (err) {
          // An apply that throws is a bug or a dead disk: the state machine can no longer follow the log.
          this.broken = new StrataError('internal', 'The state machine failed to apply a command.');
          for (const w of batch.slice(i)) w.reject(this.broken);
          for (const w of this.queue.splice(0)) w.reject(this.broken);
          throw err;
        }
      }
      await this.truncate();
    }
  }

  private async truncate(): Promise<void> {
    const upTo = this.sm.appliedIndex() - KEEP_BEHIND;
    if (upTo - this.truncatedTo < KEEP_BEHIND) return;
    await this.db.clear({ lte: padIndex(upTo) });
    this.truncatedTo = upTo;
  }
}
