/** A synchronous in-memory cluster of cores for the paper-rule tests: every Ready is synced at once. */
import { RawNode } from '../src/core/raft';
import type { Entry, Message, RaftConfig, Snapshot } from '../src/core/types';
import { SimDisk } from '../src/sim/node';
import { Rng } from '../src/sim/rng';

export class Cluster {
  readonly nodes = new Map<number, RawNode>();
  readonly disks = new Map<number, SimDisk>();
  readonly applied = new Map<number, Entry[]>();
  readonly appliedIndex = new Map<number, number>();
  /** messages sent and not yet delivered */
  queue: Message[] = [];
  /** return false to drop a message */
  filter: (m: Message) => boolean = () => true;
  readonly sent: Message[] = [];
  readonly readStates = new Map<number, { ctx: number; index: number }[]>();
  private rng = new Rng(7);

  constructor(readonly ids: number[], readonly cfg: Partial<RaftConfig> = {}, bootstrap = true) {
    for (const id of ids) {
      this.disks.set(id, new SimDisk());
      this.applied.set(id, []);
      this.appliedIndex.set(id, 0);
      this.start(id);
      if (bootstrap) this.node(id).bootstrap({ voters: ids, learners: [], addrs: {} });
    }
    this.persistAll();
  }

  node(id: number): RawNode {
    const n = this.nodes.get(id);
    if (!n) throw new Error(`node ${id} is down`);
    return n;
  }

  start(id: number): void {
    if (!this.disks.has(id)) {
      this.disks.set(id, new SimDisk());
      this.applied.set(id, []);
      this.appliedIndex.set(id, 0);
    }
    const r = this.rng.fork();
    const disk = this.disks.get(id) as SimDisk;
    this.nodes.set(id, new RawNode({ id, random: () => r.next(), electionTick: 10, heartbeatTick: 1, ...this.cfg }, disk.initialState(this.appliedIndex.get(id) as number)));
  }

  crash(id: number): void {
    this.nodes.delete(id);
    this.queue = this.queue.filter((m) => m.to !== id);
  }

  /** Handles every node's Ready once; returns whether anything happened. */
  persistAll(): boolean {
    let any = false;
    for (const [id, n] of this.nodes) {
      while (n.hasReady()) {
        any = true;
        const r = n.ready();
        const d = this.disks.get(id) as SimDisk;
        d.write(r, `node ${id}`);
        if (r.snapshot) {
          this.appliedIndex.set(id, r.snapshot.meta.index);
          const restored = JSON.parse(Buffer.from(d.snapshotData).toString()) as string[];
          this.applied.set(id, restored.map((x) => ({ index: 0, term: 0, type: 0, data: enc(x) })));
        }
        for (const m of r.messages) {
          if (!d.fillSnap(m)) continue;
          this.sent.push(m);
          this.queue.push(m);
        }
        for (const e of r.committedEntries) {
          (this.applied.get(id) as Entry[]).push(e);
          this.appliedIndex.set(id, e.index);
        }
        for (const rs of r.readStates) {
          const l = this.readStates.get(id) ?? [];
          l.push(rs);
          this.readStates.set(id, l);
        }
        n.advance(r);
      }
    }
    return any;
  }

  /** Delivers queued messages (through the filter) until the cluster is quiet. */
  stabilize(maxRounds = 200): void {
    for (let i = 0; i < maxRounds; i++) {
      const progressed = this.persistAll();
      const q = this.queue;
      this.queue = [];
      for (const m of q) {
        const n = this.nodes.get(m.to);
        if (n && this.filter(m)) n.step(m);
      }
      if (!progressed && q.length === 0) return;
    }
  }

  deliverOnly(pred: (m: Message) => boolean): void {
    this.persistAll();
    const keep: Message[] = [];
    for (const m of this.queue) {
      const n = this.nodes.get(m.to);
      if (pred(m)) {
        if (n) n.step(m);
      } else keep.push(m);
    }
    this.queue = keep;
    this.persistAll();
  }

  tickAll(n: number): void {
    for (let i = 0; i < n; i++) {
      for (const node of this.nodes.values()) node.tick();
      this.stabilize();
    }
  }

  /** Lets the others' leader lease lapse (as if an election timeout passed), then campaigns. */
  elect(id: number): RawNode {
    for (const n of this.nodes.values()) if (n.role !== 'leader') n.electionElapsed = Math.max(n.electionElapsed, n.cfg.electionTick);
    this.node(id).campaign();
    this.stabilize();
    const n = this.node(id);
    if (n.role !== 'leader') throw new Error(`node ${id} did not win (role ${n.role})`);
    return n;
  }

  leaders(): RawNode[] {
    return [...this.nodes.values()].filter((n) => n.role === 'leader');
  }

  /** Drop all messages between the two sides. */
  isolate(...ids: number[]): void {
    const s = new Set(ids);
    this.filter = (m) => s.has(m.from) === s.has(m.to);
  }

  heal(): void {
    this.filter = () => true;
  }

  appliedData(id: number): string[] {
    return (this.applied.get(id) as Entry[]).filter((e) => e.data.byteLength && e.type === 0).map((e) => Buffer.from(e.data).toString());
  }

  /** takes a snapshot of the applied state (the list of applied payloads) and compacts */
  snapshot(id: number, compactTo?: number): Snapshot {
    const n = this.node(id);
    const idx = n.applied;
    const meta = n.snapshotMeta(idx);
    const to = compactTo ?? idx;
    const d = this.disks.get(id) as SimDisk;
    const snap = d.saveSnapshot(meta, Buffer.from(JSON.stringify(this.appliedData(id))));
    d.offsetConf = n.confAt(to);
    d.offsetTerm = n.log.term(to) as number;
    d.entries = d.entries.slice(to - d.offset);
    d.offset = to;
    n.compact(snap, to);
    return snap;
  }
}

export const enc = (s: string): Uint8Array => Buffer.from(s);
