/**
 * /metrics of three real node processes after writes through leader and followers (issue 17, item 2):
 * every node agrees on each shard's leader and term, commit indexes converge and are applied, the
 * leader saw its followers catch up, and peer round trips were measured both ways.
 */
import { newStream, TestCluster, waitFor, writeEvent } from '../helpers/cluster';
import { scrape, type Scrape } from '../helpers/prometheus';

jest.setTimeout(90_000);

const SHARDS = ['0', '1'];
const WRITES = 12;

describe('metrics of a 3-node cluster', () => {
  let cluster: TestCluster;
  const leaders = new Map<string, number>();
  /** each shard's leader as every node agrees (looked up before each test: an election may move it) */
  const findLeaders = async () => {
    for (const shard of SHARDS) leaders.set(shard, await cluster.leader(Number(shard)));
  };

  beforeAll(async () => {
    cluster = await TestCluster.start({ nodes: 3, shards: 2 });
    const stream = newStream();
    const nodes = cluster.live();
    for (let i = 0; i < WRITES; i++) {
      // users spread over both shards; every node receives writes (followers forward them)
      const via = nodes[i % nodes.length];
      expect(await writeEvent(() => via.url, `user-${i}`, stream, `note ${i}`)).not.toBeNull();
    }
  });
  afterAll(async () => {
    await cluster?.stop();
  });
  beforeEach(findLeaders);

  const scrapeAll = async (): Promise<Map<number, Scrape>> =>
    new Map(await Promise.all(cluster.live().map(async (n) => [n.id, await scrape(n.url)] as const)));

  it('agrees on one leader and one term per shard, and every member is a voter', async () => {
    const all = await scrapeAll();
    for (const shard of SHARDS) {
      const leader = leaders.get(shard)!;
      const views = [...all.values()];
      expect(views.map((m) => m.value('strata_raft_is_leader', { shard })).reduce((a, b) => a + b)).toBe(1);
      expect(all.get(leader)!.value('strata_raft_is_leader', { shard })).toBe(1);
      expect(views.map((m) => m.value('strata_raft_leader_id', { shard }))).toEqual([leader, leader, leader]);
      expect(new Set(views.map((m) => m.value('strata_raft_term', { shard }))).size).toBe(1);
      expect(views.map((m) => m.value('strata_raft_voters', { shard }))).toEqual([3, 3, 3]);
      // the leader won its election in this process; someone started one
      expect(all.get(leader)!.value('strata_raft_elections_won_total', { shard })).toBeGreaterThanOrEqual(1);
      expect(views.map((m) => m.value('strata_raft_elections_started_total', { shard })).reduce((a, b) => a + b)).toBeGreaterThanOrEqual(1);
    }
  });

  it('converges: the same commit index on every node, applied everywhere, no follower lagging', async () => {
    // a follower's acknowledgement may still be on its way when its commit index already matches
    const all = await waitFor('commit indexes equal, applied on every node, no lag', async () => {
      const m = await scrapeAll();
      const views = [...m.values()];
      return SHARDS.every((shard) => {
        const commits = views.map((v) => v.value('strata_raft_commit_index', { shard }));
        return new Set(commits).size === 1 && views.every((v) => v.value('strata_raft_applied_index', { shard }) === commits[0])
          && m.get(leaders.get(shard)!)!.all('strata_raft_follower_lag_entries', { shard }).every((s) => s.value === 0);
      }) && m;
    });
    for (const shard of SHARDS) {
      const leader = all.get(leaders.get(shard)!)!;
      expect(leader.value('strata_raft_commit_index', { shard })).toBeGreaterThan(0);
      // the leader's view of each follower: present for both, nothing committed left to send
      const lag = leader.all('strata_raft_follower_lag_entries', { shard });
      expect(lag.map((s) => s.labels.peer).sort()).toEqual(cluster.live().map((n) => String(n.id)).filter((id) => id !== String(leaders.get(shard))).sort());
      for (const [id, m] of all) if (id !== leaders.get(shard)) expect(m.all('strata_raft_follower_lag_entries', { shard })).toEqual([]);
    }
  });

  it('counts the proposals on the leaders and measures peer round trips both ways', async () => {
    const all = await scrapeAll();
    // every write was proposed by its shard's leader (followers forward, they do not propose)
    const byLeaders = SHARDS.reduce((n, shard) => n + all.get(leaders.get(shard)!)!.value('strata_raft_proposals_total', { shard }), 0);
    expect(byLeaders).toBeGreaterThanOrEqual(WRITES);
    for (const [id, m] of all) {
      const peers = cluster.live().map((n) => String(n.id)).filter((p) => p !== String(id));
      // followers answer the leader with requests of their own, so every node has round trips to someone
      const measured = peers.filter((peer) => m.all('strata_raft_peer_rtt_seconds_count', { peer }).some((s) => s.value > 0));
      expect(measured.length).toBeGreaterThanOrEqual(1);
      for (const peer of measured) {
        const count = m.value('strata_raft_peer_rtt_seconds_count', { peer });
        const sum = m.value('strata_raft_peer_rtt_seconds_sum', { peer });
        expect(sum / count).toBeGreaterThan(0);
        expect(m.value('strata_raft_peer_rtt_seconds_bucket', { peer, le: '+Inf' })).toBe(count);
      }
      expect(m.value('strata_raft_peer_requests_received_total')).toBeGreaterThan(0);
    }
    // a leader sends to every follower of the groups it leads
    for (const shard of SHARDS) {
      const leaderId = leaders.get(shard)!;
      for (const n of cluster.live().filter((x) => x.id !== leaderId)) {
        expect(all.get(leaderId)!.value('strata_raft_peer_rtt_seconds_count', { peer: String(n.id) })).toBeGreaterThan(0);
      }
    }
  });
});
