/**
 * Snapshot transfer through the driver with real files (LevelDB storage, snapshot files, in-process
 * transport): a far-behind follower receives a snapshot of many chunks, a transfer survives a follower
 * restart (resumed from the receiving file) and a leader change (started over), and every replica ends
 * with the same state. A tap on the transport sees the messages; nothing is timed, only awaited.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MsgType, type Message } from '../src/core/types';
import type { RaftGroup } from '../src/driver/group';
import { RaftHost } from '../src/driver/host';
import { LevelStorage } from '../src/storage/level-storage';
import type { GroupMessage } from '../src/transport/codec';
import { LocalTransportHub, type Transport } from '../src/transport/transport';
import { ListMachine } from './mem-sm';

const CHUNK = 4096;

const until = async (what: string, cond: () => boolean, ms = 15_000): Promise<void> => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`not reached in time: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
};

/** Decides, per message, whether the hub delivers it; sees every message sent. */
type Tap = (from: number, m: Message) => boolean;

function tapped(inner: Transport, from: number, tap: () => Tap): Transport {
  return {
    send: (to, url, msgs: GroupMessage[]) => {
      const pass = msgs.filter(({ msg }) => tap()(from, msg));
      if (pass.length) inner.send(to, url, pass);
    },
    setHandler: (h) => inner.setHandler(h),
    close: () => inner.close(),
  };
}

class Node {
  host!: RaftHost;
  storage!: LevelStorage;
  group!: RaftGroup;
  constructor(readonly id: number, readonly dir: string, readonly hub: LocalTransportHub, readonly sm: ListMachine, readonly tap: () => Tap) {}
  async open(): Promise<this> {
    this.storage = await LevelStorage.open(this.dir);
    this.host = new RaftHost({
      nodeId: this.id, selfUrl: `local://${this.id}`, storage: this.storage, transport: tapped(this.hub.transport(this.id), this.id, this.tap), tickMs: 10,
      raft: { snapshotChunkSize: CHUNK }, group: { snapshotEvery: 40, compactionMargin: 5 },
    });
    this.group = await this.host.openGroup(0, this.sm);
    return this;
  }
  async close(): Promise<void> {
    await this.host.close();
    await this.storage.close();
  }
  snapDir(): string {
    return this.storage.snapshots.dir(0);
  }
}

describe('snapshot files through the driver', () => {
  let root: string;
  let hub: LocalTransportHub;
  let nodes: Node[];
  let tap: Tap;
  const members = [1, 2, 3].map((id) => ({ id, url: `local://${id}` }));
  const leader = () => nodes.find((n) => n.group.isLeader()) as Node;

  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'raft-snapfiles-'));
    hub = new LocalTransportHub();
    tap = () => true;
    nodes = [];
    for (const id of [1, 2, 3]) {
      const sm = new ListMachine();
      sm.pieceSize = 1000; // the image reaches the file in many small writes
      nodes.push(await new Node(id, join(root, `n${id}`), hub, sm, () => tap).open());
    }
    await nodes[0].group.initialize(members);
    await until('a leader', () => nodes.some((n) => n.group.isLeader()));
  });
  afterEach(async () => {
    for (const n of nodes) await n.close().catch(() => undefined);
    rmSync(root, { recursive: true, force: true });
  });

  /** Cuts `victim` off, commits 200 entries of ~500 bytes (an image of ~25 chunks), compacts, and reconnects under `tap`. */
  async function fallBehind(victim: Node, reconnect: Tap): Promise<void> {
    const l = leader();
    tap = (from, m) => from !== victim.id && m.to !== victim.id;
    for (let i = 0; i < 200; i++) await l.group.propose(Buffer.from(`${i}:`.padEnd(500, 'x')));
    await until('the leader compacted past the victim', () => l.group.core.log.offset > victim.group.status().lastIndex);
    tap = reconnect;
  }

  test('a far-behind follower receives a snapshot of many chunks from the file and ends with identical state', async () => {
    const l = leader();
    const victim = nodes.find((n) => n !== l) as Node;
    const chunks: { offset: number; length: number }[] = [];
    await fallBehind(victim, (_from, m) => {
      if (m.type === MsgType.Snap && m.to === victim.id) {
        expect(m.snap?.data?.byteLength).toBe(m.snap?.length);
        expect(m.snap?.length).toBeLessThanOrEqual(CHUNK);
        chunks.push({ offset: m.snap?.offset as number, length: m.snap?.length as number });
      }
      return true;
    });
    await until('the victim caught up', () => victim.sm.items.length === 200);
    expect(victim.sm.items).toEqual(l.sm.items);
    expect(victim.sm.restores).toBe(1);
    expect(new Set(chunks.map((c) => c.offset)).size).toBeGreaterThan(5);
    // The received image became the victim's snapshot file; nothing half-received is left.
    const snap = victim.group.core.snapshot;
    expect(snap && Object.keys(snap).sort()).toEqual(['meta', 'size']);
    expect(statSync(victim.storage.snapshots.pathOf(0, snap!.meta)).size).toBe(snap!.size);
    expect(readdirSync(victim.snapDir())).not.toContain('recv.part');
    // and the leader keeps only its current image
    expect(readdirSync(l.snapDir()).filter((f) => f.endsWith('.snap'))).toEqual([`${l.group.core.snapshot!.meta.index}-${l.group.core.snapshot!.meta.term}.snap`]);
  });

  test('a transfer interrupted by a follower restart resumes from the receiving file', async () => {
    const l = leader();
    let victim = nodes.find((n) => n !== l) as Node;
    const vid = victim.id;
    let acks = 0;
    let restarted = false;
    const respAfter: number[] = [];
    await fallBehind(victim, (from, m) => {
      if (from === vid && m.type === MsgType.SnapResp) {
        if (restarted) respAfter.push(m.snapOffset as number);
        else acks++;
      }
      // before the restart, Snap chunks stop after a few were acknowledged
      return restarted || m.type !== MsgType.Snap || m.to !== vid || acks < 3;
    });
    await until('a few chunks acknowledged', () => acks >= 3);
    await victim.close();
    const partial = statSync(join(victim.snapDir(), 'recv.part')).size;
    expect(partial).toBeGreaterThan(0);
    victim = await new Node(vid, victim.dir, hub, victim.sm, () => tap).open();
    nodes[nodes.findIndex((n) => n.id === vid)] = victim;
    restarted = true;
    const reopened = victim;
    await until('the victim caught up', () => reopened.sm.items.length === 200);
    expect(reopened.sm.items).toEqual(l.sm.items);
    expect(reopened.sm.restores).toBe(1);
    // It never asked to start over: every answer after the restart is at or past what it had.
    expect(respAfter.length).toBeGreaterThan(0);
    expect(Math.min(...respAfter)).toBeGreaterThanOrEqual(CHUNK);
    expect(existsSync(join(reopened.snapDir(), 'recv.part'))).toBe(false);
  });

  test('a transfer interrupted by a leader change starts over from the new leader and completes', async () => {
    const l = leader();
    const victim = nodes.find((n) => n !== l) as Node;
    const next = nodes.find((n) => n !== l && n !== victim) as Node;
    let acks = 0;
    let moved = false;
    await fallBehind(victim, (from, m) => {
      if (from === victim.id && m.type === MsgType.SnapResp) acks++;
      return moved || m.type !== MsgType.Snap || m.to !== victim.id || acks < 3;
    });
    await until('a few chunks acknowledged', () => acks >= 3);
    await until('the next leader compacted too', () => next.group.core.snapshot !== null && next.group.core.log.offset > victim.group.status().lastIndex);
    await l.group.transferLeadership(next.id);
    moved = true;
    await until('the victim caught up', () => victim.sm.items.length === 200);
    expect(victim.sm.items).toEqual(next.sm.items);
    expect(victim.sm.restores).toBe(1);
    expect(next.group.counters.snapshotsSent).toBeGreaterThanOrEqual(1);
    const r = await next.group.propose(Buffer.from('after'));
    await until('the victim applies new entries', () => victim.sm.applied >= r.index);
    expect(victim.sm.items.at(-1)).toBe('after');
  });
});
