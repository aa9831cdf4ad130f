/**
 * A group's replica wiped in place (RaftHost.resetGroup, docs/cluster.md "Disk reclaimed"): its log,
 * hard state and snapshot files leave the storage, the group opens again blank and can be added back
 * like a new node; a wipe a crash interrupted is finished by the next load.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RaftHost } from '../src/driver/host';
import type { RaftGroup } from '../src/driver/group';
import { LevelStorage } from '../src/storage/level-storage';
import { LocalTransportHub } from '../src/transport/transport';
import type { AppliedEntry } from '../src/driver/state-machine';
import { ListMachine } from './mem-sm';

const G = 5;

async function until(what: string, check: () => boolean): Promise<void> {
  for (let i = 0; i < 3000; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Every key of a group in the storage (group id is bytes 1..4 of each key). */
async function keysOf(storage: LevelStorage, group: number): Promise<number> {
  let n = 0;
  for await (const k of storage.db.keys()) if (k.readUInt32BE(1) === group) n++;
  return n;
}

test('a removed replica is wiped in place: no key but its removal, no snapshot file; added back, it catches up from nothing', async () => {
  const root = mkdtempSync(join(tmpdir(), 'raft-reset-'));
  const hub = new LocalTransportHub();
  const nodes = new Map<number, { host: RaftHost; storage: LevelStorage; sm: ListMachine; group: RaftGroup }>();
  try {
    for (const id of [1, 2, 3, 4]) {
      const storage = await LevelStorage.open(join(root, `n${id}`));
      // snapshots early, so node 3 holds a snapshot file before it is wiped
      const host = new RaftHost({ nodeId: id, selfUrl: `local://${id}`, storage, transport: hub.transport(id), tickMs: 10, group: { snapshotEvery: 20, compactionMargin: 5 } });
      const sm = new ListMachine();
      nodes.set(id, { host, storage, sm, group: await host.openGroup(G, sm) });
    }
    const n = (id: number) => nodes.get(id)!;
    await n(1).group.initialize([1, 2, 3].map((id) => ({ id, url: `local://${id}` })));
    const leader = () => [...nodes.values()].find((x) => x.group.isLeader())!.group;
    await until('a leader', () => [...nodes.values()].some((x) => x.group.isLeader()));
    for (let i = 0; i < 60; i++) await leader().propose(Buffer.from(`a${i}`));
    await until('node 3 applied everything', () => n(3).sm.items.length === 60);
    expect(existsSync(n(3).storage.snapshots.dir(G))).toBe(true);

    // node 4 replaces node 3: learner, promoted, then 3 removed; the removal answers its entry's index
    if (leader() === n(3).group) await n(3).group.transferLeadership(1);
    await leader().addLearner(4, 'local://4');
    await until('node 4 caught up', () => leader().caughtUp(4));
    await leader().promoteLearner(4);
    const removedAt = await leader().removeNode(3);
    expect(removedAt).toBeGreaterThan(60);
    for (let i = 0; i < 10; i++) await leader().propose(Buffer.from(`b${i}`));

    const g3 = await n(3).host.resetGroup(G, n(3).sm, removedAt);
    nodes.get(3)!.group = g3;
    expect(n(3).sm.resets).toBe(1);
    expect(n(3).sm.items).toEqual([]);
    // one key is left: the removal's index, which keeps the blank replica out of the group's elections (wiped-votes.test.ts)
    expect(await keysOf(n(3).storage, G)).toBe(1);
    expect(existsSync(n(3).storage.snapshots.dir(G))).toBe(false);
    const s = g3.status();
    expect([s.lastIndex, s.appliedIndex, s.members.length]).toEqual([0, 0, 0]);
    // the other replicas go on
    await leader().propose(Buffer.from('c'));
    await until('node 4 has every write', () => n(4).sm.items.length === 71);

    // added back, the blank replica catches up from nothing (a snapshot, then the log)
    await leader().addLearner(3, 'local://3');
    await until('node 3 caught up again', () => leader().caughtUp(3));
    await leader().promoteLearner(3);
    await until('node 3 holds every write again', () => n(3).sm.items.length === 71);
    expect(n(3).sm.items).toEqual(n(4).sm.items);
  } finally {
    for (const x of nodes.values()) await x.host.close();
    for (const x of nodes.values()) await x.storage.close();
    rmSync(root, { recursive: true, force: true });
  }
});

test('a wipe interrupted after its first synced batch is finished by the next load', async () => {
  const root = mkdtempSync(join(tmpdir(), 'raft-wipe-'));
  try {
    let storage = await LevelStorage.open(root);
    const hub = new LocalTransportHub();
    const host = new RaftHost({ nodeId: 1, selfUrl: 'local://1', storage, transport: hub.transport(1), tickMs: 10, group: { snapshotEvery: 10, compactionMargin: 2 } });
    const group = await host.openGroup(G, new ListMachine());
    const other = await host.openGroup(G + 1, new ListMachine());
    await group.initialize([{ id: 1, url: 'local://1' }]);
    await other.initialize([{ id: 1, url: 'local://1' }]);
    await until('a leader', () => group.isLeader() && other.isLeader());
    for (let i = 0; i < 25; i++) await Promise.all([group.propose(Buffer.from(`x${i}`)), other.propose(Buffer.from(`y${i}`))]);
    await host.close();
    // what dropGroup writes first, and then nothing more (a crash): the marker, without the metadata
    const key = (kind: number) => Buffer.from([0x72, 0, 0, 0, G, kind]);
    await storage.db.batch([{ type: 'put', key: key(7), value: Buffer.from('1') }, { type: 'del', key: key(1) }, { type: 'del', key: key(2) }, { type: 'del', key: key(3) }], { sync: true });
    await storage.close();

    storage = await LevelStorage.open(root);
    const loaded = await storage.load(G);
    expect([loaded.entries.length, loaded.offset, loaded.snapshot, loaded.hardState.term]).toEqual([0, 0, null, 0]);
    expect(await keysOf(storage, G)).toBe(0);
    expect(existsSync(storage.snapshots.dir(G))).toBe(false);
    // the neighbouring group is untouched
    const kept = await storage.load(G + 1);
    expect(kept.offset + kept.entries.length).toBeGreaterThanOrEqual(26);
    await storage.close();
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a removed group is closed for good: its storage deleted, messages for it ignored, the other groups untouched', async () => {
  const root = mkdtempSync(join(tmpdir(), 'raft-remove-'));
  const hub = new LocalTransportHub();
  const nodes = new Map<number, { host: RaftHost; storage: LevelStorage; sm: ListMachine; group: RaftGroup }>();
  try {
    for (const id of [1, 2, 3]) {
      const storage = await LevelStorage.open(join(root, `n${id}`));
      const host = new RaftHost({ nodeId: id, selfUrl: `local://${id}`, storage, transport: hub.transport(id), tickMs: 10, group: { snapshotEvery: 20, compactionMargin: 5 } });
      const sm = new ListMachine();
      nodes.set(id, { host, storage, sm, group: await host.openGroup(G, sm) });
    }
    const n = (id: number) => nodes.get(id)!;
    const other = await n(3).host.openGroup(G + 1, new ListMachine());
    await other.initialize([{ id: 3, url: 'local://3' }]);
    await n(1).group.initialize([1, 2, 3].map((id) => ({ id, url: `local://${id}` })));
    await until('a leader', () => [...nodes.values()].some((x) => x.group.isLeader()));
    const leader = () => [...nodes.values()].find((x) => x.group.isLeader())!.group;
    for (let i = 0; i < 40; i++) await leader().propose(Buffer.from(`a${i}`));
    await until('node 3 applied everything', () => n(3).sm.items.length === 40);
    await until('other leads', () => other.isLeader());
    for (let i = 0; i < 5; i++) await other.propose(Buffer.from(`o${i}`));
    expect(existsSync(n(3).storage.snapshots.dir(G))).toBe(true);

    await n(3).host.removeGroup(G);
    expect(n(3).host.groups.has(G)).toBe(false);
    expect(await keysOf(n(3).storage, G)).toBe(0);
    expect(existsSync(n(3).storage.snapshots.dir(G))).toBe(false);
    // the others go on, and what their leader sends node 3 for the group is ignored: nothing comes back
    if (leader() === n(3).group) await until('a leader among 1 and 2', () => n(1).group.isLeader() || n(2).group.isLeader());
    const live = () => (n(1).group.isLeader() ? n(1).group : n(2).group);
    for (let i = 0; i < 30; i++) await live().propose(Buffer.from(`b${i}`));
    await new Promise((r) => setTimeout(r, 300));
    expect(n(3).host.groups.has(G)).toBe(false);
    expect(await keysOf(n(3).storage, G)).toBe(0);
    expect(n(3).sm.items).toHaveLength(40);
    // the node's other group is untouched; removing again (a removal a crash interrupted) is harmless
    await other.propose(Buffer.from('o5'));
    expect(await keysOf(n(3).storage, G + 1)).toBeGreaterThan(0);
    await n(3).host.removeGroup(G);
    expect(await keysOf(n(3).storage, G)).toBe(0);
  } finally {
    for (const x of nodes.values()) await x.host.close();
    for (const x of nodes.values()) await x.storage.close();
    rmSync(root, { recursive: true, force: true });
  }
});

/**
 * A list machine whose applies of commands wait while held, and whose storage the caller can close
 * (as the server closes a removed group's StateDb once RaftHost.removeGroup has returned): an apply
 * that runs on after that fails as LevelDB's would.
 */
class ClosableMachine extends ListMachine {
  held = false;
  inApply = false;
  closed = false;
  readonly events: string[] = [];
  private release: (() => void)[] = [];

  override async apply(entries: AppliedEntry[]): Promise<unknown[]> {
    if (this.held && entries.some((e) => e.kind === 'command')) {
      this.inApply = true;
      await new Promise<void>((r) => this.release.push(r));
      this.inApply = false;
      if (this.closed) throw new Error('Database is not open');
      this.events.push('apply ended');
    }
    return super.apply(entries);
  }

  let(): void {
    this.held = false;
    for (const r of this.release.splice(0)) r();
  }
}

test('a removal waits for the group\'s apply in flight: the state machine is never used after it returns, and the node goes on', async () => {
  // The driver applies a pass's entries while its next passes write (pipelined apply). A removal that
  // waited only for the pass let the server close the group's StateDb under a running apply: the apply
  // threw "Database is not open", the host stopped, and the node served no write of any group again
  // (test/cluster/merge-failover.test.ts: a restarted node applying a removal while catching up).
  const root = mkdtempSync(join(tmpdir(), 'raft-remove-applying-'));
  const hub = new LocalTransportHub();
  const errors: Error[] = [];
  const storage = await LevelStorage.open(join(root, 'n1'));
  const host = new RaftHost({ nodeId: 1, selfUrl: 'local://1', storage, transport: hub.transport(1), tickMs: 10, onError: (err) => errors.push(err) });
  try {
    const sm = new ClosableMachine();
    const group = await host.openGroup(G, sm);
    const other = await host.openGroup(G + 1, new ListMachine());
    for (const g of [group, other]) await g.initialize([{ id: 1, url: 'local://1' }]);
    await until('both led', () => group.isLeader() && other.isLeader());
    for (let i = 0; i < 5; i++) await group.propose(Buffer.from(`a${i}`));

    sm.held = true;
    const last = group.propose(Buffer.from('held')).catch((err: Error) => err);
    await until('an apply in flight', () => sm.inApply);
    const removal = host.removeGroup(G).then(() => {
      sm.closed = true; // the server closes the group's state once the removal returned
      sm.events.push('removed');
    });
    // the apply is let go once the removal returned, or after a while if the removal waits for it
    await Promise.race([removal, new Promise((r) => setTimeout(r, 300))]);
    sm.let();
    await removal;
    await last;
    await until('the apply settled', () => !sm.inApply);
    expect(sm.events).toEqual(['apply ended', 'removed']);
    expect(errors).toEqual([]);
    expect(await keysOf(storage, G)).toBe(0);
    // the node's other group still takes writes
    await other.propose(Buffer.from('o'));
  } finally {
    await host.close();
    await storage.close();
    rmSync(root, { recursive: true, force: true });
  }
});

/** Holds every apply of a command until let go, one at a time (`lets` counts the applies let go). */
class GatedMachine extends ListMachine {
  inApply = 0;
  private gates: (() => void)[] = [];

  override async apply(entries: AppliedEntry[]): Promise<unknown[]> {
    if (entries.some((e) => e.kind === 'command')) {
      this.inApply++;
      await new Promise<void>((r) => this.gates.push(r));
      this.inApply--;
    }
    return super.apply(entries);
  }

  /** Lets the apply waiting now go on. */
  letOne(): void {
    this.gates.shift()?.();
  }

  letAll(): void {
    for (const r of this.gates.splice(0)) r();
  }
}

test('a wipe waits for the applies in flight when it began, not for the node\'s other groups to stop being written', async () => {
  // resetGroup waited until no apply at all was in flight. The driver applies a pass's entries while its
  // next passes write, so on a node whose other groups take writes a new apply is always in flight: the
  // wipe of a replica moved away waited as long as the node was written to, and the placement loop's drop
  // request went unanswered meanwhile (test/cluster/elastic.test.ts: a leaving node still holds busy groups).
  const root = mkdtempSync(join(tmpdir(), 'raft-reset-busy-'));
  const hub = new LocalTransportHub();
  const errors: Error[] = [];
  const storage = await LevelStorage.open(join(root, 'n1'));
  const host = new RaftHost({ nodeId: 1, selfUrl: 'local://1', storage, transport: hub.transport(1), tickMs: 10, onError: (err) => errors.push(err) });
  const busy = new GatedMachine();
  try {
    const sm = new ListMachine();
    const group = await host.openGroup(G, sm);
    const other = await host.openGroup(G + 1, busy);
    for (const g of [group, other]) await g.initialize([{ id: 1, url: 'local://1' }]);
    await until('both led', () => group.isLeader() && other.isLeader());
    for (let i = 0; i < 5; i++) await group.propose(Buffer.from(`a${i}`));

    // the other group's first write is being applied (held) when the wipe begins
    const writes = [other.propose(Buffer.from('o1'))];
    await until('an apply of the other group in flight', () => busy.inApply === 1);
    let wiped = false;
    const reset = host.resetGroup(G, sm).then((g) => {
      wiped = true;
      return g;
    });
    // a second write of the other group is committed and its apply queued behind the first: from now on
    // an apply is in flight whenever the first ends (as under a steady load)
    writes.push(other.propose(Buffer.from('o2')));
    await until('a second apply queued', () => host.applyBacklog().entries >= 2);
    busy.letOne(); // the apply in flight when the wipe began ends; the second one is held
    await until('the wipe done while the other group still applies', () => wiped);
    expect(busy.inApply).toBe(1);
    const g = await reset;
    expect([sm.resets, sm.items.length, g.status().lastIndex]).toEqual([1, 0, 0]);
    busy.letAll();
    await Promise.all(writes);
    expect(busy.items).toEqual(['o1', 'o2']);
    expect(errors).toEqual([]);
  } finally {
    busy.letAll();
    await host.close();
    await storage.close();
    rmSync(root, { recursive: true, force: true });
  }
});
