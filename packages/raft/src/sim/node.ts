/**
 * A simulated node: the real core, a "disk" that keeps only what a Ready wrote once its (simulated)
 * sync completed, and the KV state machine (durable, applied atomically with its index). It processes
 * one Ready at a time, like the real driver: leader messages go out at once, the rest after the sync,
 * then advancePersisted(); committed entries are applied (then advanceApplied()) at once or, with the
 * lagApply fault, some steps later while later Readys are written, as the driver's pipelined apply does.
 */
import { RawNode, canSendBeforePersist } from '../core/raft';
import { cloneConf } from '../core/conf';
import { EntryType, MsgType, type ConfState, type Entry, type HardState, type IncomingSnapshotState, type InitialState, type Message, type Ready, type Snapshot, type SnapshotMeta } from '../core/types';
import { decodeCmd, KvMachine } from './kv';
import type { Rng } from './rng';

export class SimDisk {
  hardState: HardState = { term: 0, vote: 0, commit: 0 };
  offset = 0;
  offsetTerm = 0;
  offsetConf: ConfState = { voters: [], learners: [], addrs: {} };
  entries: Entry[] = [];
  snapshot: Snapshot | null = null;
  /** the image of `snapshot`: the in-memory counterpart of the driver's snapshot file */
  snapshotData: Uint8Array = new Uint8Array(0);
  /** the snapshot being received, and the bytes of its receiving "file" (a prefix of the image) */
  recv: IncomingSnapshotState | null = null;
  private recvData: Uint8Array[] = [];

  lastIndex(): number {
    return this.offset + this.entries.length;
  }

  /** Term of the stored entry at index (the compaction point's term at offset), undefined otherwise. */
  termAt(index: number): number | undefined {
    if (index === this.offset) return this.offsetTerm;
    return this.entries[index - this.offset - 1]?.term;
  }

  /** Persists a Ready's received snapshot bytes, snapshot, entries (replacing a conflicting tail) and hard state. */
  write(r: Ready, owner: string): void {
    for (const c of r.snapshotChunks) {
      if (c.offset === 0) {
        this.recv = { meta: c.meta, from: c.from, received: 0, total: c.total };
        this.recvData = [];
      }
      const at = this.recv;
      if (!at || !sameSnap(at.meta, c.meta) || at.received !== c.offset) throw new Error(`${owner}: snapshot chunk at ${c.offset} does not follow the receiving file (${at ? `${at.meta.index}@${at.meta.term}, ${at.received} bytes` : 'none'})`);
      this.recvData.push(c.data);
      at.received += c.data.byteLength;
    }
    if (r.snapshot) {
      const at = this.recv;
      if (!at || !sameSnap(at.meta, r.snapshot.meta) || at.received !== r.snapshot.size) throw new Error(`${owner}: snapshot ${r.snapshot.meta.index} installed without its whole image received`);
      // The receiving file becomes the node's snapshot file.
      this.snapshotData = Buffer.concat(this.recvData);
      this.recv = null;
      this.recvData = [];
      this.snapshot = r.snapshot;
      this.offset = r.snapshot.meta.index;
      this.offsetTerm = r.snapshot.meta.term;
      this.offsetConf = cloneConf(r.snapshot.meta.conf);
      this.entries = [];
    }
    if (r.entries.length) {
      const first = r.entries[0].index;
      if (first <= this.lastIndex()) this.entries.length = first - this.offset - 1;
      if (first !== this.lastIndex() + 1) throw new Error(`${owner}: disk gap, writing ${first} after ${this.lastIndex()}`);
      this.entries.push(...r.entries);
    }
    if (r.hardState) this.hardState = { ...r.hardState };
  }

  initialState(applied: number): InitialState {
    return {
      hardState: { ...this.hardState },
      snapshot: this.snapshot,
      incoming: this.recv ? { ...this.recv } : null,
      offset: this.offset,
      offsetTerm: this.offsetTerm,
      offsetConf: cloneConf(this.offsetConf),
      entries: [...this.entries],
      applied,
    };
  }

  /** Records a locally taken snapshot and its image (the caller compacts). */
  saveSnapshot(meta: SnapshotMeta, data: Uint8Array): Snapshot {
    const snap: Snapshot = { meta, size: data.byteLength };
    this.snapshot = snap;
    this.snapshotData = data;
    return snap;
  }

  /**
   * Fills an outgoing Snap message with its chunk of the snapshot image, as the driver reads it from
   * the snapshot file. False when this disk no longer (or not yet) holds that snapshot: the message is
   * dropped and Raft sends again.
   */
  fillSnap(m: Message): boolean {
    if (m.type !== MsgType.Snap || !m.snap || m.snap.data) return true;
    const c = m.snap;
    if (!this.snapshot || !sameSnap(this.snapshot.meta, c.meta)) return false;
    m.snap = { ...c, data: this.snapshotData.subarray(c.offset, c.offset + c.length) };
    return true;
  }
}

function sameSnap(a: SnapshotMeta, b: SnapshotMeta): boolean {
  return a.index === b.index && a.term === b.term;
}

export interface NodeHooks {
  send(m: Message): void;
  /** a Ready was synced: entries and hard state reached the disk */
  persisted(node: SimNode, r: Ready): void;
  applied(node: SimNode, e: Entry): void;
  readState(node: SimNode, ctx: number, index: number): void;
}

/**
 * Knobs of the disk and batching that the fault profiles turn up; zero keeps the classic behaviour
 * (and the classic random draws, so old seeds replay exactly).
 */
export interface SimNodeFaults {
  /** chance that a node's Apps carry one entry each, so entries of different terms travel apart */
  singleEntryApps: number;
  /** chance that a synced write takes 4-20 steps (a slow fsync, slower than the network round trip) */
  slowWrite: number;
  /**
   * chance that a Ready's apply lags its sync by 1-8 steps (Readys still apply in order, a snapshot
   * Ready waits for those before it): the driver applies while it persists the next Ready
   */
  lagApply?: number;
}

export const NO_NODE_FAULTS: SimNodeFaults = { singleEntryApps: 0, slowWrite: 0 };

export class SimNode {
  core: RawNode | null = null;
  readonly disk = new SimDisk();
  readonly sm = new KvMachine();
  private inflight: { r: Ready; doneAt: number } | null = null;
  /** synced Readys whose snapshot and committed entries are not applied yet, in order */
  private lagging: { r: Ready; at: number }[] = [];
  /** after this many applied entries since the last snapshot, take one */
  snapshotEvery: number;
  /** log entries kept behind a snapshot */
  compactionMargin: number;

  constructor(
    readonly id: number,
    private readonly rng: Rng,
    private readonly hooks: NodeHooks,
    private readonly cfg: { electionTick: number; heartbeatTick: number; maxInflightMsgs: number; maxEntriesPerMsg: number; snapshotChunkSize: number },
    private faults: SimNodeFaults = NO_NODE_FAULTS,
  ) {
    this.snapshotEvery = rng.range(15, 80);
    this.compactionMargin = rng.range(0, 10);
  }

  /** Faults stopped: the disk is healthy again (slow writes stall a leader's heartbeats). */
  calm(): void {
    this.faults = { ...this.faults, slowWrite: 0 };
  }

  get alive(): boolean {
    return this.core !== null;
  }

  /** A Ready is being written: a crash now loses it. */
  get writing(): boolean {
    return this.inflight !== null;
  }

  start(): void {
    const r = this.rng.fork();
    // Small, varying batch limits make entries of different terms travel in separate Apps (Figure 8 cases).
    const single = this.faults.singleEntryApps > 0 && r.chance(this.faults.singleEntryApps);
    const maxEntriesPerMsg = single ? 1 : 1 + r.int(this.cfg.maxEntriesPerMsg);
    this.core = new RawNode({ id: this.id, random: () => r.next(), ...this.cfg, maxEntriesPerMsg, maxSizePerMsg: 4096 }, this.disk.initialState(this.sm.applied));
  }

  /** Loses everything not synced: the in-memory core and the Ready being written. */
  crash(): void {
    this.core = null;
    this.inflight = null;
    this.lagging = [];
  }

  /** One unit of simulated time for this node's disk pipeline. */
  process(now: number): void {
    const core = this.core;
    if (!core) return;
    while (this.lagging.length && now >= this.lagging[0].at) this.apply(core, (this.lagging.shift() as { r: Ready }).r);
    if (this.inflight && now >= this.inflight.doneAt) {
      const r = this.inflight.r;
      this.inflight = null;
      this.finish(core, r, now);
    }
    if (!this.inflight && core.hasReady()) {
      const r = core.ready();
      for (const m of r.messages) if (canSendBeforePersist(m) && this.disk.fillSnap(m)) this.hooks.send(m);
      const slow = this.faults.slowWrite > 0 && this.rng.chance(this.faults.slowWrite);
      const delay = slow ? this.rng.range(4, 20) : this.rng.chance(0.5) ? 0 : this.rng.range(1, 3);
      if (delay === 0) this.finish(core, r, now);
      else this.inflight = { r, doneAt: now + delay };
    }
  }

  private finish(core: RawNode, r: Ready, now: number): void {
    this.disk.write(r, `node ${this.id}`);
    this.hooks.persisted(this, r);
    for (const m of r.messages) if (!canSendBeforePersist(m) && this.disk.fillSnap(m)) this.hooks.send(m);
    core.advancePersisted(r);
    const lag = (this.faults.lagApply ?? 0) > 0 && this.rng.chance(this.faults.lagApply as number);
    if (r.snapshot) {
      // the driver lets applies in flight finish before it restores a snapshot
      for (const l of this.lagging.splice(0)) this.apply(core, l.r);
      this.apply(core, r);
    } else if (lag || this.lagging.length) {
      // read states as soon as synced (the driver's way): a read is served once this node applied its index
      for (const rs of r.readStates) this.hooks.readState(this, rs.ctx, rs.index);
      r.readStates = [];
      const after = this.lagging.length ? this.lagging[this.lagging.length - 1].at : now;
      this.lagging.push({ r, at: Math.max(after, now + (lag ? this.rng.range(1, 8) : 0)) });
    } else this.apply(core, r);
  }

  private apply(core: RawNode, r: Ready): void {
    if (r.snapshot) this.sm.restore(r.snapshot.meta.index, this.disk.snapshotData);
    for (const e of r.committedEntries) {
      this.sm.apply(e.index, e.type === EntryType.Normal && e.data.byteLength ? decodeCmd(e.data) : null);
      this.hooks.applied(this, e);
    }
    for (const rs of r.readStates) this.hooks.readState(this, rs.ctx, rs.index);
    core.advanceApplied(r);
    this.maybeSnapshot(core);
  }

  private maybeSnapshot(core: RawNode): void {
    const last = d(this.disk.snapshot);
    // A snapshot received while earlier entries were being applied already covers them.
    if (this.sm.applied - last < this.snapshotEvery || this.sm.applied <= core.log.offset) return;
    const meta = core.snapshotMeta(this.sm.applied);
    const compactTo = Math.max(this.disk.offset, Math.min(meta.index - this.compactionMargin, core.persisted));
    const conf = core.confAt(compactTo);
    const disk = this.disk;
    const snap = disk.saveSnapshot(meta, this.sm.snapshot());
    if (compactTo > disk.offset) {
      disk.offsetTerm = core.log.term(compactTo) as number;
      disk.entries = disk.entries.slice(compactTo - disk.offset);
      disk.offset = compactTo;
      disk.offsetConf = conf;
    }
    core.compact(snap, compactTo);
  }
}

function d(s: Snapshot | null): number {
  return s ? s.meta.index : 0;
}
