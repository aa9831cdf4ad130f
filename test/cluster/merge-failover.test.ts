/**
 * A merge whose driver dies (docs/cluster.md "Merging two groups"): 3 real node processes on 127.0.0.1
 * from the defaults, replication factor 3, 12 writers. Group 0 is split, then group 1 is merged into it
 * through the leader of shard 0, and that node is SIGKILLed right after the merge is recorded, wherever
 * its driver was. The next leader of shard 0 drives the merge again from its first step (each step a
 * command that answers `already_…` when repeated: the same fence, the same reserved block of event
 * numbers, the same chunks written again and counted once); the killed node comes back. Afterwards every
 * acknowledged write is read back exactly once on every node, and group 1 holds no writer's record.
 */
import { randomUUID } from 'node:crypto';
import { api, TestCluster, waitFor } from '../helpers/cluster';
import { checkExactlyOnce, startWriters, stopWritersAndCluster } from './writers';
import { rangesOf, rangesSettled, replicasCaughtUp, userRecordsOnDisk } from './ranges';

jest.setTimeout(600_000);

describe('a merge when the leader of shard 0 dies', () => {
  let cluster: TestCluster;
  let writing: ReturnType<typeof startWriters> | undefined;
  beforeAll(async () => {
    cluster = await TestCluster.start({
      nodes: 3,
      env: { STRATA__CLUSTER__REPLICATION_FACTOR: '3', STRATA__CLUSTER__PLACEMENT_INTERVAL_MS: '300' },
    });
  });
  afterAll(() => stopWritersAndCluster(writing, cluster));

  it('is finished by the next leader; every acknowledged write is then in the group exactly once', async () => {
    await waitFor('the key ranges recorded', async () => (await rangesOf(cluster, 1)).key_ranges.recorded, 60_000, 200);
    const load = startWriters(cluster, Array.from({ length: 12 }, (_, i) => (i % 3) + 1), () => `failover-${randomUUID()}`);
    writing = load;
    await waitFor('writes acknowledged before the split', async () => load.writers.every((w) => w.acked.size >= 2), 120_000, 200);
    expect((await api(cluster.node(1).url, 'POST', '/v1/cluster/groups/0/split', {})).status).toBe(200);
    await rangesSettled(cluster, 2, 240_000);
    await waitFor('writes acknowledged after the split', async () => load.writers.every((w) => w.acked.size >= 4), 120_000, 200);

    const leader = await cluster.leader(0, undefined, 60_000);
    const begun = await api(cluster.node(leader).url, 'POST', '/v1/cluster/groups/0/merge', { with: 1 });
    expect([begun.status, (begun.body as { status: string }).status]).toEqual([200, 'begun']);
    await cluster.kill(leader, 'SIGKILL');
    const next = await cluster.leader(0, undefined, 60_000);
    expect(next).not.toBe(leader);
    // where the merge stood when the next leader took over (the test holds wherever it was; printed to see which path ran)
    const seen = (await rangesOf(cluster, next)).key_ranges;
    const stood = seen.splits.length ? 'in flight' : seen.dropping.length ? 'committed, dropping' : 'done';
    await rangesSettled(cluster, 1, 300_000);
    await cluster.startNode(leader);
    const done = await rangesSettled(cluster, 1, 300_000);
    expect([done.key_ranges.ranges, done.key_ranges.retired]).toEqual([[{ start: 0, group: 0 }], [1]]);

    const before = load.writers.reduce((n, w) => n + w.acked.size, 0);
    await waitFor('writes acknowledged after the merge', async () => load.writers.reduce((n, w) => n + w.acked.size, 0) >= before + 24, 120_000, 200);
    await load.stop();
    await replicasCaughtUp(cluster);
    for (const w of load.writers) {
      for (const n of cluster.live()) expect(await checkExactlyOnce(n.url, [w], '&consistency=linearizable')).toEqual([]);
    }
    const acked = load.writers.reduce((n, w) => n + w.acked.size, 0);
    const unknown = load.writers.reduce((n, w) => n + w.unknown.length, 0);
    process.stdout.write(`merge with the leader of shard 0 (node ${leader}) killed: ${acked} writes acknowledged (${unknown} unknown), the merge ${stood} when node ${next} took over\n`);

    for (const n of [1, 2, 3]) await cluster.kill(n, 'SIGTERM');
    for (const n of [1, 2, 3]) {
      for (const w of load.writers) expect([n, w.user, await userRecordsOnDisk(cluster.node(n).dataDir, 1, w.user)]).toEqual([n, w.user, 0]);
    }
  });
});
