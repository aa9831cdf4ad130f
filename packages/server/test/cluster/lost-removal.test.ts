/**
 * A removal whose step answer was lost still gets its replica dropped (docs/cluster.md "Disk
 * reclaimed"). Seen in test/cluster/elastic.test.ts: the placement loop asked group 1's leader to remove
 * node 6, the change took longer than the proposal timeout on a loaded machine, the step answered 409
 * "outcome unknown", and the change committed anyway. The loop recorded a drop only from a step's answer,
 * so none was recorded, and node 6's replica (1,010 records) stayed on its disk for good.
 *
 * Here the real PlacementExecutor runs rounds against scripted nodes: node 4 has left the cluster (it is
 * no longer in shard 0) and is still a voter of group 1, led by this node (1). The removal's step commits
 * and its answer is lost; the next rounds must record and send the drop all the same, at the index of
 * the membership the group's leader reports, and only once that membership is committed.
 */
import pino from 'pino';
import type { GroupPlacementRecord } from '@strata/store';
import { PlacementExecutor, removedMembers, type ReportedShard } from '../../src/cluster/placement/executor';
import type { PlacementDirectory } from '../../src/cluster/placement/directory';
import type { Forwarder } from '../../src/cluster/forward';
import type { PeerSigner } from '../../src/cluster/peer-auth';
import type { ClusterRuntime } from '../../src/cluster/runtime';
import type { Shard } from '../../src/shards';

const url = (n: number) => `http://node-${n}.test`;

/** Group 1 as its members see it: a voter set, the index of its membership entry, the commit index. */
class FakeGroup {
  voters = [1, 2, 3, 4];
  confIndex = 10;
  commit = 40;

  report(node: number): ReportedShard {
    return {
      shard_id: 1, leader: 1, term: 2, role: node === 1 ? 'leader' : 'follower', commit_index: this.commit, conf_index: this.confIndex,
      members: this.voters.map((id) => ({ node_id: id, url: url(id), voter: true, match_index: this.commit })),
    };
  }
}

function harness(answer: 'lost' | 'answered') {
  const group = new FakeGroup();
  const records = new Map<number, GroupPlacementRecord>([[1, { group_id: 1, voters: [1, 2, 3, 4], learners: [], leader: 1, move: null }]]);
  const drops: { group: number; index: number; to: string }[] = [];
  const steps: string[] = [];
  const rt = {
    config: { cluster: { node_id: 1, placement_interval_ms: 300, auto_split_records: 0, replication_factor: 3, dead_after_s: 30, max_moves: 2 } },
    shardIds: () => [0, 1],
    group: () => ({ status: () => ({ members: [1, 2, 3].map((id) => ({ id, voter: true })) }) }),
    urlOf: (n: number) => (n <= 3 ? url(n) : null), // node 4 has left shard 0
  };
  const meta = {
    log: {
      isLeader: () => true,
      propose: async (c: { type: string; groups: GroupPlacementRecord[] }) => {
        for (const r of c.groups) records.set(r.group_id, r);
        return {};
      },
    },
  };
  const directory = { recorded: (g: number) => records.has(g), get: (g: number) => records.get(g)! };
  const fwd = {
    call: async (to: string, _method: string, path: string, _headers: unknown, body: { kind?: string; node?: number; index?: number }) => {
      const node = Number(/node-(\d+)/.exec(to)![1]);
      if (path === '/v1/cluster/status') return { status: 200, body: { shards: [group.report(node)] }, headers: {} };
      if (path === '/v1/cluster/groups/1/steps') {
        steps.push(`${body.kind} ${body.node}`);
        if (body.kind !== 'remove') throw new Error(`unexpected step ${body.kind}`);
        // the change is appended (membership in force from its entry on) and commits...
        group.voters = group.voters.filter((v) => v !== body.node);
        group.confIndex = 41;
        if (answer === 'answered') {
          group.commit = 41;
          return { status: 200, body: { status: 'removed', index: 41 }, headers: {} };
        }
        // ...but only after the proposal's deadline: the answer is lost (the leader's 409 "outcome unknown")
        return { status: 409, body: { error: 'Shard 1: remove of node 4 not done: the proposal was not committed in time' }, headers: {} };
      }
      if (path === '/v1/cluster/groups/1/drop') {
        drops.push({ group: 1, index: body.index!, to });
        return { status: 200, body: { shard_id: 1, status: 'dropped' }, headers: {} };
      }
      throw new Error(`unexpected call ${path}`);
    },
  };
  const executor = new PlacementExecutor({
    rt: rt as unknown as ClusterRuntime, meta: meta as unknown as Shard, directory: directory as unknown as PlacementDirectory,
    fwd: fwd as unknown as Forwarder, signer: { sign: () => ({}) } as unknown as PeerSigner,
    localStatus: async () => ({ shards: [group.report(1)] }), logger: pino({ level: 'silent' }),
  });
  return { group, records, drops, steps, executor };
}

describe('a removal whose step answer was lost', () => {
  it('is found in the group leader\'s membership: its drop is recorded once that membership is committed, and sent', async () => {
    const h = harness('lost');
    let now = 1_000_000;
    // node 4 is seen as a member of group 1 that left the cluster, drained: removed from group 1, the answer lost
    for (let i = 0; i < 5 && h.steps.length === 0; i++) await h.executor.round((now += 1000));
    expect(h.steps).toEqual(['remove 4']);
    expect(h.records.get(1)!.drops ?? []).toEqual([]);

    // the change has not committed yet: nothing is decided, the record keeps node 4 for now
    await h.executor.round((now += 1000));
    expect(h.records.get(1)!.voters).toEqual([1, 2, 3, 4]);
    expect(h.records.get(1)!.drops ?? []).toEqual([]);
    expect(h.steps).toEqual(['remove 4']);

    // committed: node 4 is gone from the leader's membership; its drop is recorded at that membership's index
    h.group.commit = 41;
    await h.executor.round((now += 1000));
    expect(h.records.get(1)).toMatchObject({ voters: [1, 2, 3], drops: [{ node: 4, index: 41, url: url(4) }] });
    // and sent to node 4 (at the URL the group's members named: it is in no membership any more), then settled
    await h.executor.round((now += 1000));
    expect(h.drops).toEqual([{ group: 1, index: 41, to: url(4) }]);
    expect(h.records.get(1)!.drops ?? []).toEqual([]);
    expect(h.steps).toEqual(['remove 4']);
  });

  it('an answered removal is recorded once, from its answer', async () => {
    const h = harness('answered');
    let now = 1_000_000;
    for (let i = 0; i < 5 && h.steps.length === 0; i++) await h.executor.round((now += 1000));
    expect(h.records.get(1)).toMatchObject({ voters: [1, 2, 3], drops: [{ node: 4, index: 41, url: url(4) }] });
    await h.executor.round((now += 1000));
    await h.executor.round((now += 1000));
    expect(h.drops).toEqual([{ group: 1, index: 41, to: url(4) }]);
    expect(h.steps).toEqual(['remove 4']);
    expect(h.records.get(1)!.drops ?? []).toEqual([]);
  });
});

describe('removedMembers (pure)', () => {
  const rec = { voters: [1, 2, 3], learners: [5] };
  it('names the members the leader no longer reports, at its committed membership', () => {
    expect(removedMembers(rec, { voters: [1, 2], learners: [], confIndex: 70 })).toEqual({ gone: [3, 5], index: 70, hold: false });
    expect(removedMembers(rec, { voters: [1, 2, 3, 5], learners: [], confIndex: 70 })).toEqual({ gone: [], index: null, hold: false });
    expect(removedMembers(rec, { voters: [1, 2, 3], learners: [5, 6], confIndex: null })).toEqual({ gone: [], index: null, hold: false });
  });
  it('holds while the membership that removed them is not committed, and decides nothing without a record or a leader', () => {
    expect(removedMembers(rec, { voters: [1, 2], learners: [5], confIndex: null })).toEqual({ gone: [], index: null, hold: true });
    expect(removedMembers(null, { voters: [1, 2], learners: [], confIndex: 70 })).toEqual({ gone: [], index: null, hold: false });
    expect(removedMembers(rec, null)).toEqual({ gone: [], index: null, hold: false });
  });
});
