/**
 * The driver: owns timers, storage and transport for many Raft groups (shards) in one process. One
 * flush loop serves all groups: it gathers every group's Ready, sends leader messages at once, writes
 * all entries and hard states in ONE synced LevelDB batch (group commit across proposals and shards),
 * then sends the rest batched per peer and tells the cores what is durable. The pass's committed
 * entries are then applied, in order, while the next passes gather and write: a node acknowledges new
 * entries without waiting for its apply of older ones (up to a bound on what waits to be applied).
 */
import { randomBytes } from 'node:crypto';
import { invariant } from '../core/assert';
import { canSendBeforePersist } from '../core/raft';
import { seededRandom } from '../core/random';
import { DEFAULT_CONFIG, MsgType, type Entry, type Message, type RaftConfig, type Ready } from '../core/types';
import { ClosedError, GroupResetError, HostStoppedError } from '../errors';
import type { BatchOp, LevelStorage } from '../storage/level-storage';
import type { GroupMessage } from '../transport/codec';
import type { Transport } from '../transport/transport';
import { RaftGroup, type GroupOptions } from './group';
import type { GroupHost } from './group-host';
import type { RaftStateMachine } from './state-machine';

/** Committed entries (and their bytes) a node lets wait for its apply before it stops writing new ones. */
const MAX_APPLY_BEHIND_ENTRIES = 8192;
const MAX_APPLY_BEHIND_BYTES = 64 * 1024 * 1024;

export interface RaftHostOptions {
  nodeId: number;
  /** this node's own peer URL */
  selfUrl: string;
  storage: LevelStorage;
  transport: Transport;
  /** milliseconds per Raft tick (election timeout is electionTick..2*electionTick ticks) */
  tickMs?: number;
  raft?: Partial<Omit<RaftConfig, 'id' | 'random'>>;
  /** known peer URLs by node id (more are learned from membership entries and inbound requests) */
  peers?: Record<number, string>;
  group?: Partial<GroupOptions>;
  /** random source for election timeouts (default: seeded from crypto) */
  random?: () => number;
  onError?: (err: Error) => void;
  /**
   * A tick came at least a minimum election timeout (electionTick ticks) after the one before: the event
   * loop was blocked or the process starved of CPU that long. Followers of the groups this node leads
   * heard nothing meanwhile, and may have elected another leader (`leading`: how many it led then).
   */
  onTickStall?: (stall: TickStall) => void;
}

/** A late tick (RaftHostOptions.onTickStall). */
export interface TickStall {
  /** milliseconds since the tick before */
  gapMs: number;
  /** the minimum election timeout, in milliseconds (electionTick × tickMs) */
  electionMs: number;
  /** groups this node led when the tick came */
  leading: number;
}

export class RaftHost implements GroupHost {
  readonly nodeId: number;
  readonly groups = new Map<number, RaftGroup>();
  readonly addrs = new Map<number, string>();
  readonly tickMs: number;
  readonly storage: LevelStorage;
  private ticker: NodeJS.Timeout | null = null;
  private flushing = false;
  private again = false;
  private scheduled = false;
  private closed = false;
  private stopped = false;
  /** the failure that stopped this host (a synced write or an apply), null while it runs */
  private failedWith: Error | null = null;
  /** resolved when the flush loop's current pass ends (resetGroup waits for a pass that may hold a group's Ready) */
  private passEnds: (() => void)[] = [];
  /**
   * The apply of the last pass's Readys (null when every pass's apply ended): each pass's apply starts
   * after the previous pass's ended, so Readys are applied in the order they were taken.
   */
  private applying: Promise<void> | null = null;
  /** committed entries handed to applies that have not finished, and their payload bytes */
  private readonly behind = { entries: 0, bytes: 0 };
  /** each group's own options, as opened (a reset group opens again with them) */
  private readonly groupOptions = new Map<number, Partial<GroupOptions>>();
  private readonly random: () => number;
  /**
   * counters for metrics and the benchmark; `tickStalls`: ticks that came a minimum election timeout
   * or more after the one before (onTickStall)
   */
  stats = { flushes: 0, syncedWrites: 0, entriesWritten: 0, messagesOut: 0, tickStalls: 0 };
  /** when the last tick ran (0: none yet) */
  private lastTickAt = 0;

  constructor(readonly opts: RaftHostOptions) {
    this.nodeId = opts.nodeId;
    this.tickMs = opts.tickMs ?? 100;
    this.storage = opts.storage;
    this.addrs.set(opts.nodeId, opts.selfUrl);
    for (const [id, url] of Object.entries(opts.peers ?? {})) this.addrs.set(Number(id), url);
    this.random = opts.random ?? seededRandom(randomBytes(4).readUInt32LE(0));
    opts.transport.setHandler((from, fromUrl, msgs) => this.receive(from, fromUrl, msgs));
  }

  /** Opens (or creates) a group: loads its log, restores/replays the state machine, starts ticking it. */
  async openGroup(groupId: number, sm: RaftStateMachine, options: Partial<GroupOptions> = {}): Promise<RaftGroup> {
    invariant(Number.isInteger(groupId) && groupId >= 0, 'group ids are small non-negative integers');
    if (this.closed) throw new ClosedError();
    const existing = this.groups.get(groupId);
    if (existing) return existing;
    // what the state machine applied is never applied again: its payloads stay on disk (held-payloads.ts)
    const stored = await this.opts.storage.load(groupId, sm.appliedIndex());
    const g = await RaftGroup.open(this, groupId, sm, stored, { ...this.opts.raft, id: this.nodeId, random: this.random }, { ...this.opts.group, ...options });
    this.groups.set(groupId, g);
    this.groupOptions.set(groupId, options);
    if (!this.ticker) this.ticker = setInterval(() => this.tick(), this.tickMs);
    this.schedule();
    return g;
  }

  private tick(): void {
    this.noteStall(Date.now());
    for (const g of this.groups.values()) g.tick(Date.now());
    this.schedule();
  }

  /**
   * Ticks are timer callbacks: a loop blocked (or a process starved of CPU) for a while runs one late
   * tick, not the missed ones. A gap of a whole election timeout means this node's followers heard
   * nothing from it for that long: counted, and told (the node logs it), since elections follow.
   */
  private noteStall(now: number): void {
    const gapMs = now - this.lastTickAt;
    const electionMs = (this.opts.raft?.electionTick ?? DEFAULT_CONFIG.electionTick) * this.tickMs;
    if (this.lastTickAt > 0 && gapMs >= electionMs) {
      this.stats.tickStalls++;
      let leading = 0;
      for (const g of this.groups.values()) if (g.core.role === 'leader') leading++;
      this.opts.onTickStall?.({ gapMs, electionMs, leading });
    }
    this.lastTickAt = now;
  }

  receive(from: number, fromUrl: string | null, msgs: GroupMessage[]): void {
    if (this.closed) return;
    if (fromUrl) this.addrs.set(from, fromUrl);
    for (const { group, msg } of msgs) {
      if (msg.to !== this.nodeId) continue;
      this.groups.get(group)?.step(msg);
    }
    this.schedule();
  }

  urlOf(id: number): string | null {
    return this.addrs.get(id) ?? null;
  }

  /** Runs the flush loop soon (coalescing many events into one write). */
  schedule(): void {
    if (this.scheduled || this.closed) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    if (this.flushing) {
      this.again = true;
      return;
    }
    this.flushing = true;
    try {
      do {
        this.again = false;
        const work: { g: RaftGroup; r: Ready }[] = [];
        for (const g of this.groups.values()) {
          const r = g.takeReady();
          if (r) work.push({ g, r });
        }
        if (work.length === 0) break;
        this.stats.flushes++;
        // A Snap message leaves the core without its bytes: they are read from the snapshot file now;
        // so are the payloads an App message carries that left memory (held-payloads.ts).
        await Promise.all(work.map(async (w) => {
          await this.fillSnapChunks(w.g, w.r);
          await this.fillEntries(w.g, w.r); // after: each replaces r.messages
        }));
        // Leader messages need not wait for the leader's own sync (it counts itself only once synced).
        this.sendAll(work.map(({ g, r }) => ({ g, msgs: r.messages.filter(canSendBeforePersist) })));
        // A snapshot to install replaces the state an apply in flight writes, and its files: that apply ends first.
        if (this.applying && work.some(({ r }) => r.snapshot || r.snapshotChunks.length)) await this.applying;
        // Received snapshot bytes reach their file (synced) before the batch that records their position.
        await Promise.all(work.map(({ g, r }) => this.opts.storage.persistFiles(g.groupId, r)));
        const ops: BatchOp[] = [];
        let sync = false;
        for (const { g, r } of work) {
          if (this.opts.storage.readyOps(ops, g.groupId, r)) sync = true;
          this.stats.entriesWritten += r.entries.length;
        }
        // A batch that only moves commit indexes is not written at all: commit is recovered on restart
        // (from the application's applied index and the leader), and the next synced batch carries it.
        if (sync) {
          await this.opts.storage.write(ops, true);
          this.stats.syncedWrites++;
        }
        await Promise.all(work.map(({ g, r }) => this.opts.storage.afterWrite(g.groupId, r)));
        this.sendAll(work.map(({ g, r }) => ({ g, msgs: r.messages.filter((m) => !canSendBeforePersist(m)) })));
        for (const { g, r } of work) g.persisted(r);
        // This pass's applies follow the previous pass's, and run while the next passes write.
        const previous = this.applying;
        let entries = 0;
        let bytes = 0;
        for (const { r } of work) {
          entries += r.committedEntries.length;
          for (const e of r.committedEntries) bytes += e.data.byteLength;
        }
        this.behind.entries += entries;
        this.behind.bytes += bytes;
        const applying = (async () => {
          if (previous) await previous;
          try {
            await Promise.all(work.map(({ g, r }) => g.handleReady(r)));
          } finally {
            this.behind.entries -= entries;
            this.behind.bytes -= bytes;
          }
        })();
        this.applying = applying;
        applying.then(
          () => {
            if (this.applying === applying) this.applying = null;
          },
          (err: Error) => {
            if (this.applying === applying) this.applying = null;
            this.stop(err);
          },
        );
        // Applies far behind (a slow state machine): this node stops writing (and acknowledging) until
        // they catch up, so what waits to be applied stays bounded.
        if (previous && (this.behind.entries > MAX_APPLY_BEHIND_ENTRIES || this.behind.bytes > MAX_APPLY_BEHIND_BYTES)) await previous;
        this.endPass();
      } while (!this.closed);
    } catch (err) {
      this.stop(err as Error);
    } finally {
      this.flushing = false;
      this.endPass();
    }
    if (this.again) this.schedule();
  }

  /** A failed synced write or apply leaves the node unable to make progress safely: it stops. */
  private stop(err: Error): void {
    if (this.stopped) return;
    this.stopped = true;
    this.failedWith = err;
    this.opts.onError?.(err);
    // every waiter, and every later call, learns that this node stopped (a 503 to a client: another
    // replica serves), the failure itself being the cause (the node's log names it)
    const stopped = new HostStoppedError(err);
    for (const g of this.groups.values()) g.fail(stopped);
    this.closed = true;
    if (this.ticker) clearInterval(this.ticker);
  }

  /** Committed entries handed to the state machines and not yet applied (and their bytes). */
  applyBacklog(): { entries: number; bytes: number } {
    return { ...this.behind };
  }

  /** The failure that stopped this host (no group applies or acknowledges anything since), or null. */
  failure(): Error | null {
    return this.failedWith;
  }

  /** Waits for the apply in flight, if any (its failure was handled by stop). */
  private async appliesDone(): Promise<void> {
    while (this.applying) await this.applying.catch(() => undefined);
  }

  private endPass(): void {
    for (const resolve of this.passEnds.splice(0)) resolve();
  }

  /**
   * Wipes a group's replica on this node and opens it again, blank (a replica moved away: docs/cluster.md
   * "Disk reclaimed"): the group leaves the flush loop, its waiters fail (GroupResetError), the state
   * machine deletes its state, then the storage its log, hard state and snapshot files. A crash midway
   * leaves either the old replica (the state comes back from the log: the caller asks again) or a wipe
   * the next load finishes. The new group keeps no membership: it is a member again only if a leader adds it.
   */
  async resetGroup(groupId: number, sm: RaftStateMachine, removedAt = 0): Promise<RaftGroup> {
    const old = this.groups.get(groupId);
    invariant(old, () => `group ${groupId} is not open`);
    invariant(sm.reset, 'a group reset needs a state machine that can reset');
    if (this.closed) throw new ClosedError();
    this.groups.delete(groupId); // no pass takes a Ready of it from now on...
    if (this.flushing) await new Promise<void>((resolve) => this.passEnds.push(resolve)); // ...and the one running has ended
    // ...and its apply: the applies in flight now, not appliesDone(), as removeGroup does. Later passes hold
    // nothing of this group, and while the node's other groups take writes a new apply is always in flight:
    // a wipe waiting for none to be left waited as long as they were written to, and its drop request went
    // unanswered meanwhile (a node leaving the cluster is given up on after cluster.dead_after_s).
    await this.applying?.catch(() => undefined);
    await old.close(new GroupResetError());
    // the state first: a crash after it finds the log intact and rebuilds the state from it
    await sm.reset();
    // `removedAt`: the removal it is wiped after; the blank replica keeps it and has no say in the group
    // until the group's log past it reaches it (RawNode.removedAt)
    await this.opts.storage.dropGroup(groupId, removedAt);
    const stored = await this.opts.storage.load(groupId);
    const g = await RaftGroup.open(this, groupId, sm, stored, { ...this.opts.raft, id: this.nodeId, random: this.random }, { ...this.opts.group, ...this.groupOptions.get(groupId) });
    g.inheritFrom(old);
    this.groups.set(groupId, g);
    this.schedule();
    return g;
  }

  /**
   * Stops a group for good and deletes its log, hard state and snapshot files (a retired group removed:
   * docs/cluster.md "Removing a retired group"; a replica moved away, closed until the node is named for
   * the group again: "Disk reclaimed"); messages for it are ignored from then on. Also for a group not
   * open (its storage left by a removal a crash interrupted). A crash midway leaves a wipe the next load
   * finishes, or the storage as it was (the caller asks again). The state machine's own storage is the
   * caller's: no apply of the group runs once this has returned, nor when `beforeStorage` runs (after the
   * group is closed, before its storage is touched: the caller deletes the state there, so that a crash
   * finds either the state gone and the log intact, or both gone). `removedAt`: the removal the replica
   * is dropped after, kept in the storage as a wipe keeps it (resetGroup; RawNode.removedAt).
   */
  async removeGroup(groupId: number, opts: { removedAt?: number; beforeStorage?: () => Promise<void> } = {}): Promise<void> {
    if (this.closed) throw new ClosedError();
    const old = this.groups.get(groupId);
    if (old) {
      this.groups.delete(groupId); // no pass takes a Ready of it from now on...
      this.groupOptions.delete(groupId);
      if (this.flushing) await new Promise<void>((resolve) => this.passEnds.push(resolve)); // ...and the one running has ended
      // ...and its apply, which runs after its pass (pipelined), and the caller closes the state machine's
      // storage next. The applies in flight now, not appliesDone(): later passes hold nothing of this
      // group, and under a steady load a new apply is always in flight.
      await this.applying?.catch(() => undefined);
      await old.close(new GroupResetError());
    }
    await opts.beforeStorage?.();
    await this.opts.storage.dropGroup(groupId, opts.removedAt ?? 0);
  }

  /**
   * Reads the bytes of each Snap message of a Ready from the group's snapshot file (one chunk each).
   * A message whose snapshot file is gone (replaced by a newer snapshot) is dropped: the leader sends
   * the newer one when the follower answers or at the next heartbeat.
   */
  /**
   * The App messages of a Ready with the payloads of their entries that left memory read back from
   * disk, into copies (the log's entries stay without them). A message one of whose entries is no
   * longer stored (compacted meanwhile) is dropped: the follower is sent a snapshot or later entries.
   */
  private async fillEntries(g: RaftGroup, r: Ready): Promise<void> {
    const wanting = r.messages.filter((m) => m.type === MsgType.App && m.entries?.some((e) => e.offloaded !== undefined));
    if (wanting.length === 0) return;
    const dropped = new Set<Message>();
    for (const m of wanting) {
      const indexes = m.entries!.filter((e) => e.offloaded !== undefined).map((e) => e.index);
      const stored = await this.opts.storage.readEntries(g.groupId, indexes);
      const byIndex = new Map<number, Entry>();
      for (const e of stored) if (e) byIndex.set(e.index, e);
      const filled: Entry[] = [];
      for (const e of m.entries!) {
        if (e.offloaded === undefined) {
          filled.push(e);
          continue;
        }
        const read = byIndex.get(e.index);
        if (!read || read.term !== e.term) break;
        invariant(read.data.byteLength === e.offloaded, () => `group ${g.groupId}: entry ${e.index} read back with ${read.data.byteLength} bytes, ${e.offloaded} expected`);
        filled.push({ index: e.index, term: e.term, type: e.type, data: read.data });
      }
      if (filled.length === m.entries!.length) m.entries = filled;
      else dropped.add(m);
    }
    if (dropped.size > 0) r.messages = r.messages.filter((m) => !dropped.has(m));
  }

  private async fillSnapChunks(g: RaftGroup, r: Ready): Promise<void> {
    if (!r.messages.some((m) => m.type === MsgType.Snap)) return;
    const out: Message[] = [];
    for (const m of r.messages) {
      if (m.type === MsgType.Snap && m.snap && !m.snap.data) {
        const data = await this.opts.storage.snapshots.readChunk(g.groupId, m.snap.meta, m.snap.offset, m.snap.length);
        if (!data) continue;
        m.snap.data = data;
      }
      out.push(m);
    }
    r.messages = out;
  }

  private sendAll(items: { g: RaftGroup; msgs: Message[] }[]): void {
    const byPeer = new Map<number, GroupMessage[]>();
    for (const { g, msgs } of items) {
      for (const msg of msgs) {
        let l = byPeer.get(msg.to);
        if (!l) byPeer.set(msg.to, (l = []));
        l.push({ group: g.groupId, msg });
      }
    }
    for (const [to, msgs] of byPeer) {
      const url = this.groupAddr(to, msgs);
      if (!url) continue; // address unknown yet: the message is lost, Raft will retry
      this.stats.messagesOut += msgs.length;
      this.opts.transport.send(to, url, msgs);
    }
  }

  private groupAddr(to: number, msgs: GroupMessage[]): string | null {
    const known = this.addrs.get(to);
    if (known) return known;
    for (const { group } of msgs) {
      const url = this.groups.get(group)?.addrOf(to);
      if (url) {
        this.addrs.set(to, url);
        return url;
      }
    }
    return null;
  }

  async close(): Promise<void> {
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = null;
    this.lastTickAt = 0; // a stopped ticker is no stall
    // let an in-progress write finish before closing storage
    for (let i = 0; i < 200 && this.flushing; i++) await new Promise((r) => setTimeout(r, 5));
    this.closed = true;
    await this.appliesDone();
    for (const g of this.groups.values()) g.fail(new ClosedError());
    await this.opts.transport.close();
  }
}
