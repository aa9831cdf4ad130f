/**
 * Durable Raft state of many groups in one LevelDB: entries, hard state (term, vote, commit), the
 * compaction point, the latest snapshot's metadata and the position of a snapshot being received. The
 * driver turns the Readys of all its groups into one batch and writes it with sync (fsync) before
 * sending anything that depends on it. Snapshot images are files (snapshot-files.ts, under
 * `<path>/snapshots/`), never LevelDB values: they can be as large as the state.
 */
import { join } from 'node:path';
import { Level } from 'level';
import { invariant } from '../core/assert';
import { EntryType, emptyConf, type ConfState, type Entry, type HardState, type IncomingSnapshotState, type Ready, type Snapshot, type SnapshotMeta } from '../core/types';
import { SnapshotFiles } from './snapshot-files';

const PREFIX = 0x72; // 'r'
const K_HARD = 1;
const K_META = 2;
const K_SNAP_META = 3;
/** the image itself, kept here by versions before snapshot files: migrated to a file on load */
const K_SNAP_DATA = 4;
const K_ENTRY = 5;
/** position of the snapshot being received (IncomingSnapshotState), so a restart resumes it */
const K_SNAP_RECV = 6;
/**
 * a wipe of the group begun and not finished (dropGroup): written, synced, in the same batch that
 * deletes the group's hard state and metadata, so load() finishes a wipe a crash interrupted
 */
const K_WIPING = 7;
/**
 * the index of the membership entry that removed this node from the group, written when its replica is
 * wiped (dropGroup) and kept across later wipes (the highest): above K_WIPING, so a wipe's clear keeps
 * it. RawNode.removedAt says what it is for.
 */
const K_REMOVED = 8;

export type BatchOp = { type: 'put'; key: Buffer; value: Buffer } | { type: 'del'; key: Buffer };

export interface StoredGroup {
  hardState: HardState;
  offset: number;
  offsetTerm: number;
  offsetConf: ConfState;
  entries: Entry[];
  snapshot: Snapshot | null;
  incoming: IncomingSnapshotState | null;
  /** the removal its replica was wiped after (K_REMOVED), 0 if never */
  removedAt: number;
}

function key(group: number, kind: number, index = -1): Buffer {
  const b = Buffer.alloc(index >= 0 ? 14 : 6);
  b[0] = PREFIX;
  b.writeUInt32BE(group, 1);
  b[5] = kind;
  if (index >= 0) b.writeBigUInt64BE(BigInt(index), 6);
  return b;
}

export function encodeEntry(e: Entry): Buffer {
  const b = Buffer.allocUnsafe(9 + e.data.byteLength);
  b[0] = e.type;
  b.writeDoubleBE(e.term, 1);
  b.set(e.data, 9);
  return b;
}

const NO_PAYLOAD = new Uint8Array(0);

export function decodeEntry(index: number, b: Buffer): Entry {
  return { index, type: b[0] as EntryType, term: b.readDoubleBE(1), data: b.subarray(9) };
}

interface GroupMem {
  offset: number;
  lastIndex: number;
  /** term and vote last written: only their change (not commit's) needs a synced write */
  term: number;
  vote: number;
  commit: number;
}

export class LevelStorage {
  private readonly mem = new Map<number, GroupMem>();
  /** synced batch writes and bytes, for metrics */
  writes = 0;

  private constructor(
    readonly db: Level<Buffer, Buffer>,
    /** the groups' snapshot images */
    readonly snapshots: SnapshotFiles,
  ) {}

  static async open(path: string): Promise<LevelStorage> {
    const db = new Level<Buffer, Buffer>(path, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    await db.open();
    return new LevelStorage(db, new SnapshotFiles(join(path, 'snapshots')));
  }

  async close(): Promise<void> {
    await Promise.all([...this.clearing]);
    await this.db.close();
  }

  /**
   * Loads one group's state (an empty state for a group never written). Entries up to `appliedIndex`
   * (the state machine's) come without their payloads (Entry.offloaded) but membership ones: they are
   * never applied again, and a restart used to read the whole uncompacted log into memory (75 MiB at
   * 100,000 units) only for the driver to let it go (driver/held-payloads.ts).
   */
  async load(group: number, appliedIndex = 0): Promise<StoredGroup> {
    if (await this.db.get(key(group, K_WIPING))) await this.finishWipe(group);
    const hsRaw = await this.db.get(key(group, K_HARD));
    const metaRaw = await this.db.get(key(group, K_META));
    const snapMetaRaw = await this.db.get(key(group, K_SNAP_META));
    const hardState: HardState = hsRaw ? (JSON.parse(hsRaw.toString()) as HardState) : { term: 0, vote: 0, commit: 0 };
    const meta = metaRaw ? (JSON.parse(metaRaw.toString()) as { offset: number; offsetTerm: number; offsetConf: ConfState }) : { offset: 0, offsetTerm: 0, offsetConf: emptyConf() };
    let snapshot: Snapshot | null = null;
    if (snapMetaRaw) {
      const stored = JSON.parse(snapMetaRaw.toString()) as Snapshot | SnapshotMeta;
      snapshot = 'meta' in stored ? stored : await this.migrateSnapshot(group, stored);
      invariant(await this.snapshots.has(group, snapshot.meta, snapshot.size), () => `group ${group}: the image of snapshot ${snapshot?.meta.index}@${snapshot?.meta.term} is missing from ${this.snapshots.dir(group)}`);
    }
    let incoming: IncomingSnapshotState | null = null;
    const recvRaw = await this.db.get(key(group, K_SNAP_RECV));
    if (recvRaw) {
      const inc = JSON.parse(recvRaw.toString()) as IncomingSnapshotState;
      if (await this.snapshots.resumeAt(group, inc.received)) incoming = inc;
    }
    const entries: Entry[] = [];
    for await (const [k, v] of this.db.iterator({ gt: key(group, K_ENTRY, meta.offset), lt: key(group, K_ENTRY + 1) })) {
      const index = Number(k.readBigUInt64BE(6));
      invariant(index === meta.offset + entries.length + 1, () => `group ${group}: stored log has a gap at ${index}`);
      const e = decodeEntry(index, v);
      entries.push(index <= appliedIndex && e.type !== EntryType.Conf && e.data.byteLength > 0 ? { index, term: e.term, type: e.type, data: NO_PAYLOAD, offloaded: e.data.byteLength } : e);
    }
    this.mem.set(group, { offset: meta.offset, lastIndex: meta.offset + entries.length, term: hardState.term, vote: hardState.vote, commit: hardState.commit });
    const removedRaw = await this.db.get(key(group, K_REMOVED));
    const removedAt = removedRaw ? Number(removedRaw.toString()) : 0;
    return { hardState, offset: meta.offset, offsetTerm: meta.offsetTerm, offsetConf: meta.offsetConf, entries, snapshot, incoming, removedAt };
  }

  /**
   * What the storage holds of a group, without opening it: `blank` when nothing but the removal mark is
   * left (never written, or wiped: a wipe a crash interrupted is finished first, as load() would), and
   * the removal its replica was wiped after (0 if never).
   */
  async inspect(group: number): Promise<{ blank: boolean; removedAt: number }> {
    if (await this.db.get(key(group, K_WIPING))) await this.finishWipe(group);
    let blank = true;
    for await (const _ of this.db.keys({ gte: key(group, 0), lt: key(group, K_WIPING), limit: 1 })) blank = false;
    const removedRaw = await this.db.get(key(group, K_REMOVED));
    return { blank, removedAt: removedRaw ? Number(removedRaw.toString()) : 0 };
  }

  /**
   * Entries of a group read back from disk, in the order asked (undefined for one no longer stored:
   * compacted meanwhile). For messages to followers that carry entries whose payloads left memory
   * (driver/held-payloads.ts).
   */
  async readEntries(group: number, indexes: number[]): Promise<(Entry | undefined)[]> {
    const values = await this.db.getMany(indexes.map((i) => key(group, K_ENTRY, i)));
    return values.map((v, n) => (v ? decodeEntry(indexes[n], v) : undefined));
  }

  /** An image stored inside LevelDB by an older version moves to its file (once). */
  private async migrateSnapshot(group: number, meta: SnapshotMeta): Promise<Snapshot> {
    const data = (await this.db.get(key(group, K_SNAP_DATA))) ?? Buffer.alloc(0);
    await this.snapshots.writeWhole(group, meta, data);
    const snapshot: Snapshot = { meta, size: data.byteLength };
    await this.db.batch([
      { type: 'put', key: key(group, K_SNAP_META), value: Buffer.from(JSON.stringify(snapshot)) },
      { type: 'del', key: key(group, K_SNAP_DATA) },
    ], { sync: true });
    return snapshot;
  }

  /**
   * The file side of a Ready, done before its batch is written: received snapshot chunks appended
   * (and synced) to the receiving file, and a completely received image made the group's snapshot file.
   */
  async persistFiles(group: number, r: Ready): Promise<void> {
    if (r.snapshotChunks.length) {
      await this.snapshots.append(group, r.snapshotChunks);
      // The received position, for a restart to resume from, recorded once the bytes are synced to the
      // file, so it never runs ahead of them. It needs no sync of its own: a position lost in a crash is
      // an older one, and the follower tells the leader where it resumes (the leader goes back there).
      // One fsync per chunk, not two.
      const c = r.snapshotChunks[r.snapshotChunks.length - 1];
      const at: IncomingSnapshotState = { meta: c.meta, from: c.from, received: c.offset + c.data.byteLength, total: c.total };
      await this.db.put(key(group, K_SNAP_RECV), Buffer.from(JSON.stringify(at)));
    }
    if (r.snapshot) await this.snapshots.installReceived(group, r.snapshot.meta, r.snapshot.size);
  }

  /** After the Ready's batch is written: an installed snapshot's predecessors are deleted. */
  async afterWrite(group: number, r: Ready): Promise<void> {
    if (r.snapshot) await this.snapshots.prune(group, r.snapshot.meta);
  }

  private g(group: number): GroupMem {
    const m = this.mem.get(group);
    invariant(m, `group ${group} was not loaded`);
    return m;
  }

  /**
   * Adds the writes of one Ready to a batch (snapshot, then entries with truncation of a replaced
   * tail, then hard state). Returns whether the batch must be synced before anything depends on it:
   * a Ready that only moves the commit index need not be (the commit index is recovered from the
   * peers and from the application's applied index), which keeps an fsync off the commit path.
   */
  readyOps(ops: BatchOp[], group: number, r: Ready): boolean {
    let sync = false;
    const m = this.g(group);
    if (r.snapshot) {
      const s = r.snapshot;
      this.snapshotOps(ops, group, s);
      ops.push({ type: 'del', key: key(group, K_SNAP_RECV) });
      // A restored snapshot replaces the whole log.
      for (let i = m.offset + 1; i <= m.lastIndex; i++) ops.push({ type: 'del', key: key(group, K_ENTRY, i) });
      ops.push({ type: 'put', key: key(group, K_META), value: Buffer.from(JSON.stringify({ offset: s.meta.index, offsetTerm: s.meta.term, offsetConf: s.meta.conf })) });
      m.offset = s.meta.index;
      m.lastIndex = s.meta.index;
      sync = true;
    }
    if (r.entries.length) {
      sync = true;
      const first = r.entries[0].index;
      invariant(first > m.offset && first <= m.lastIndex + 1, () => `group ${group}: append at ${first} to log (${m.offset}, ${m.lastIndex}]`);
      for (const e of r.entries) ops.push({ type: 'put', key: key(group, K_ENTRY, e.index), value: encodeEntry(e) });
      const last = r.entries[r.entries.length - 1].index;
      for (let i = last + 1; i <= m.lastIndex; i++) ops.push({ type: 'del', key: key(group, K_ENTRY, i) });
      m.lastIndex = last;
    }
    if (r.hardState || sync) {
      // Written with every synced batch, so a commit index that moved alone reaches the disk later.
      const hs = r.hardState ?? { term: m.term, vote: m.vote, commit: m.commit };
      ops.push({ type: 'put', key: key(group, K_HARD), value: Buffer.from(JSON.stringify(hs)) });
      m.commit = hs.commit;
      if (hs.term !== m.term || hs.vote !== m.vote) sync = true;
      m.term = hs.term;
      m.vote = hs.vote;
    }
    return sync;
  }

  private snapshotOps(ops: BatchOp[], group: number, s: Snapshot): void {
    ops.push({ type: 'put', key: key(group, K_SNAP_META), value: Buffer.from(JSON.stringify({ meta: s.meta, size: s.size } satisfies Snapshot)) });
  }

  /**
   * Saves a locally taken snapshot and moves the compaction point to compactTo. The entries below it
   * are deleted afterwards in the background (deleteCompacted): load() ignores them, and indexes at
   * or below the compaction point are never written again, so the big delete stays off the write path.
   */
  compactionOps(ops: BatchOp[], group: number, s: Snapshot, compactTo: number, offsetTerm: number, offsetConf: ConfState): { from: number; to: number } | null {
    const m = this.g(group);
    this.snapshotOps(ops, group, s);
    if (compactTo <= m.offset) return null;
    const range = { from: m.offset + 1, to: compactTo };
    ops.push({ type: 'put', key: key(group, K_META), value: Buffer.from(JSON.stringify({ offset: compactTo, offsetTerm, offsetConf })) });
    m.offset = compactTo;
    return range;
  }

  private readonly clearing = new Set<Promise<void>>();

  /** Deletes compacted entries [from, to] without blocking writes. */
  deleteCompacted(group: number, range: { from: number; to: number }): void {
    const p = this.db
      .clear({ gte: key(group, K_ENTRY, range.from), lte: key(group, K_ENTRY, range.to) })
      .catch(() => undefined)
      .finally(() => this.clearing.delete(p));
    this.clearing.add(p);
  }

  /**
   * Deletes everything of one group: its entries, hard state, metadata and snapshot files (the replica
   * is wiped: docs/cluster.md "Disk reclaimed"). The group must be closed (no Ready of it in flight).
   * First one synced batch marks the wipe and deletes what load() reads first, then the entries and
   * files go; a crash between the two is finished by the next load(), which never sees half a log.
   */
  async dropGroup(group: number, removedAt = 0): Promise<void> {
    // a background delete of compacted entries must not land after the wipe, on a new log's entries
    await Promise.all([...this.clearing]);
    // the removal it is wiped after, in the same synced batch as the wipe's mark: the blank replica that
    // opens next never lacks it (RawNode.removedAt)
    const before = Number((await this.db.get(key(group, K_REMOVED)))?.toString() ?? 0);
    await this.db.batch([
      ...(removedAt > before ? [{ type: 'put' as const, key: key(group, K_REMOVED), value: Buffer.from(String(removedAt)) }] : []),
      { type: 'put', key: key(group, K_WIPING), value: Buffer.from('1') },
      ...[K_HARD, K_META, K_SNAP_META, K_SNAP_DATA, K_SNAP_RECV].map((k) => ({ type: 'del' as const, key: key(group, k) })),
    ], { sync: true });
    await this.finishWipe(group);
  }

  private async finishWipe(group: number): Promise<void> {
    await this.db.clear({ gte: key(group, 0), lt: key(group, K_WIPING) });
    await this.snapshots.removeGroup(group);
    await this.db.batch([{ type: 'del', key: key(group, K_WIPING) }], { sync: true });
    this.mem.delete(group);
  }

  /** One write for everything in the batch, synced (fsync) unless told it need not be. */
  async write(ops: BatchOp[], sync = true): Promise<void> {
    if (ops.length === 0) return;
    if (sync) this.writes++;
    await this.db.batch(ops, { sync });
  }
}
