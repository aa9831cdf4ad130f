/**
 * Two shard groups on three nodes: users land on both shards (fnv1a32(user_id) mod 2), writes for
 * each are forwarded to its shard's leader and replicated, service-wide writes go to shard 0, and
 * cluster operations (join, remove, status) change the node set (shard 0) while shard 1 follows it
 * through the placement loop.
 */
import { shardOf } from '../../packages/server/src/shards';
import { api, listEvents, newStream, sleep, TestCluster, waitFor, writeEvent } from '../helpers/cluster';

jest.setTimeout(60_000);

describe('2 shards on 3 nodes', () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await TestCluster.start({ nodes: 3, shards: 2 });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('routes users to both shard groups and replicates each', async () => {
    const leaders = [await cluster.leader(0), await cluster.leader(1)];
    const users = ['u-0', 'u-1', 'u-2', 'u-3', 'u-4', 'u-5'];
    expect(new Set(users.map((u) => shardOf(u, 2)))).toEqual(new Set([0, 1]));
    const stream = newStream();
    const written: Record<string, string> = {};
    for (const [i, user] of users.entries()) {
      const via = cluster.live()[i % 3];
      const id = await writeEvent(() => via.url, user, stream, `hello ${user}`);
      expect(id).not.toBeNull();
      written[user] = id!;
    }
    for (const node of cluster.live()) {
      for (const user of users) {
        await waitFor(`${user} on node ${node.id}`, async () => (await listEvents(node.url, user, stream)).some((e) => e.event_id === written[user]));
      }
    }
    // Each shard's group applied its own users' writes: both commit indexes moved past initialization.
    const status = await cluster.status(leaders[0]);
    expect(status.map((s) => s.shard_id)).toEqual([0, 1]);
    for (const s of status) expect(s.applied_index).toBeGreaterThan(2);
    // A service-wide write (an API key) through a follower of shard 0 is forwarded and usable everywhere.
    const follower = cluster.live().find((n) => n.id !== leaders[0])!;
    const key = await api(follower.url, 'POST', '/v1/dashboard/api-keys', { name: 'k', role: 'read' });
    expect(key.status).toBe(200);
    for (const node of cluster.live()) {
      await waitFor(`key usable on node ${node.id}`, async () =>
        (await api(node.url, 'GET', `/v1/users/u-0/streams/${stream}/events`, undefined, { 'x-api-key': key.body.key as string })).status === 200);
    }
  });

  it('a joining node enters shard 0 (the node set); a removed node drains out of shard 1 onto it', async () => {
    await cluster.addJoiningNode(4, 3);
    await waitFor('node 4 is a voter of shard 0', async () => (await cluster.status(1)).find((s) => s.shard_id === 0)!.members.some((m) => m.node_id === 4 && m.voter), 30_000);
    // Shard 1 keeps its 3 replicas (replication factor 3) on nodes 1-3: 1,1,1,0 per node is balanced.
    await sleep(2500);
    expect((await cluster.status(1)).find((s) => s.shard_id === 1)!.members.map((m) => m.node_id)).toEqual([1, 2, 3]);
    const r = await api(cluster.node(3).url, 'DELETE', '/v1/cluster/nodes/2', undefined, {}, 30_000);
    expect(r.status).toBe(200);
    expect(r.body.shards).toEqual([{ shard_id: 0, status: 'removed' }]);
    // The placement loop re-creates node 2's replica of shard 1 on node 4 before dropping it.
    for (const id of [1, 3, 4]) {
      await waitFor(`node ${id} sees 1,3,4 in both groups`, async () =>
        (await cluster.status(id)).every((s) => JSON.stringify(s.members.map((m) => m.node_id)) === '[1,3,4]'), 60_000);
    }
    const init = await api(cluster.node(1).url, 'POST', '/v1/cluster/initialize');
    expect(init.status).toBe(200);
    expect(init.body).toMatchObject({ status: 'already_initialized', shards: [{ shard_id: 0, status: 'already_initialized' }, { shard_id: 1, status: 'already_initialized' }] });
  });
});
