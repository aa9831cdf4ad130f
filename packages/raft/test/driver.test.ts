/** The driver with real LevelDB storage and an in-process transport: three hosts in one test. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RaftHost } from '../src/driver/host';
import type { GroupOptions, RaftGroup } from '../src/driver/group';
import { NotLeaderError, OverloadedError } from '../src/errors';
import { LevelStorage } from '../src/storage/level-storage';
import { LocalTransportHub } from '../src/transport/transport';
import { ListMachine } from './mem-sm';

const until = async (cond: () => boolean, ms = 8000): Promise<void> => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 5));
  }
};

class Node {
  host!: RaftHost;
  storage!: LevelStorage;
  group!: RaftGroup;
  constructor(
    readonly id: number, readonly dir: string, readonly hub: LocalTransportHub, readonly sm: ListMachine, readonly snapshotEvery = 10_000, readonly maxPendingProposals = 8192,
    readonly groupOptions: Partial<GroupOptions> = {},
  ) {}
  async open(): Promise<this> {
    this.storage = await LevelStorage.open(this.dir);
    this.host = new RaftHost({
      nodeId: this.id, selfUrl: `local://${this.id}`, storage: this.storage, transport: this.hub.transport(this.id), tickMs: 10,
      group: { snapshotEvery: this.snapshotEvery, compactionMargin: 5, maxPendingProposals: this.maxPendingProposals, ...this.groupOptions },
    });
    this.group = await this.host.openGroup(0, this.sm);
    return this;
  }
  async close(): Promise<void> {
    await this.host.close();
    await this.storage.close();
  }
}

describe('RaftHost and RaftGroup', () => {
  let root: string;
  let hub: LocalTransportHub;
  let nodes: Node[];
  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'raft-driver-'));
    hub = new LocalTransportHub();
    nodes = [];
    for (const id of [1, 2, 3]) nodes.push(await new Node(id, join(root, `n${id}`), hub, new ListMachine(), 40).open());
  });
  afterEach(async () => {
    for (const n of nodes) await n.close().catch(() => undefined);
    rmSync(root, { recursive: true, force: true });
  });
  const leader = () => nodes.find((n) => n.group.isLeader()) as Node;
  const members = [1, 2, 3].map((id) => ({ id, url: `local://${id}` }));

  test('bootstrap, elect, replicate, read, restart, membership, transfer', async () => {
    expect(await nodes[0].group.initialize(members)).toBe('initialized');
    expect(await nodes[0].group.initialize(members)).toBe('already_initialized');
    await until(() => nodes.some((n) => n.group.isLeader()));
    const l = leader();
    const results = await Promise.all([...Array(100).keys()].map((i) => l.group.propose(Buffer.from(`w${i}`))));
    expect(new Set(results.map((r) => r.index)).size).toBe(100);
    expect(results.map((r) => r.result).sort((a, b) => (a as number) - (b as number))).toEqual([...Array(100).keys()].map((i) => i + 1));

    const follower = nodes.find((n) => n !== l) as Node;
    await expect(follower.group.propose(Buffer.from('x'))).rejects.toBeInstanceOf(NotLeaderError);
    await follower.group.propose(Buffer.from('x')).catch((e: NotLeaderError) => {
      expect(e.leaderId).toBe(l.id);
      expect(e.leaderUrl).toBe(`local://${l.id}`);
    });
    // a linearizable read on a follower sees every acknowledged write
    const idx = await follower.group.readBarrier();
    expect(idx).toBeGreaterThanOrEqual(Math.max(...results.map((r) => r.index)));
    expect(follower.sm.items).toHaveLength(100);
    expect(follower.sm.items).toEqual(l.sm.items);

    // snapshots were taken (snapshotEvery 40) and the log compacted, in the background
    await until(() => l.group.core.log.offset > 0);
    expect(l.group.core.log.offset).toBeGreaterThan(0);

    // restart a follower: it replays only what its state machine had not applied
    await follower.close();
    const before = follower.sm.items.length;
    const reopened = await new Node(follower.id, follower.dir, hub, follower.sm, 40).open();
    nodes[nodes.indexOf(follower)] = reopened;
    await l.group.propose(Buffer.from('after-restart'));
    await until(() => reopened.sm.items.length === before + 1);
    expect(reopened.sm.items.at(-1)).toBe('after-restart');

    // a fourth node joins as a learner, catches up (by snapshot: the log is compacted), becomes a voter
    const n4 = await new Node(4, join(root, 'n4'), hub, new ListMachine(), 40).open();
    nodes.push(n4);
    expect(await l.group.addNode(4, 'local://4')).toBe('added');
    expect(l.group.status().members.find((m) => m.id === 4)).toMatchObject({ voter: true, url: 'local://4' });
    await until(() => n4.sm.items.length === l.sm.items.length);
    expect(n4.sm.restores).toBe(1);

    // leadership transfer, then the old leader is removed by the new one
    const target = nodes.find((n) => n !== l && n.id !== 4) as Node;
    await l.group.transferLeadership(target.id);
    await until(() => target.group.isLeader());
    await target.group.removeNode(l.id);
    expect(target.group.status().members.map((m) => m.id).sort()).toEqual([1, 2, 3, 4].filter((x) => x !== l.id));
    const r = await target.group.propose(Buffer.from('final'));
    await until(() => n4.sm.applied >= r.index);
    expect(n4.sm.items.at(-1)).toBe('final');
  });

  test('a leader that removes itself hands over and the group keeps serving', async () => {
    await nodes[0].group.initialize(members);
    await until(() => nodes.some((n) => n.group.isLeader()));
    const l = leader();
    await l.group.propose(Buffer.from('a'));
    await l.group.removeNode(l.id);
    await until(() => nodes.some((n) => n !== l && n.group.isLeader()));
    const nl = leader();
    expect(nl.group.status().members.map((m) => m.id)).not.toContain(l.id);
    await nl.group.propose(Buffer.from('b'));
  });

  test('back-pressure: without a quorum, proposals beyond the bound are refused at once, and the rest commit once it returns', async () => {
    for (const n of nodes) await n.close();
    nodes = [];
    for (const id of [1, 2, 3]) nodes.push(await new Node(id, join(root, `bp${id}`), hub, new ListMachine(), 10_000, 4).open());
    await nodes[0].group.initialize(members);
    await until(() => nodes.some((n) => n.group.isLeader()));
    const l = leader();
    await l.group.propose(Buffer.from('before'));
    const others = nodes.filter((n) => n !== l);
    const cut = (on: boolean) => {
      for (const o of others) {
        for (const key of [`${l.id}>${o.id}`, `${o.id}>${l.id}`]) {
          if (on) hub.blocked.add(key);
          else hub.blocked.delete(key);
        }
      }
    };
    cut(true);
    const waiting = [0, 1, 2, 3].map((i) => l.group.propose(Buffer.from(`held${i}`)));
    await expect(l.group.propose(Buffer.from('one too many'))).rejects.toBeInstanceOf(OverloadedError);
    cut(false);
    const held = await Promise.allSettled(waiting);
    // each held proposal either committed or (if leadership moved meanwhile) failed as not committed; none hangs
    expect(held.every((r) => r.status === 'fulfilled' || r.reason instanceof Error)).toBe(true);
    await until(() => nodes.some((n) => n.group.isLeader()));
    await expect(leader().group.propose(Buffer.from('after'))).resolves.toMatchObject({ index: expect.any(Number) });
  });

  test('a snapshot that came due while another was written starts when that one ends, not at the next write', async () => {
    // the first image is held until released, while enough is applied for a second one; then nothing is written
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    class HeldMachine extends ListMachine {
      first = true;
      override async snapshot(out: Parameters<ListMachine['snapshot']>[0]) {
        const at = { index: this.applied, term: this.appliedTerm };
        const image = Buffer.from(JSON.stringify(this.items));
        if (this.first) {
          this.first = false;
          await held;
        }
        await out.write(image);
        return at;
      }
    }
    const options = { snapshotEveryBytes: 64 * 1024, compactionMargin: 1000, compactionMarginBytes: 16 * 1024 };
    const solo = await new Node(9, join(root, 'due'), hub, new HeldMachine(), 10_000, 8192, options).open();
    try {
      await solo.group.initialize([{ id: 9, url: 'local://9' }]);
      await until(() => solo.group.isLeader());
      for (let i = 0; i < 20; i++) await solo.group.propose(Buffer.alloc(8 * 1024, i)); // the first image is taken at 64 KiB, then 96 KiB more
      const last = solo.group.core.applied;
      release();
      await until(() => (solo.group.core.snapshot?.meta.index ?? 0) >= last);
    } finally {
      await solo.close();
    }
  });

  test('applied payloads beyond heldPayloadBytes leave memory, and a lagging follower is sent them from disk', async () => {
    // 8 KiB of payloads held in memory; snapshots far away (no compaction): the follower catches up from the log
    for (const n of nodes) await n.close();
    nodes = [];
    const options = { heldPayloadBytes: 8 * 1024 };
    for (const id of [1, 2, 3]) nodes.push(await new Node(id, join(root, `held${id}`), hub, new ListMachine(), 10_000, 8192, options).open());
    await nodes[0].group.initialize(members);
    await until(() => nodes.some((n) => n.group.isLeader()));
    const l = leader();
    const lagging = nodes.find((n) => n !== l)!;
    for (const key of [`${l.id}>${lagging.id}`, `${lagging.id}>${l.id}`]) hub.blocked.add(key);
    const payload = (i: number) => Buffer.alloc(4 * 1024, i + 1);
    for (let i = 0; i < 30; i++) await l.group.propose(payload(i)); // 120 KiB, applied by the two others
    // (the last apply's payloads leave once it has returned; the membership entry's stay)
    await until(() => l.group.logSize().held <= 9 * 1024);
    expect(l.group.logSize().bytes).toBeGreaterThanOrEqual(120 * 1024);
    expect(l.group.core.log.entries.filter((e) => e.offloaded !== undefined).length).toBeGreaterThanOrEqual(27);
    // the follower comes back: every entry it lacks was read back from disk (no snapshot exists)
    for (const key of [`${l.id}>${lagging.id}`, `${lagging.id}>${l.id}`]) hub.blocked.delete(key);
    await until(() => lagging.sm.items.length === 30);
    expect(lagging.sm.restores).toBe(0);
    expect(lagging.sm.items).toEqual(l.sm.items);
    expect(l.sm.items).toEqual([...Array(30).keys()].map((i) => payload(i).toString()));
    await until(() => lagging.group.logSize().held <= 9 * 1024);
    // a restart reads the log back and lets what was applied leave memory again
    await lagging.close();
    const reopened = await new Node(lagging.id, lagging.dir, hub, lagging.sm, 10_000, 8192, options).open();
    nodes[nodes.indexOf(lagging)] = reopened;
    expect(reopened.group.logSize().held).toBeLessThanOrEqual(9 * 1024);
    await l.group.propose(payload(30));
    await until(() => reopened.sm.items.length === 31);
  });

  test('large entries: a snapshot by bytes, and a compaction margin held to its bytes', async () => {
    // a group of one, snapshots every 10,000 entries or 64 KiB, a margin of 1,000 entries or 16 KiB
    const dir = join(root, 'bytes');
    const options = { snapshotEveryBytes: 64 * 1024, compactionMargin: 1000, compactionMarginBytes: 16 * 1024 };
    const solo = await new Node(9, dir, hub, new ListMachine(), 10_000, 8192, options).open();
    try {
      await solo.group.initialize([{ id: 9, url: 'local://9' }]);
      await until(() => solo.group.isLeader());
      for (let i = 0; i < 40; i++) await solo.group.propose(Buffer.alloc(8 * 1024, i)); // 320 KiB in 40 entries
      await until(() => solo.group.core.log.offset > 0);
      // compacted far within the 1,000-entry margin: at most 16 KiB behind the snapshot, plus what came after it (< 64 KiB)
      await until(() => solo.group.logSize().bytes < 16 * 1024 + 64 * 1024 + 8 * 1024);
      expect(solo.group.logSize().entries).toBeLessThan(12);
      expect(solo.sm.items).toHaveLength(40);
    } finally {
      await solo.close();
    }
  });
});
