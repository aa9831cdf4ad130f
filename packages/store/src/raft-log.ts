/**
 * The command log of a cluster: one Raft group per shard. `RaftCommandLog` is the CommandLog the server
 * proposes to; `RaftApplier` is the Raft state machine that feeds committed entries to Strata's
 * StateMachine (commands are applied; no-op and membership entries only advance the applied index,
 * and membership entries also keep the member list and the removed node ids in the replicated state).
 */
import {
  ClosedError, ConfChangeError, decodeConf, GroupResetError, HostStoppedError, NoQuorumError, NotLeaderError, OverloadedError, ProposalDroppedError, TransferInProgressError,
  type AppliedEntry, type ConfState, type RaftGroup, type RaftStateMachine, type SnapshotPoint, type SnapshotReader, type SnapshotWriter,
} from '@strata/raft';
import type { CommandLog, LogStatus } from './command-log';
import type { Command } from './commands';
import type { BatchEntry, CommandAnswer } from './state-machine';
import type { StateDb } from './db';
import { StrataError, conflict, notFound, unavailable, type ErrorDetail } from './errors';
import { jsonCopy } from './json-copy';

/** What RaftApplier needs from Strata's StateMachine. */
export interface ReplicatedState {
  readonly db: StateDb;
  appliedIndex(): number;
  appliedTerm(): number;
  apply(index: number, command: Command, term: number): Promise<unknown>;
  applyBatch(entries: readonly BatchEntry[]): Promise<unknown[]>;
  snapshot(out: SnapshotWriter): Promise<SnapshotPoint>;
  restore(image: SnapshotReader): Promise<void>;
  reset(): Promise<void>;
}

/** Replicated membership facts, kept in the meta sublevel by membership entries. */
export interface ClusterMeta {
  /** the membership as of the last applied membership entry (null before the group's first) */
  members: ConfState | null;
  /** node ids once removed: never members again (a reused id would carry another node's stale log) */
  removed: number[];
}

const MEMBERS_KEY = 'cluster_members';
const REMOVED_KEY = 'cluster_removed';

export async function readClusterMeta(db: StateDb): Promise<ClusterMeta> {
  return {
    members: ((await db.meta.get(MEMBERS_KEY)) as ConfState | undefined) ?? null,
    removed: ((await db.meta.get(REMOVED_KEY)) as number[] | undefined) ?? [],
  };
}

/** Pure: the removed ids after a membership change from `prev` to `next`. */
export function removedAfter(prev: ConfState | null, next: ConfState, removed: number[]): number[] {
  if (!prev) return removed;
  const now = new Set([...next.voters, ...next.learners]);
  const gone = [...prev.voters, ...prev.learners].filter((id) => !now.has(id) && !removed.includes(id));
  return gone.length ? [...removed, ...gone].sort((a, b) => a - b) : removed;
}

/** The Raft state machine of one shard: Strata's StateMachine behind Raft's interface. */
export class RaftApplier implements RaftStateMachine {
  private meta: ClusterMeta = { members: null, removed: [] };

  private constructor(readonly state: ReplicatedState) {}

  static async open(state: ReplicatedState): Promise<RaftApplier> {
    const a = new RaftApplier(state);
    a.meta = await readClusterMeta(state.db);
    return a;
  }

  clusterMeta(): ClusterMeta {
    return this.meta;
  }

  /** A Ready's committed entries, applied in one batch where the state machine can (StateMachine.applyBatch). */
  async apply(entries: AppliedEntry[]): Promise<unknown[]> {
    let meta = this.meta;
    const batch: BatchEntry[] = entries.map((e) => {
      // the proposer's own copy of the command (json-copy.ts: exactly what parsing the bytes gives), or the bytes parsed
      if (e.kind === 'command') return { index: e.index, term: e.term, command: (e.proposed as Command | undefined) ?? (JSON.parse(e.data.toString('utf8')) as Command) };
      if (e.kind === 'membership') {
        const next = decodeConf(e.data);
        meta = { members: next, removed: removedAfter(meta.members, next, meta.removed) };
        return { index: e.index, term: e.term, command: null, meta: { [MEMBERS_KEY]: meta.members, [REMOVED_KEY]: meta.removed } };
      }
      return { index: e.index, term: e.term, command: null };
    });
    const results = await this.state.applyBatch(batch);
    this.meta = meta;
    return results;
  }

  async snapshot(out: SnapshotWriter): Promise<SnapshotPoint> {
    return this.state.snapshot(out);
  }

  async restore(s: SnapshotPoint, image: SnapshotReader): Promise<void> {
    await this.state.restore(image);
    if (this.state.appliedIndex() !== s.index) throw new Error(`snapshot image says applied ${this.state.appliedIndex()}, its metadata ${s.index}`);
    this.meta = await readClusterMeta(this.state.db);
  }

  appliedIndex(): number {
    return this.state.appliedIndex();
  }

  /** The replica is wiped (RaftHost.resetGroup): no state, no membership. */
  async reset(): Promise<void> {
    await this.state.reset();
    this.meta = { members: null, removed: [] };
  }
}

/** A 503 that also names the leader (when known), so a caller can forward instead. */
export class NotLeaderStrataError extends StrataError {
  constructor(readonly leaderId: number | null, message: string) {
    super('no_leader', message, undefined, 1);
  }
}

/**
 * A write refused or dropped because leadership moved before it committed: nothing was stored, so the
 * whole request may run again on the new leader (the node does so itself, cluster/forward.ts).
 */
export class NotStoredError extends StrataError {
  /** the response header that tells another node (and a client) that nothing was stored */
  static readonly HEADER = 'x-strata-not-stored';
  constructor(message = 'The leader changed before the write committed (it was not stored); retry.', details?: ErrorDetail[]) {
    super('no_leader', message, details, 1);
  }
}

/**
 * Raft's errors as the contract's, decided on their classes and typed fields: every "cannot commit now"
 * is a 503 with Retry-After; a membership change naming a node that is not a member is 404, any other
 * refused change 409.
 */
export function fromRaftError(err: unknown): unknown {
  if (err instanceof StrataError) return err;
  if (err instanceof NotLeaderError) {
    return new NotLeaderStrataError(err.leaderId, err.leaderId ? `This node is not the leader of the shard (node ${err.leaderId} is); retry.` : 'No leader is known for the shard right now (election in progress or no quorum); retry shortly.');
  }
  if (err instanceof NoQuorumError) return unavailable(`The write was not committed in time (no quorum or leader change); its outcome is unknown: retry with the same Idempotency-Key.`, 'no_leader');
  if (err instanceof ProposalDroppedError || err instanceof TransferInProgressError) return new NotStoredError();
  if (err instanceof GroupResetError) return unavailable('This node no longer holds the shard (its replica was wiped); retry on another node.');
  if (err instanceof ClosedError) return unavailable('The node is shutting down; retry on another node.');
  if (err instanceof HostStoppedError) return unavailable('This node stopped serving after a storage or apply failure (its log says which; it serves again once restarted); retry on another node.');
  if (err instanceof OverloadedError) return unavailable('Too many writes are waiting to commit in this shard; retry shortly (nothing was stored).', 'overloaded');
  if (err instanceof ConfChangeError) {
    return err.reason === 'unknown_node' ? notFound(err.message) : conflict(err.message);
  }
  return err;
}

function roleOf(role: string): LogStatus['role'] {
  if (role === 'leader' || role === 'follower' || role === 'candidate') return role;
  return role === 'pre_candidate' ? 'candidate' : 'follower';
}

/** CommandLog over a Raft group: propose resolves once the command is committed and applied here. */
export class RaftCommandLog implements CommandLog {
  private closed = false;

  constructor(private current: RaftGroup, readonly applier: RaftApplier) {}

  /** The shard's Raft group on this node: replaced when its replica is wiped and opened again blank (replaceGroup). */
  get group(): RaftGroup {
    return this.current;
  }

  replaceGroup(group: RaftGroup): void {
    this.current = group;
  }

  async propose<C extends Command>(command: C): Promise<CommandAnswer<C['type']>> {
    if (this.closed) throw unavailable('The node is shutting down; retry on another node.');
    try {
      // The log carries the command's JSON; this node applies a copy that is exactly what parsing
      // that JSON gives (and the JSON is written from the copy), instead of parsing it back. A command
      // JSON would change (an undefined field, a Date...) is parsed back, as the other replicas do.
      const copy = jsonCopy(command);
      const data = Buffer.from(JSON.stringify(copy ?? command), 'utf8');
      // The applier returns what the state machine answered for this very command.
      return (await this.group.propose(data, copy)).result as CommandAnswer<C['type']>;
    } catch (err) {
      throw fromRaftError(err);
    }
  }

  async readBarrier(): Promise<void> {
    try {
      await this.group.readBarrier();
    } catch (err) {
      throw fromRaftError(err);
    }
  }

  isLeader(): boolean {
    return !this.closed && this.group.isLeader();
  }

  leaderId(): number | null {
    return this.group.leaderId();
  }

  status(): LogStatus {
    const s = this.group.status();
    const learner = s.members.some((m) => m.id === s.nodeId && !m.voter);
    return { role: learner ? 'learner' : roleOf(s.role), term: s.term, leader: s.leader, commit_index: s.commitIndex, applied_index: s.appliedIndex };
  }

  /** The host closes the groups; this only stops new proposals. */
  async close(): Promise<void> {
    this.closed = true;
  }
}
