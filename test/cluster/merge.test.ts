/**
 * Merge by command (docs/cluster.md "Merging two groups"): 3 real node processes on 127.0.0.1 started
 * with the defaults (one group), replication factor 3; 24 writers write through every node while group 0
 * is split in two and then group 1 is merged back into group 0 (`strata cluster merge 0 --with 1`). The
 * merge completes (group 0 fenced for the incoming range and given a block of event numbers, group 1's
 * records copied, the range routed to group 0, group 1's copy deleted and its id retired); every
 * acknowledged write is then read back exactly once through a random node and on every node with
 * `consistency=linearizable`; with the nodes stopped, no node's replica of group 1 holds a writer's record.
 */
import { randomUUID } from 'node:crypto';
import { api, API_KEY, TestCluster, waitFor } from '../helpers/cluster';
import { runStrata } from '../helpers/cli';
import { startWriters, stopWritersAndCluster, readBackExactlyOnce } from './writers';
import { rangesOf, rangesSettled, replicasCaughtUp, startProber, userRecordsOnDisk } from './ranges';

jest.setTimeout(600_000);

describe('merge two groups by command, under writes', () => {
  let cluster: TestCluster;
  let writing: ReturnType<typeof startWriters> | undefined;
  beforeAll(async () => {
    cluster = await TestCluster.start({
      nodes: 3,
      env: { STRATA__CLUSTER__REPLICATION_FACTOR: '3', STRATA__CLUSTER__PLACEMENT_INTERVAL_MS: '300' },
    });
  });
  afterAll(() => stopWritersAndCluster(writing, cluster));

  it('moves the neighbour\'s whole range into the group; every acknowledged write is afterwards in it exactly once', async () => {
    await waitFor('the key ranges recorded', async () => (await rangesOf(cluster, 1)).key_ranges.recorded, 60_000, 200);
    const via = Array.from({ length: 24 }, (_, i) => (i % 3) + 1);
    const load = startWriters(cluster, via, () => `merge-${randomUUID()}`);
    writing = load;
    await waitFor('writes acknowledged before the split', async () => load.writers.every((w) => w.acked.size >= 2), 120_000, 200);
    expect((await api(cluster.node(1).url, 'POST', '/v1/cluster/groups/0/split', {})).status).toBe(200);
    await rangesSettled(cluster, 2, 240_000);
    await waitFor('writes acknowledged after the split', async () => load.writers.every((w) => w.acked.size >= 4), 120_000, 200);

    // bad input first: each a 4xx with the envelope
    const url = cluster.node(2).url;
    const bad = [
      await api(url, 'POST', '/v1/cluster/groups/7/merge', { with: 1 }),
      await api(url, 'POST', '/v1/cluster/groups/0/merge', { with: 7 }),
      await api(url, 'POST', '/v1/cluster/groups/0/merge', { with: 0 }),
      await api(url, 'POST', '/v1/cluster/groups/0/merge', {}),
      await api(url, 'POST', '/v1/cluster/groups/0/merge', { with: 'one' }),
      await api(url, 'POST', '/v1/cluster/groups/x/merge', { with: 1 }),
      await api(url, 'POST', '/v1/cluster/groups/0/merge', { with: 1 }, { 'x-api-key': 'wrong' }),
    ];
    expect(bad.map((r) => [r.status, typeof (r.body as { error?: unknown }).error, (r.body as { code?: string }).code])).toEqual([
      [404, 'string', 'not_found'], [400, 'string', 'validation_failed'], [400, 'string', 'validation_failed'], [400, 'string', 'validation_failed'],
      [400, 'string', 'validation_failed'], [400, 'string', 'invalid_id'], [401, 'string', 'unauthenticated'],
    ]);

    // a prober writes for one new user after another while the merge runs, and counts what the hand-over answered
    const prober = startProber(cluster);

    const cli = await runStrata(['cluster', 'merge', '0', '--with', '1'], { STRATA_URL: cluster.node(3).url, STRATA_API_KEY: API_KEY });
    expect([cli.code, cli.stderr]).toEqual([0, '']);
    expect(cli.stdout).toMatch(/shard 1 merges into shard 0: keys \d+ to \d+ \(begun\)/);
    // the same merge again while it runs: 409 (or, if it has finished already, 400: group 1 owns no range)
    const again = await api(cluster.node(1).url, 'POST', '/v1/cluster/groups/0/merge', { with: 1 });
    expect([[409, 'conflict'], [400, 'validation_failed']]).toContainEqual([again.status, (again.body as { code?: string }).code]);

    const done = await rangesSettled(cluster, 1, 300_000);
    process.stdout.write(`writes during the merge, by answer: ${JSON.stringify(await prober.stop())}\n`);
    expect(done.key_ranges.ranges).toEqual([{ start: 0, group: 0 }]);
    expect(done.key_ranges.retired).toEqual([1]);
    // the retired id is not given to a new group
    const after = await api(url, 'POST', '/v1/cluster/groups/0/split', {});
    expect(after.status).toBe(200);
    expect((after.body as { split: { new_group: number } }).split.new_group).toBe(2);
    await rangesSettled(cluster, 2, 300_000);
    const merged = await api(url, 'POST', '/v1/cluster/groups/0/merge', { with: 2 });
    expect(merged.status).toBe(200);
    await rangesSettled(cluster, 1, 300_000);

    const before = load.writers.reduce((n, w) => n + w.acked.size, 0);
    await waitFor('writes acknowledged after the merges', async () => load.writers.reduce((n, w) => n + w.acked.size, 0) >= before + 48, 120_000, 200);
    await load.stop();
    await replicasCaughtUp(cluster);
    expect(await readBackExactlyOnce(cluster, load.writers)).toEqual([]);
    const acked = load.writers.reduce((n, w) => n + w.acked.size, 0);
    const unknown = load.writers.reduce((n, w) => n + w.unknown.length, 0);
    process.stdout.write(`merge under load: ${acked} writes acknowledged (${unknown} unknown), two splits and two merges\n`);

    // on disk, with the nodes stopped: the merged-away groups hold no writer's record on any node
    for (const n of [1, 2, 3]) await cluster.kill(n, 'SIGTERM');
    for (const n of [1, 2, 3]) {
      for (const w of load.writers) {
        expect([n, w.user, await userRecordsOnDisk(cluster.node(n).dataDir, 1, w.user), await userRecordsOnDisk(cluster.node(n).dataDir, 2, w.user)]).toEqual([n, w.user, 0, 0]);
        expect(await userRecordsOnDisk(cluster.node(n).dataDir, 0, w.user)).toBeGreaterThanOrEqual(w.acked.size);
      }
    }
  });
});
