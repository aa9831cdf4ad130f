/**
 * Disk reclaimed (docs/cluster.md "Placement"): when a node wipes a replica it was removed from. The
 * rule first as a pure function over what the node knows, then on real Raft groups over the real state
 * machine (LevelDB): a node down during its removal wipes when it comes back, a drop delayed past a
 * re-add keeps the replica, and the placement loop's record of pending drops.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { PlacementDrop } from '@strata/store';
import { dropSettled, nextDrops } from '../../src/cluster/placement/executor';
import { dropDecision, ReplicaDrops, replicaView, type ReplicaView } from '../../src/cluster/replica-drop';
import { replicaGroup } from './replica-group';

const conf = (voters: number[], learners: number[] = []) => ({ voters, learners, addrs: {} });
const view = (v: Partial<ReplicaView>): ReplicaView => ({ self: 3, lastIndex: 100, logMembers: [], appliedIndex: 100, appliedMembers: conf([1, 2, 4]), ...v });

describe('the decision rule (pure)', () => {
  const R = 50;
  it('wipes a replica whose log ends before its removal: it never saw it, nor a re-add', () => {
    expect(dropDecision(view({ lastIndex: 49, logMembers: [1, 2, 3], appliedIndex: 40, appliedMembers: conf([1, 2, 3]) }), R)).toBe('wipe');
  });
  it('wipes a replica that applied its removal and whose log names it no more', () => {
    expect(dropDecision(view({ lastIndex: 50, appliedIndex: 50 }), R)).toBe('wipe');
    expect(dropDecision(view({ lastIndex: 80, appliedIndex: 70 }), R)).toBe('wipe');
  });
  it('waits while the removal is in its log but not applied', () => {
    expect(dropDecision(view({ lastIndex: 60, appliedIndex: 45, appliedMembers: conf([1, 2, 3]) }), R)).toBe('not_yet');
  });
  it('keeps a replica added back after the removal: a delayed or replayed drop cannot wipe it', () => {
    // re-added as a learner at 70, caught up: its log names it
    expect(dropDecision(view({ lastIndex: 90, logMembers: [1, 2, 4, 3], appliedIndex: 90, appliedMembers: conf([1, 2, 4], [3]) }), R)).toBe('member');
    // the re-add is in the log, not yet applied (the applied membership still says removed)
    expect(dropDecision(view({ lastIndex: 90, logMembers: [1, 2, 4, 3], appliedIndex: 60 }), R)).toBe('member');
    // promoted to voter again, and a later removal of it is in its log but not committed: the applied membership names it
    expect(dropDecision(view({ lastIndex: 120, logMembers: [1, 2, 4], appliedIndex: 110, appliedMembers: conf([1, 2, 3, 4]) }), R)).toBe('member');
  });
  it('has nothing to do for a blank replica (wiped already, or added back and not sent anything yet)', () => {
    expect(dropDecision(view({ lastIndex: 0, logMembers: [], appliedIndex: 0, appliedMembers: null }), R)).toBe('dropped');
  });
});

describe('the pending drops the placement loop records', () => {
  const d = (node: number, index: number): PlacementDrop => ({ node, index, url: `http://127.0.0.1:${node}` });
  it('forgets settled drops and those of members again, keeps the rest, and keeps the newest index per node', () => {
    const a = d(3, 10);
    const b = d(4, 12);
    const c = d(5, 14);
    expect(nextDrops([a, b, c], new Set([a]), [1, 2, 5], [])).toEqual([b]);
    expect(nextDrops([b], new Set(), [1, 2], [d(4, 30)])).toEqual([d(4, 30)]);
    expect(nextDrops([d(4, 30)], new Set(), [1, 2], [d(4, 20)])).toEqual([d(4, 30)]);
  });
});

/** Real groups: RaftHost over LevelStorage, each replica Strata's state machine on its own LevelDB. */
describe('on real replicas', () => {
  const G = 3;
  const { n, home, open, close, leader, until, write, userCount, replace3 } = replicaGroup({
    group: G, tmpPrefix: 'replica-drop-', stateDir: (nodeHome) => join(nodeHome, 'state'),
  });
  const drops = (id: number) => new ReplicaDrops({
    view: () => replicaView(id, n(id).group, n(id).applier),
    wipe: async () => {
      n(id).group = await n(id).host.resetGroup(G, n(id).applier);
    },
  });

  it('a node down during its removal wipes its replica when it comes back, and its state directory holds nothing', async () => {
    await close(3);
    const removedAt = await replace3();
    for (let i = 30; i < 40; i++) await write(`u${i}`);
    await open(3);
    expect(await userCount(3)).toBe(30);
    expect(await drops(3).drop(G, removedAt)).toEqual({ status: 'dropped' });
    expect(await userCount(3)).toBe(0);
    expect(n(3).applier.appliedIndex()).toBe(0);
    expect(n(3).group.status().lastIndex).toBe(0);
    expect(existsSync(n(3).storage.snapshots.dir(G))).toBe(false);
    // the state directory was set aside and deleted, not emptied key by key: no table of the old data is left
    expect(readdirSync(home(3)).sort()).toEqual(['raft', 'state']);
    expect(readdirSync(join(home(3), 'state')).filter((f) => f.endsWith('.ldb'))).toEqual([]);
    // asked again (a replayed request): nothing more to do
    expect(await drops(3).drop(G, removedAt)).toEqual({ status: 'dropped' });
    // the group lost nothing
    await until('node 4 applied every write', () => n(4).applier.appliedIndex() === leader()!.status().commitIndex);
    expect(await userCount(4)).toBe(40);
  });

  it('a drop delayed past a re-add keeps the replica; one after the next removal wipes it', async () => {
    const removedAt = await replace3();
    // (the leader stops sending to node 3 when it appends the removal: 3's log usually ends before it)
    // added back before the drop arrives
    await leader()!.addLearner(3, 'local://3');
    await until('node 3 caught up', () => leader()!.caughtUp(3));
    await leader()!.promoteLearner(3);
    for (let i = 30; i < 35; i++) await write(`u${i}`);
    await until('node 3 applied every write', () => n(3).applier.appliedIndex() === leader()!.status().commitIndex);
    expect(await drops(3).drop(G, removedAt)).toEqual({ status: 'member' });
    expect(await userCount(3)).toBe(35);
    expect(n(3).group.isVoter()).toBe(true);

    // removed again: the old request, replayed, still finds it named by its log (it never sees its own
    // removal) and keeps it; the request of the new removal wipes it
    const again = await leader()!.removeNode(3);
    expect(again).toBeGreaterThan(removedAt);
    expect(await drops(3).drop(G, removedAt)).toEqual({ status: 'member' });
    expect(await userCount(3)).toBe(35);
    expect(await drops(3).drop(G, again)).toEqual({ status: 'dropped' });
    expect(await userCount(3)).toBe(0);
  });
});

test('a drop is settled by the node dropping or being a member; a node that left the cluster also by having no such group, or by silence', () => {
  const ok = (status: string) => ({ status: 200, body: { shard_id: 5, status } });
  const notFound = { status: 404, body: { error: 'No shard 5 in this cluster.', code: 'not_found' } };
  expect([dropSettled(ok('dropped'), true, 0, 30_000), dropSettled(ok('member'), true, 0, 30_000), dropSettled(ok('not_yet'), true, 0, 30_000)]).toEqual([true, true, false]);
  // a node still in the cluster that does not know the group (yet: it may not have opened it) is asked again
  expect(dropSettled(notFound, true, 0, 30_000)).toBe(false);
  // one removed from the cluster never opens it now (its shard 0 receives nothing): nothing of it is there
  expect(dropSettled(notFound, false, 0, 30_000)).toBe(true);
  expect([dropSettled(null, false, 29_999, 30_000), dropSettled(null, false, 30_000, 30_000), dropSettled(null, true, 90_000, 30_000)]).toEqual([false, true, false]);
  expect(dropSettled({ status: 503, body: null }, false, 0, 30_000)).toBe(false);
});
