/**
 * One Raft group on the driver side: the application's API (propose, readBarrier, membership,
 * transfer, status) over a core, and the glue that applies committed entries to the state machine.
 * The host's flush loop calls takeReady()/handleReady(); everything here runs on the event loop.
 */
import { invariant } from '../core/assert';
import { payloadBytes } from '../core/log';
import { RawNode } from '../core/raft';
import { EntryType, MsgType, type ConfChange, type Entry, type RaftConfig, type Ready, type Role } from '../core/types';
import { ConfChangeError, NoQuorumError, NotLeaderError, OverloadedError, ProposalDroppedError, RaftError } from '../errors';
import type { BatchOp, StoredGroup } from '../storage/level-storage';
import type { SnapshotFileWriter } from '../storage/snapshot-files';
import type { GroupHost } from './group-host';
import { entriesBytes, HeldPayloads } from './held-payloads';
import type { AppliedEntry, RaftStateMachine, SnapshotWriter } from './state-machine';

export interface GroupOptions {
  proposeTimeoutMs: number;
  readTimeoutMs: number;
  /** take a snapshot after this many applied entries */
  snapshotEvery: number;
  /**
   * or after this many bytes of applied entries, whichever comes first: the uncompacted log is held in
   * memory, and a few hundred large commands (consolidation batches with their vectors) are hundreds of
   * MiB long before they are 10,000 entries
   */
  snapshotEveryBytes: number;
  /** entries kept in the log behind a snapshot, so slightly lagging followers need no snapshot */
  compactionMargin: number;
  /** and their bytes at most (the oldest of the margin go first) */
  compactionMarginBytes: number;
  /** how long addNode waits for the learner to catch up */
  catchUpTimeoutMs: number;
  /**
   * Back-pressure: proposals waiting to commit at most, and their bytes at most. Beyond either, a
   * proposal is refused at once (OverloadedError) instead of queueing without bound behind a slow
   * disk or a lost quorum.
   */
  maxPendingProposals: number;
  maxPendingBytes: number;
  /**
   * Payload bytes of applied entries kept in memory, the newest (held-payloads.ts): older ones are read
   * from disk when a lagging follower needs them. The log's own bounds (snapshotEveryBytes,
   * compactionMarginBytes) still decide what is kept at all.
   */
  heldPayloadBytes: number;
}

export const DEFAULT_GROUP_OPTIONS: GroupOptions = {
  proposeTimeoutMs: 10_000,
  readTimeoutMs: 5_000,
  snapshotEvery: 10_000,
  snapshotEveryBytes: 64 * 1024 * 1024,
  compactionMargin: 2_000,
  compactionMarginBytes: 16 * 1024 * 1024,
  catchUpTimeoutMs: 60_000,
  maxPendingProposals: 8192,
  maxPendingBytes: 64 * 1024 * 1024,
  heldPayloadBytes: 8 * 1024 * 1024,
};

export interface ProposeResult {
  index: number;
  term: number;
  /** what the state machine's apply returned for this entry */
  result: unknown;
}

export interface MemberStatus {
  id: number;
  url: string | null;
  voter: boolean;
  /** the leader's view of the member's replicated index (null on followers, except for itself) */
  matchIndex: number | null;
}

export interface GroupStatus {
  groupId: number;
  nodeId: number;
  role: Role;
  term: number;
  leader: number | null;
  leaderUrl: string | null;
  commitIndex: number;
  appliedIndex: number;
  lastIndex: number;
  /**
   * The index of the membership in force (its entry; the snapshot's index once that entry was compacted
   * away). Committed when at most commitIndex: on a leader, every node it does not name was removed at
   * or before it (the placement loop asks such a node to drop its replica: docs/cluster.md "Disk reclaimed").
   */
  confIndex: number;
  members: MemberStatus[];
}

/**
 * What a group did since it was opened, for the application's metrics. Proposals and snapshots are
 * counted on the driver side (API calls, Readys); elections by the core where they happen (a Ready
 * reaches the driver after the role it carries is already visible); counting changes nothing in Raft.
 */
export interface GroupCounters {
  /** entries this node appended as leader through propose() */
  proposals: number;
  /** campaigns this node started (a new term with a vote for itself; leadership transfers included) */
  electionsStarted: number;
  /** times this node became leader */
  electionsWon: number;
  /** snapshot transfers this node began to a follower (first chunk handed to the transport) */
  snapshotsSent: number;
  /** snapshots received from a leader and restored into the state machine here */
  snapshotsInstalled: number;
}

/** Entries as the observer sees them: where they are in the log, and their payload (to read, never to change). */
export type EntryPosition = Pick<Entry, 'index' | 'term'> & { readonly data: Uint8Array };

/**
 * Hooks for tracing, called synchronously on the event loop. An observer sees; it cannot act: a hook
 * that throws is ignored, and nothing it returns is used.
 */
export interface GroupObserver {
  /** propose() appended an entry here (called inside propose(), so in the proposer's async context) */
  proposed?(index: number, term: number): void;
  /** committed entries about to be applied on this node, in log order */
  applying?(entries: readonly EntryPosition[]): void;
  /** the same entries, now applied (their proposers' promises resolve right after) */
  applied?(entries: readonly EntryPosition[]): void;
}

/** Size of the log this node holds (entries after the last compaction point). */
export interface LogSize {
  entries: number;
  /** bytes of the entries' payloads (what a follower that needs them all would be sent, give or take framing) */
  bytes: number;
  /** of which held in memory (the rest is read from disk when sent: heldPayloadBytes) */
  held: number;
}

interface Waiter {
  term: number;
  deadline: number;
  /** the proposal's size, counted in pendingBytes until it is answered */
  bytes: number;
  /** what the proposer gave beside the bytes (AppliedEntry.proposed) */
  local: unknown;
  resolve: (r: ProposeResult) => void;
  reject: (e: Error) => void;
}

interface ReadWaiter {
  index: number | null;
  deadline: number;
  resolve: (index: number) => void;
  reject: (e: Error) => void;
}

export class RaftGroup {
  private readonly waiters = new Map<number, Waiter>();
  /** bytes of the proposals in `waiters` (back-pressure) */
  private pendingBytes = 0;
  private readonly reads = new Map<number, ReadWaiter>();
  private readonly persistWaiters: (() => void)[] = [];
  private readonly stateWaiters: { check: () => boolean; deadline: number; resolve: () => void; reject: (e: Error) => void; timeoutError: () => Error }[] = [];
  private ctxSeq = 0;
  private failed: Error | null = null;
  private lastSnapshotIndex: number;
  /** payload bytes of the entries applied since the last snapshot was taken (or installed) */
  private bytesSinceSnapshot = 0;
  private snapshotting = false;
  /** handleReady is running: the state machine may be restoring or applying (no snapshot may start) */
  private inReady = false;
  /** the counters the driver keeps itself; elections are the core's (see `counters`) */
  private readonly own = { proposals: 0, snapshotsSent: 0, snapshotsInstalled: 0 };
  /** elections counted by the groups this one replaced in place (inheritFrom) */
  private readonly inherited = { electionsStarted: 0, electionsWon: 0 };
  private observer: GroupObserver | null = null;
  /** which applied entries keep their payloads in memory */
  private readonly payloads: HeldPayloads;

  private constructor(
    private readonly host: GroupHost,
    readonly groupId: number,
    private readonly sm: RaftStateMachine,
    readonly core: RawNode,
    private readonly opts: GroupOptions,
  ) {
    this.lastSnapshotIndex = core.snapshot?.meta.index ?? 0;
    this.bytesSinceSnapshot = this.bytesBetween(this.lastSnapshotIndex, core.applied);
    // the log read back at a restart: what was applied before it lets its payloads go at once
    this.payloads = new HeldPayloads(opts.heldPayloadBytes, core.log.offset);
    this.settlePayloads();
  }

  static async open(
    host: GroupHost,
    groupId: number,
    sm: RaftStateMachine,
    stored: StoredGroup,
    rcfg: Partial<RaftConfig> & Pick<RaftConfig, 'id' | 'random'>,
    options: Partial<GroupOptions>,
  ): Promise<RaftGroup> {
    if (stored.snapshot && sm.appliedIndex() < stored.snapshot.meta.index) {
      const s = stored.snapshot;
      await sm.restore({ index: s.meta.index, term: s.meta.term }, host.storage.snapshots.reader(groupId, s.meta, s.size));
    }
    const applied = sm.appliedIndex();
    invariant(applied >= stored.offset, () => `group ${groupId}: the state machine (applied ${applied}) is behind the compacted log (${stored.offset}) and there is no snapshot`);
    const core = new RawNode(rcfg, { ...stored, applied });
    return new RaftGroup(host, groupId, sm, core, { ...DEFAULT_GROUP_OPTIONS, ...options });
  }

  // ---------------------------------------------------------------- application API

  /**
   * Resolves once the entry is committed and applied here; NotLeaderError on a follower. `local`, if
   * given, is handed to this node's state machine with the entry (AppliedEntry.proposed) when it
   * applies it: it must stand for exactly `data`.
   */
  propose(data: Uint8Array, local?: unknown): Promise<ProposeResult> {
    if (this.failed) return Promise.reject(this.failed);
    invariant(data.byteLength > 0, 'a proposal needs data (empty entries are the no-ops of new terms)');
    if (this.waiters.size >= this.opts.maxPendingProposals || this.pendingBytes + data.byteLength > this.opts.maxPendingBytes) {
      // a proposal larger than the whole budget still goes alone, or it could never be made
      if (this.waiters.size > 0) return Promise.reject(new OverloadedError());
    }
    let pos: { index: number; term: number };
    try {
      pos = this.core.propose(data);
    } catch (e) {
      return Promise.reject(this.decorate(e));
    }
    this.own.proposals++;
    this.notify((o) => o.proposed?.(pos.index, pos.term));
    this.host.schedule();
    return this.waitEntry(pos.index, pos.term, this.opts.proposeTimeoutMs, data.byteLength, local);
  }

  /**
   * Linearizable read barrier (ReadIndex): resolves with a read index once this replica has applied
   * it, so state read locally afterwards reflects every write committed before the call.
   */
  readBarrier(): Promise<number> {
    if (this.failed) return Promise.reject(this.failed);
    const ctx = ++this.ctxSeq;
    if (!this.core.readIndex(ctx)) return Promise.reject(new NotLeaderError(null));
    this.host.schedule();
    return new Promise((resolve, reject) => {
      this.reads.set(ctx, { index: null, deadline: Date.now() + this.opts.readTimeoutMs, resolve, reject });
    });
  }

  /** Bootstraps a new group with these voters (idempotent: a node with any Raft state says so). */
  async initialize(members: { id: number; url: string }[]): Promise<'initialized' | 'already_initialized'> {
    invariant(members.length > 0 && members.every((m) => Number.isInteger(m.id) && m.id > 0), 'members need positive integer ids');
    const voters = [...new Set(members.map((m) => m.id))].sort((a, b) => a - b);
    const addrs: Record<number, string> = {};
    for (const m of members) addrs[m.id] = m.url;
    if (!this.core.bootstrap({ voters, learners: [], addrs })) return 'already_initialized';
    await this.waitPersisted();
    // The seed starts the first election at once instead of after a timeout, unless the timers got
    // there first while the entry was being synced (a node running longer than an election timeout
    // before it is initialized has its election timer long expired): then a leader is already known.
    if (voters[0] === this.host.nodeId && this.core.lead === 0 && this.core.role !== 'leader') {
      this.core.campaign();
      this.host.schedule();
    }
    return 'initialized';
  }

  /** Adds a node as a learner, waits until it caught up, then makes it a voter. Leader only. */
  async addNode(id: number, url: string): Promise<'added' | 'already_member'> {
    const deadline = Date.now() + this.opts.catchUpTimeoutMs;
    this.requireLeader();
    if (this.core.conf.voters.includes(id)) return 'already_member';
    if (!this.core.conf.learners.includes(id)) await this.confChange({ type: 'add_learner', node: id, addr: url }, deadline);
    await this.waitState(
      () => {
        this.requireLeader();
        const pr = this.core.progressOf(id);
        return !!pr && pr.match >= this.core.log.committed;
      },
      deadline,
      () => new NoQuorumError(`node ${id} did not catch up in time; it stays a learner`),
    );
    await this.confChange({ type: 'promote', node: id }, deadline);
    return 'added';
  }

  /**
   * One membership change: adds a node as a learner and returns once the change committed (it is not
   * caught up yet). The placement executor drives a move this way, one committed step at a time.
   */
  async addLearner(id: number, url: string): Promise<'added' | 'already_member'> {
    this.requireLeader();
    if (this.core.isMember(id)) return 'already_member';
    await this.confChange({ type: 'add_learner', node: id, addr: url }, Date.now() + this.opts.proposeTimeoutMs);
    return 'added';
  }

  /** True when the leader knows `id` has every committed entry (a learner ready to be promoted). */
  caughtUp(id: number): boolean {
    this.requireLeader();
    const pr = this.core.progressOf(id);
    return !!pr && pr.match >= this.core.log.committed;
  }

  /** One membership change: makes a caught-up learner a voter (refused while it lags). Leader only. */
  async promoteLearner(id: number): Promise<'promoted' | 'already_voter'> {
    this.requireLeader();
    if (this.core.conf.voters.includes(id)) return 'already_voter';
    if (!this.core.conf.learners.includes(id)) throw new ConfChangeError('unknown_node', `node ${id} is not a learner`);
    if (!this.caughtUp(id)) throw new ConfChangeError('not_ready', `node ${id} has not caught up yet`);
    await this.confChange({ type: 'promote', node: id }, Date.now() + this.opts.proposeTimeoutMs);
    return 'promoted';
  }

  /**
   * Removes a member and returns the index of the committed membership entry that removed it (the
   * removed node may wipe its replica once it knows of an entry at or past it: docs/cluster.md "Disk
   * reclaimed"). When the leader removes itself it keeps leading until the change commits, then hands
   * leadership to the most up-to-date voter (TimeoutNow) and steps down.
   */
  async removeNode(id: number): Promise<number> {
    this.requireLeader();
    if (!this.core.isMember(id)) throw new ConfChangeError('unknown_node', `node ${id} is not a member`);
    return this.confChange({ type: 'remove', node: id }, Date.now() + this.opts.proposeTimeoutMs);
  }

  /** Hands leadership to target (default: the most up-to-date voter) and waits for it to lead. */
  async transferLeadership(target?: number): Promise<void> {
    this.requireLeader();
    const to = target ?? this.bestVoter();
    if (to === null) throw new ConfChangeError('no_other_voter', 'no other voter to transfer leadership to');
    if (to === this.host.nodeId) return;
    this.core.transferLeadership(to);
    this.host.schedule();
    const timeout = this.core.cfg.electionTick * 3 * this.host.tickMs;
    await this.waitState(() => this.core.lead === to && this.core.role !== 'leader', Date.now() + timeout, () => new NoQuorumError(`leadership transfer to ${to} did not complete`));
  }

  /** Starts an election now. */
  campaign(): void {
    this.core.campaign();
    this.host.schedule();
  }

  /** Whether this node is a voter of the group by its own Raft state (a learner catching up is not). */
  isVoter(): boolean {
    return this.core.conf.voters.includes(this.host.nodeId);
  }

  isLeader(): boolean {
    return this.core.role === 'leader';
  }

  leaderId(): number | null {
    return this.core.lead || null;
  }

  /**
   * What this group did since it was opened (GroupCounters). Elections are the core's own count, made
   * where they happen: a reader of status() that sees this node lead also sees its election counted,
   * even before the flush loop took the Ready of the tick that elected it.
   */
  get counters(): Readonly<GroupCounters> {
    const e = this.core.elections;
    return { ...this.own, electionsStarted: this.inherited.electionsStarted + e.started, electionsWon: this.inherited.electionsWon + e.won };
  }

  status(): GroupStatus {
    const c = this.core;
    const members: MemberStatus[] = [];
    for (const [ids, voter] of [
      [c.conf.voters, true],
      [c.conf.learners, false],
    ] as const) {
      for (const id of ids) {
        const match = id === this.host.nodeId ? c.persisted : (c.progressOf(id)?.match ?? null);
        members.push({ id, url: this.addrOf(id), voter, matchIndex: match });
      }
    }
    return {
      groupId: this.groupId,
      nodeId: this.host.nodeId,
      role: c.role,
      term: c.term,
      leader: c.lead || null,
      leaderUrl: c.lead ? this.addrOf(c.lead) : null,
      commitIndex: c.log.committed,
      appliedIndex: c.applied,
      lastIndex: c.log.lastIndex(),
      confIndex: c.lastConfIndex() || c.log.offset,
      members,
    };
  }

  addrOf(id: number): string | null {
    return this.core.conf.addrs[id] ?? this.host.urlOf(id);
  }

  /** Entries held and their payload bytes (O(entries): meant for a metrics scrape, not a hot path). */
  logSize(): LogSize {
    let held = 0;
    for (const e of this.core.log.entries) held += e.data.byteLength;
    return { entries: this.core.log.entries.length, bytes: entriesBytes(this.core.log.entries), held };
  }

  /** Sets (or, with null, removes) the one tracing observer of this group. */
  observe(observer: GroupObserver | null): void {
    this.observer = observer;
  }

  // ---------------------------------------------------------------- host side

  tick(now: number): void {
    if (this.failed) return;
    this.core.tick();
    for (const [index, w] of this.waiters) {
      if (w.deadline <= now) {
        this.takeWaiter(index);
        w.reject(new NoQuorumError('the proposal was not committed in time (no quorum or leader change); its outcome is unknown'));
      }
    }
    for (const [ctx, r] of this.reads) {
      if (r.deadline <= now) {
        this.reads.delete(ctx);
        r.reject(new NoQuorumError('the read barrier was not confirmed in time'));
      }
    }
    for (let i = this.stateWaiters.length - 1; i >= 0; i--) {
      const w = this.stateWaiters[i];
      let done = false;
      try {
        done = w.check();
      } catch (e) {
        this.stateWaiters.splice(i, 1);
        w.reject(e as Error);
        continue;
      }
      if (done) {
        this.stateWaiters.splice(i, 1);
        w.resolve();
      } else if (w.deadline <= now) {
        this.stateWaiters.splice(i, 1);
        w.reject(w.timeoutError());
      }
    }
  }

  step(m: Parameters<RawNode['step']>[0]): void {
    if (!this.failed) this.core.step(m);
  }

  takeReady(): Ready | null {
    if (this.failed || !this.core.hasReady()) return null;
    const r = this.core.ready();
    this.count(r);
    return r;
  }

  /** Counts snapshot sends from what a Ready says (read only). */
  private count(r: Ready): void {
    for (const m of r.messages) if (m.type === MsgType.Snap && m.snap?.offset === 0) this.own.snapshotsSent++;
  }

  /**
   * The host synced the Ready (and sent what waited for it): the core learns it is durable (a leader
   * counts itself in the quorum from now on), read barriers learn their index, and what waited for
   * the sync is answered. Its apply (handleReady) may come later, while the host writes later Readys.
   */
  persisted(r: Ready): void {
    this.core.advancePersisted(r);
    for (const rs of r.readStates) {
      const w = this.reads.get(rs.ctx);
      if (w) w.index = rs.index;
    }
    // not while an apply (or a restore) is under way: the end of handleReady answers them
    if (!this.inReady) this.answerReads();
    if (this.persistWaiters.length) for (const f of this.persistWaiters.splice(0)) f();
    if (this.core.hasReady()) this.host.schedule();
  }

  /**
   * After persisted(r): restore/apply, answer waiters, advance, maybe snapshot. The host calls it for
   * one Ready at a time, in the order the Readys were taken.
   */
  async handleReady(r: Ready): Promise<void> {
    this.inReady = true;
    try {
      await this.handleReadyNow(r);
    } finally {
      this.inReady = false;
    }
    // here, not inside: a snapshot finishing while handleReady ran left the next one to this call
    this.maybeSnapshot();
  }

  private async handleReadyNow(r: Ready): Promise<void> {
    if (r.snapshot) {
      // The image was received into the group's snapshot file (host flush); the state machine streams it.
      const s = r.snapshot;
      await this.sm.restore({ index: s.meta.index, term: s.meta.term }, this.host.storage.snapshots.reader(this.groupId, s.meta, s.size));
      this.lastSnapshotIndex = s.meta.index;
      this.bytesSinceSnapshot = 0;
      this.own.snapshotsInstalled++;
    }
    if (r.committedEntries.length) await this.apply(r.committedEntries);
    this.core.advanceApplied(r);
    this.settlePayloads();
    this.answerReads();
    if (this.core.hasReady()) this.host.schedule();
  }

  /** Read barriers whose index this replica has applied are answered. */
  private answerReads(): void {
    if (this.reads.size === 0) return;
    const applied = this.sm.appliedIndex();
    for (const [ctx, w] of this.reads) {
      if (w.index !== null && applied >= w.index) {
        this.reads.delete(ctx);
        w.resolve(w.index);
      }
    }
  }

  /** Applied payloads beyond heldPayloadBytes leave memory (on disk already: persisted here). */
  private settlePayloads(): void {
    this.payloads.settle(this.core.log, Math.min(this.core.applied, this.core.persisted));
  }

  private async apply(ents: Entry[]): Promise<void> {
    for (const e of ents) invariant(e.offloaded === undefined, () => `group ${this.groupId}: entry ${e.index} to apply has let its payload go`);
    for (const e of ents) this.bytesSinceSnapshot += e.data.byteLength;
    const batch: AppliedEntry[] = ents.map((e) => {
      const a: AppliedEntry = {
        index: e.index,
        term: e.term,
        kind: e.type === EntryType.Conf ? 'membership' : e.data.byteLength === 0 ? 'noop' : 'command',
        data: toBuffer(e.data),
      };
      // This node proposed the entry at this index in this term: a term has one leader, which never
      // replaces its own entries, so it is the very entry proposed (same bytes).
      const w = this.waiters.get(e.index);
      if (w && w.term === e.term && w.local !== undefined) a.proposed = w.local;
      return a;
    });
    this.notify((o) => o.applying?.(ents));
    const results = await this.sm.apply(batch);
    const last = ents[ents.length - 1].index;
    invariant(this.sm.appliedIndex() === last, () => `group ${this.groupId}: state machine reports applied ${this.sm.appliedIndex()} after applying up to ${last}`);
    this.notify((o) => o.applied?.(ents));
    ents.forEach((e, i) => {
      const w = this.takeWaiter(e.index);
      if (!w) return;
      if (w.term === e.term) w.resolve({ index: e.index, term: e.term, result: results ? results[i] : undefined });
      else w.reject(new ProposalDroppedError());
    });
  }

  /**
   * Starts a snapshot when enough was applied since the last, in the background: written whole, a
   * large state's image took seconds, and a flush loop waiting for it sent no heartbeats (followers
   * started elections). Called right after an apply, before anything else can apply, so the state
   * machine fixes the image's position here, synchronously; it writes the image while applies go on.
   */
  private maybeSnapshot(): void {
    const applied = this.core.applied;
    const due = applied - this.lastSnapshotIndex >= this.opts.snapshotEvery || this.bytesSinceSnapshot >= this.opts.snapshotEveryBytes;
    if (this.snapshotting || !due || applied <= this.core.log.offset) return;
    this.snapshotting = true;
    this.bytesSinceSnapshot = 0; // what is applied from here on counts toward the next one
    const storage = this.host.storage;
    // the file opens while the state machine starts: it must fix its image now, not after an await here
    const opening: Promise<SnapshotFileWriter> = storage.snapshots.create(this.groupId);
    opening.catch(() => undefined); // a failure is handled below, when awaited; never an unhandled rejection meanwhile
    const out: SnapshotWriter = { write: async (piece: Uint8Array) => (await opening).write(piece) };
    const taking = this.sm.snapshot(out);
    void (async () => {
      try {
        const s = await taking;
        const file = await opening;
        if (this.failed || s.index <= this.core.log.offset || s.index > this.core.applied) {
          await file.abort();
          return;
        }
        const meta = this.core.snapshotMeta(s.index);
        invariant(meta.term === s.term, () => `snapshot term ${s.term} does not match the log's term ${meta.term} at ${s.index}`);
        const snap = { meta, size: await file.finish(meta) };
        const compactTo = Math.max(this.core.log.offset, Math.min(this.marginStart(s.index), this.core.persisted));
        const ops: BatchOp[] = [];
        const range = storage.compactionOps(ops, this.groupId, snap, compactTo, this.core.log.term(compactTo) as number, this.core.confAt(compactTo));
        await storage.write(ops);
        if (range) storage.deleteCompacted(this.groupId, range);
        this.payloads.beforeCompact(this.core.log, compactTo);
        this.core.compact(snap, compactTo);
        this.lastSnapshotIndex = s.index;
        // Older images go; a transfer still reading one finds it gone and moves to this one.
        await storage.snapshots.prune(this.groupId, meta, { keepReceiving: true });
      } catch (e) {
        await opening.then((f) => f.abort()).catch(() => undefined);
        // a snapshot that cannot be written is a failing disk: this group stops, as a failed flush stops it
        this.fail(e as Error);
      } finally {
        this.snapshotting = false;
        // Another snapshot may have come due while this one was written (applies went on). Start it
        // now: waiting for the next apply left an idle group's log above its bounds until the next
        // write. Only outside handleReady: there the state machine may be mid-apply, and handleReady
        // calls maybeSnapshot itself once it has ended.
        if (!this.inReady && !this.failed) this.maybeSnapshot();
      }
    })();
  }

  /**
   * Where the log may be compacted to behind a snapshot at `index`: compactionMargin entries behind it,
   * fewer when those entries hold more than compactionMarginBytes.
   */
  private marginStart(index: number): number {
    const byCount = index - this.opts.compactionMargin;
    const log = this.core.log;
    let bytes = 0;
    for (let i = Math.min(index, log.lastIndex()); i > Math.max(byCount, log.offset); i--) {
      bytes += payloadBytes(log.entries[i - log.offset - 1]);
      if (bytes > this.opts.compactionMarginBytes) return i;
    }
    return byCount;
  }

  /** Payload bytes of the held entries in (from, to]. */
  private bytesBetween(from: number, to: number): number {
    const log = this.core.log;
    let bytes = 0;
    for (let i = Math.max(from, log.offset) + 1; i <= Math.min(to, log.lastIndex()); i++) bytes += payloadBytes(log.entries[i - log.offset - 1]);
    return bytes;
  }

  /**
   * Stops the group for good before its storage is wiped (RaftHost.resetGroup): every waiter fails
   * with `err`, no Ready is handed out again, and a snapshot being written has finished.
   */
  async close(err: Error): Promise<void> {
    this.fail(err);
    while (this.snapshotting) await new Promise((r) => setTimeout(r, this.host.tickMs));
  }

  /** A group that replaces this one in place keeps its counters (metrics never go back) and its observer. */
  inheritFrom(old: RaftGroup): void {
    const { electionsStarted, electionsWon, ...own } = old.counters;
    Object.assign(this.own, own);
    Object.assign(this.inherited, { electionsStarted, electionsWon });
    this.observer = old.observer;
  }

  fail(err: Error): void {
    if (this.failed) return;
    this.failed = err;
    for (const w of this.waiters.values()) w.reject(err);
    this.waiters.clear();
    this.pendingBytes = 0;
    for (const r of this.reads.values()) r.reject(err);
    this.reads.clear();
    for (const w of this.stateWaiters.splice(0)) w.reject(err);
  }

  // ---------------------------------------------------------------- helpers

  /** Calls the observer, if any; what it throws stays with it (observing must never stop Raft). */
  private notify(call: (o: GroupObserver) => void): void {
    if (!this.observer) return;
    try {
      call(this.observer);
    } catch {
      // ignored on purpose
    }
  }

  private requireLeader(): void {
    if (this.failed) throw this.failed;
    if (this.core.role !== 'leader') throw new NotLeaderError(this.core.lead || null, this.core.lead ? this.addrOf(this.core.lead) : null);
  }

  private decorate(e: unknown): unknown {
    if (e instanceof NotLeaderError && e.leaderId && !e.leaderUrl) return new NotLeaderError(e.leaderId, this.addrOf(e.leaderId));
    return e;
  }

  private bestVoter(): number | null {
    let best: number | null = null;
    let bestMatch = -1;
    for (const v of this.core.conf.voters) {
      if (v === this.host.nodeId) continue;
      const m = this.core.progressOf(v)?.match ?? 0;
      if (m > bestMatch) {
        best = v;
        bestMatch = m;
      }
    }
    return best;
  }

  private waitEntry(index: number, term: number, timeoutMs: number, bytes = 0, local: unknown = undefined): Promise<ProposeResult> {
    // An older waiter at this index lost its slot: this node's log no longer holds its entry, which
    // therefore was never committed.
    this.takeWaiter(index)?.reject(new ProposalDroppedError());
    this.pendingBytes += bytes;
    return new Promise((resolve, reject) => {
      this.waiters.set(index, { term, deadline: Date.now() + timeoutMs, bytes, local, resolve, reject });
    });
  }

  /** Removes the waiter of an index (and its bytes from the pending total). */
  private takeWaiter(index: number): Waiter | undefined {
    const w = this.waiters.get(index);
    if (!w) return undefined;
    this.waiters.delete(index);
    this.pendingBytes -= w.bytes;
    return w;
  }

  private waitPersisted(): Promise<void> {
    return new Promise((resolve) => {
      this.persistWaiters.push(resolve);
      this.host.schedule();
    });
  }

  private waitState(check: () => boolean, deadline: number, timeoutError: () => Error): Promise<void> {
    if (check()) return Promise.resolve();
    return new Promise((resolve, reject) => this.stateWaiters.push({ check, deadline, resolve, reject, timeoutError }));
  }

  /**
   * Proposes a membership change, retrying while the one-change-at-a-time rule makes it wait; returns
   * the index of its entry once committed and applied here.
   */
  private async confChange(cc: ConfChange, deadline: number): Promise<number> {
    for (;;) {
      this.requireLeader();
      try {
        const pos = this.core.proposeConfChange(cc);
        this.host.schedule();
        await this.waitEntry(pos.index, pos.term, Math.max(1, deadline - Date.now()));
        return pos.index;
      } catch (e) {
        const retryable = e instanceof ConfChangeError && e.retryable;
        if (!retryable || Date.now() >= deadline) throw e instanceof RaftError ? this.decorate(e) : e;
      }
      await new Promise((r) => setTimeout(r, this.host.tickMs));
    }
  }
}

function toBuffer(b: Uint8Array): Buffer {
  return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}
