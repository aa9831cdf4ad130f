/**
 * One replica of the store simulator: a real LevelDB, the real StateMachine, behind the real
 * RaftApplier (the path a node's committed entries take). It applies entries of the shared committed
 * log, crashes (the database closed with entries logged but not applied) and restarts (the state machine
 * reloads its applied index from disk and the log is replayed after it, as RaftGroup.open does), and
 * installs a snapshot taken from another replica.
 */
import { BufferSnapshotWriter, bufferSnapshotReader, encodeConf, type AppliedEntry } from '@strata/raft';
import type { Command } from '../commands';
import { StateDb } from '../db';
import { RaftApplier } from '../raft-log';
import { decodeImage } from '../snapshot';
import { StateMachine } from '../state-machine';

/** An entry of the committed log, as the Raft driver hands it to the state machine. */
export type LogEntry = AppliedEntry & { command: Command | null };

export function commandEntry(index: number, term: number, command: Command): LogEntry {
  return { index, term, kind: 'command', data: Buffer.from(JSON.stringify(command), 'utf8'), command };
}

export function noopEntry(index: number, term: number): LogEntry {
  return { index, term, kind: 'noop', data: Buffer.alloc(0), command: null };
}

export function membershipEntry(index: number, term: number, voters: number[], learners: number[]): LogEntry {
  const addrs = Object.fromEntries([...voters, ...learners].map((id) => [id, `http://node-${id}:7400`]));
  return { index, term, kind: 'membership', data: Buffer.from(encodeConf({ voters, learners, addrs })), command: null };
}

/** Receives what a replica's apply of an index answered and the effects it reported to listeners. */
export type AnswerSink = (index: number, answer: unknown, replica: number, effects: unknown) => void;

export class Replica {
  private db: StateDb | null = null;
  private sm: StateMachine | null = null;
  private applier: RaftApplier | null = null;
  /** effects reported by the state machine's listener, by index, until catchUp hands them to the sink */
  private readonly effects = new Map<number, unknown>();

  constructor(
    readonly id: number,
    private readonly path: string,
    /** a planted fault for the simulator's own test: rewrites a command before this replica applies it */
    private readonly perturb: ((entry: LogEntry) => LogEntry) | null = null,
  ) {}

  get up(): boolean {
    return this.db !== null;
  }

  get state(): StateDb {
    if (!this.db) throw new Error(`replica ${this.id} is down`);
    return this.db;
  }

  applied(): number {
    if (!this.sm) throw new Error(`replica ${this.id} is down`);
    return this.sm.appliedIndex();
  }

  async open(): Promise<void> {
    this.db = await StateDb.open(this.path);
    this.sm = await StateMachine.open(this.db);
    // What derived indexes and side effects follow: it must be the same on every replica too.
    this.sm.onApplied((index, _command, _result, ...rest: unknown[]) => this.effects.set(index, rest[0]));
    this.applier = await RaftApplier.open(this.sm);
  }

  /** The process dies: nothing more is applied; what was applied is what its atomic batches wrote. */
  async crash(): Promise<void> {
    const db = this.db;
    this.db = this.sm = this.applier = null;
    await db?.close();
  }

  /**
   * Applies log entries after the applied index, up to `through`, in groups of 1..`maxGroup` (the
   * driver hands committed entries over in batches of any size).
   */
  async catchUp(log: readonly LogEntry[], through: number, sink: AnswerSink, groupSize: () => number = () => 1): Promise<number> {
    if (!this.applier) throw new Error(`replica ${this.id} is down`);
    let n = 0;
    while (this.applied() < through) {
      const from = this.applied(); // log[i] has index i + 1
      const group = log.slice(from, Math.min(through, from + Math.max(1, groupSize())));
      const entries = this.perturb ? group.map(this.perturb) : group;
      const results = await this.applier.apply(entries);
      results.forEach((r, i) => {
        const index = group[i].index;
        sink(index, r, this.id, this.effects.get(index));
        this.effects.delete(index);
      });
      n += group.length;
    }
    return n;
  }

  /** The image a leader would send (its whole state at its applied index), gathered from the pieces the state machine streams. */
  async snapshot(): Promise<{ index: number; term: number; data: Buffer }> {
    if (!this.applier) throw new Error(`replica ${this.id} is down`);
    const out = new BufferSnapshotWriter();
    const at = await this.applier.snapshot(out);
    return { ...at, data: out.bytes() };
  }

  /** Installs an image read back in pieces whose sizes `split` draws (records then span pieces, as they span file reads). */
  async install(s: { index: number; term: number; data: Buffer }, split?: () => number): Promise<void> {
    if (!this.applier) throw new Error(`replica ${this.id} is down`);
    await this.applier.restore(s, bufferSnapshotReader(s.data, 64 * 1024, split));
  }

  /**
   * A snapshot install the process did not finish: the old state cleared, part of the image written
   * (never the applied index, which restoreImage writes last), then a crash. Reopened, the replica must
   * read applied 0, so the node installs the snapshot again (RaftGroup.open: applied < snapshot index).
   */
  async tornInstall(s: { data: Buffer }, fraction: number): Promise<void> {
    const db = this.state;
    const late = new Set(['applied_index', 'applied_term'].map((k) => db.meta.prefix + k));
    const pairs = [...decodeImage(s.data)].filter(([k]) => !late.has(k.toString('utf8')));
    await db.level.clear();
    const part = pairs.slice(0, Math.floor(pairs.length * fraction));
    if (part.length) await db.level.batch(part.map(([key, value]) => ({ type: 'put' as const, key, value, keyEncoding: 'buffer', valueEncoding: 'buffer' })) as never);
    await this.crash();
  }
}
