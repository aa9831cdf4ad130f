/**
 * Placement (docs/cluster.md "Placement"): 6 node processes, 12 shard groups, replication factor 3.
 * Shard 0 is on every node; the 11 others on 3 nodes each, so a node holds about 6 groups. Writes sent
 * to any node land on the user's group wherever it lives; when a node is killed its replicas are
 * re-created on the others after the failure detector's timeout; when a node joins, replicas move to
 * it under load; when the leader of shard 0 (which runs the placement loop) is killed, the next one
 * carries on; when the first dead node comes back with its stale replicas, it serves none of them and
 * gets its share again. Every acknowledged write is then on every replica of its group exactly once.
 */
import { shardOf } from '../../packages/server/src/shards';
import { PeerSigner } from '../../packages/server/src/cluster/peer-auth';
import { api, SECRET, sleep, TestCluster, waitFor } from '../helpers/cluster';
import { quickPlacementEnv, settled, spreadOf, statusOf, type Placed } from '../helpers/placement';
import { checkExactlyOnce, checkReplicas, startWriters } from './writers';

jest.setTimeout(300_000);

const SHARDS = 12;
const RF = 3;

/** The groups each live node holds (serves reads of), by its own report. */
async function heldBy(cluster: TestCluster): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>();
  for (const n of cluster.live()) out.set(n.id, (await statusOf(cluster, n.id)).shards.filter((s) => s.holds).map((s) => s.shard_id));
  return out;
}

describe(`placement: 6 nodes, ${SHARDS} groups, replication ${RF}`, () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await TestCluster.start({
      nodes: 6, shards: SHARDS,
      // new replicas come by snapshot: the logs are compacted early
      env: quickPlacementEnv(RF),
    });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('places each group on 3 nodes, routes writes from every node, re-replicates a dead node and fills a new one', async () => {
    // Start: the placement is recorded and balanced, so each node holds shard 0 and 5 or 6 of the 11
    // others. (On a loaded machine a node may start later than this test's 4 s failure detector: its
    // replicas are then re-created elsewhere and balanced back once it answers, which is why this waits
    // for balance, not for the initial placement.)
    await waitFor('the placement recorded, led and balanced', async () => {
      const groups = await settled(cluster, SHARDS, RF);
      return groups && spreadOf(groups, cluster.live().map((n) => n.id)) <= 1;
    }, 90_000, 300);
    const held = await heldBy(cluster);
    for (const [, groups] of held) {
      expect(groups).toContain(0);
      expect(groups.length).toBeGreaterThanOrEqual(6);
      expect(groups.length).toBeLessThanOrEqual(7);
    }

    // Writers spread over all six nodes, users spread over the groups.
    const via = Array.from({ length: 18 }, (_, i) => (i % 6) + 1);
    const load = startWriters(cluster, via, (i) => `placed-user-${i}`);
    expect(new Set(load.writers.map((w) => shardOf(w.user, SHARDS))).size).toBeGreaterThanOrEqual(8);
    await sleep(3000);

    // Kill a node that does not lead shard 0 (the placement loop runs there): its groups re-replicate.
    const metaLeader = await cluster.leader(0);
    const victim = [...held.keys()].find((id) => id !== metaLeader && held.get(id)!.length >= 6)!;
    await cluster.kill(victim);
    const repaired = await waitFor(`every group re-replicated away from node ${victim}`, () => settled(cluster, SHARDS, RF, [victim]), 120_000, 500);
    for (const g of repaired) expect(g.voters).not.toContain(victim);

    // A new node joins under load: replicas move to it until the nodes are balanced.
    await cluster.addJoiningNode(7, metaLeader);
    await waitFor('node 7 holds its share of the groups', async () => {
      const groups = await settled(cluster, SHARDS, RF, [victim]);
      return groups && groups.filter((g) => g.voters.includes(7)).length >= 4 && spreadOf(groups, cluster.live().map((n) => n.id)) <= 1;
    }, 150_000, 500);
    // Kill the leader of shard 0, where the placement loop runs: the next leader takes the loop over
    // (the moves are in the directory) and re-creates the dead node's replicas too.
    await cluster.kill(metaLeader);
    await waitFor(`every group re-replicated away from nodes ${victim} and ${metaLeader}`, () => settled(cluster, SHARDS, RF, [victim, metaLeader]), 120_000, 500);

    // The first node killed comes back with its old data directory. Its replicas were re-created
    // elsewhere and it was removed from those groups without hearing of it: it must not serve them
    // (until the placement loop's drop reaches it and it wipes them, its own Raft state still names
    // it a voter there), and the loop balances replicas back onto it.
    await cluster.startNode(victim);
    // (it may already be getting a group back: it serves only the groups the directory gives it now)
    const back = await statusOf(cluster, victim);
    for (const s of back.shards.filter((x) => x.holds && x.shard_id !== 0)) {
      expect([s.shard_id, back.placement.groups.find((p) => p.group_id === s.shard_id)!.voters]).toEqual([s.shard_id, expect.arrayContaining([victim])]);
    }
    await waitFor(`node ${victim} holds its share again`, async () => {
      const groups = await settled(cluster, SHARDS, RF, [metaLeader]);
      return groups && groups.filter((g) => g.voters.includes(victim)).length >= 4 && spreadOf(groups, cluster.live().map((n) => n.id)) <= 1;
    }, 150_000, 500);
    // the replicas it was removed from while down were wiped there (nothing left to drop on it)
    await waitFor(`no replica left to drop on node ${victim}`, async () =>
      (await statusOf(cluster, victim)).placement.groups.every((g) => !(g.drops ?? []).some((d) => d.node === victim)), 60_000, 500);
    await sleep(2000);
    await load.stop();

    const acked = load.writers.reduce((n, w) => n + w.acked.size, 0);
    expect(acked).toBeGreaterThan(100);
    const final = (await settled(cluster, SHARDS, RF, [metaLeader])) as Placed[];
    expect(final).not.toBe(false);
    expect(await checkReplicas(cluster, load.writers, final, SHARDS)).toEqual([]);
    // ...and through any node, wherever the group lives.
    for (const n of cluster.live()) expect(await checkExactlyOnce(n.url, load.writers.slice(0, 6), '&consistency=linearizable')).toEqual([]);
  });

  it('takes placement steps only from the nodes of the cluster, and checks them', async () => {
    const node = cluster.live()[0];
    const path = '/v1/cluster/groups/1/steps';
    const step = { kind: 'transfer_leader', node: node.id, url: node.url };
    // an admin key is not a node's signature
    const unsigned = await api(node.url, 'POST', path, step);
    expect([unsigned.status, unsigned.body.code]).toEqual([401, 'unauthenticated']);
    // signed with the cluster secret, as another node does: checked like any input
    const signer = new PeerSigner(SECRET, 99, 30_000);
    const bad = { kind: 'explode', node: 0 };
    const refused = await api(node.url, 'POST', path, bad, signer.sign(node.id, 'POST', path, bad));
    expect([refused.status, refused.body.code]).toEqual([400, 'validation_failed']);
    const unknown = await api(node.url, 'POST', '/v1/cluster/groups/77/steps', step, signer.sign(node.id, 'POST', '/v1/cluster/groups/77/steps', step));
    expect(unknown.status).toBe(404);
    // a replayed signature is refused
    const headers = signer.sign(node.id, 'GET', '/v1/cluster/status', undefined);
    const first = await api(node.url, 'GET', '/v1/cluster/status', undefined, { ...headers, 'x-api-key': 'wrong' });
    expect(first.status).toBe(200);
    const again = await api(node.url, 'GET', '/v1/cluster/status', undefined, { ...headers, 'x-api-key': 'wrong' });
    expect(again.status).toBe(401);
  });
});
