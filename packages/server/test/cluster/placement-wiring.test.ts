/** The pure parts of the live placement: the initial placement of user groups, what a leader's report says, which move is still under way. */
import { initialUserGroups } from '../../src/cluster/placement/directory';
import { LAG_SLACK, liveMove, observedGroup, type ReportedShard } from '../../src/cluster/placement/executor';

const report = (shard_id: number, role: string, term: number, leader: number | null, commit: number, members: [number, boolean, number | null][]): ReportedShard => ({
  shard_id, role, term, leader, commit_index: commit,
  members: members.map(([node_id, voter, match_index]) => ({ node_id, url: `http://n${node_id}`, voter, match_index })),
});

describe('initial placement of the user groups', () => {
  it('puts groups 1..shards-1 on replication-factor nodes each, spread within one per node; shard 0 is not placed', () => {
    const groups = initialUserGroups(12, [1, 2, 3, 4, 5, 6], 3);
    expect(groups.map((g) => g.group_id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    const per = new Map<number, number>();
    for (const g of groups) {
      expect(g.voters).toHaveLength(3);
      expect(g.voters).toContain(g.leader);
      for (const v of g.voters) per.set(v, (per.get(v) ?? 0) + 1);
    }
    expect(Math.max(...per.values()) - Math.min(...per.values())).toBeLessThanOrEqual(1);
    // the same peers give the same placement on every node, whatever their order
    expect(initialUserGroups(12, [6, 5, 4, 3, 2, 1], 3)).toEqual(groups);
  });

  it('places every group on every node when there are no more nodes than the replication factor', () => {
    for (const g of initialUserGroups(4, [1, 2], 3)) expect(g.voters).toEqual([1, 2]);
    expect(initialUserGroups(1, [1, 2, 3], 3)).toEqual([]);
  });
});

describe('a group as its leader reports it', () => {
  it('takes the report of the highest term that claims leadership; members far behind the commit index lag', () => {
    const stale = report(4, 'leader', 2, 1, 50, [[1, true, 50], [2, true, 50], [3, true, 50]]);
    const current = report(4, 'leader', 3, 2, 1000, [[1, true, 1000 - LAG_SLACK], [2, true, 1000], [3, true, 10], [5, false, null]]);
    const follower = report(4, 'follower', 3, 2, 990, []);
    expect(observedGroup(4, [[stale], [current], [follower]])).toEqual({ leader: 2, voters: [1, 2, 3], learners: [5], lagging: [3, 5], confIndex: null });
    expect(observedGroup(5, [[stale], [current]])).toBeNull();
    expect(observedGroup(4, [[follower]])).toBeNull();
    // the index of its membership, when committed (a change in flight: null)
    expect(observedGroup(4, [[{ ...current, conf_index: 900 }]])!.confIndex).toBe(900);
    expect(observedGroup(4, [[{ ...current, conf_index: 1001 }]])!.confIndex).toBeNull();
  });
});

describe('the move in flight, against what the leader reports', () => {
  const move = { to: 7, from: 2, reason: 'balance' as const };
  it('is kept while the new member is a learner, or a voter beside the one it replaces', () => {
    expect(liveMove(move, [1, 2, 3], [7])).toEqual(move);
    expect(liveMove(move, [1, 2, 3, 7], [])).toEqual(move);
  });
  it('ends when the replaced member left, or the new one never joined (cancelled)', () => {
    expect(liveMove(move, [1, 3, 7], [])).toBeNull();
    expect(liveMove(move, [1, 2, 3], [])).toBeNull();
    expect(liveMove({ ...move, from: null }, [1, 2, 3, 7], [])).toBeNull();
    expect(liveMove(null, [1, 2, 3], [])).toBeNull();
  });
});
