/**
 * Split by command (docs/cluster.md "Splitting a group"): 3 real node processes on 127.0.0.1 started
 * with the defaults (one group), replication factor 3; 24 writers write through every node while the
 * group is split (`POST /v1/cluster/groups/0/split`, no point: the median of its users' keys). The split completes (new
 * group placed, seeded, routed to, old group's copy deleted); every acknowledged write is then read back
 * exactly once through a random node and on every voter of its group; and with the nodes stopped, every
 * node's disk holds each writer's events in exactly one group: the one the key-range table names.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { StateDb, groupOfUser, prefixRange, type KeyRangeTable } from '@strata/store';
import { api, API_KEY, TestCluster, waitFor } from '../helpers/cluster';
import { runStrata } from '../helpers/cli';
import { statusOf } from '../helpers/placement';
import { checkExactlyOnce, startWriters } from './writers';
import { replicasCaughtUp, startProber } from './ranges';

jest.setTimeout(420_000);

interface SplitStatus {
  key_ranges: KeyRangeTable & { recorded: boolean; splits: unknown[]; dropping: unknown[] };
  placement: { groups: { group_id: number; voters: number[]; leader: number | null }[] };
}

/** How many events of `user` a stopped node's store of a group holds. */
async function eventsOnDisk(dataDir: string, group: number, user: string): Promise<number> {
  const db = await StateDb.open(join(dataDir, `shard-${group}`, 'state'));
  try {
    return (await db.events.keys(prefixRange(user)).all()).length;
  } finally {
    await db.close();
  }
}

describe('split a group by command, under writes', () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await TestCluster.start({
      nodes: 3,
      env: { STRATA__CLUSTER__REPLICATION_FACTOR: '3', STRATA__CLUSTER__PLACEMENT_INTERVAL_MS: '300' },
    });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('moves the upper half to a new group; every acknowledged write is afterwards in exactly one group, read back once', async () => {
    await waitFor('the key ranges recorded', async () => (await statusOf(cluster, 1) as unknown as SplitStatus).key_ranges.recorded, 60_000, 200);
    const via = Array.from({ length: 24 }, (_, i) => (i % 3) + 1);
    const load = startWriters(cluster, via, () => `split-${randomUUID()}`);
    await waitFor('writes acknowledged before the split', async () => load.writers.every((w) => w.acked.size >= 3), 120_000, 200);

    // bad input first: each a 4xx with the envelope
    const url = cluster.node(2).url;
    expect((await api(url, 'POST', '/v1/cluster/groups/7/split', {})).status).toBe(404);
    const bad = await api(url, 'POST', '/v1/cluster/groups/0/split', { point: 0 });
    expect([bad.status, (bad.body as { code: string }).code]).toEqual([400, 'validation_failed']);
    expect((await api(url, 'POST', '/v1/cluster/groups/0/split', { point: 'middle' })).status).toBe(400);
    expect((await api(url, 'POST', '/v1/cluster/groups/x/split', {})).status).toBe(400);
    expect((await api(url, 'POST', '/v1/cluster/groups/0/split', {}, { 'x-api-key': 'wrong' })).status).toBe(401);

    // a prober writes for one user after another while the split runs, and counts what the hand-over answered
    const prober = startProber(cluster);

    // the split, by the CLI (`strata cluster split 0`: at the median of the group's users' keys)
    const cli = await runStrata(['cluster', 'split', '0'], { STRATA_URL: cluster.node(1).url, STRATA_API_KEY: API_KEY });
    expect([cli.code, cli.stderr]).toEqual([0, '']);
    expect(cli.stdout).toMatch(/shard 0 split at \d+: the upper half goes to shard 1 \(begun\)/);
    const again = await api(cluster.node(3).url, 'POST', '/v1/cluster/groups/0/split', {});
    expect([again.status, (again.body as { code?: string }).code]).toEqual([409, 'conflict']);

    const done = await waitFor('the split committed and the moved records dropped, as every node sees it', async () => {
      for (const n of cluster.live()) {
        const s = (await statusOf(cluster, n.id)) as unknown as SplitStatus;
        if (s.key_ranges.ranges.length !== 2 || s.key_ranges.splits.length || s.key_ranges.dropping.length) return false;
      }
      return (await statusOf(cluster, 1)) as unknown as SplitStatus;
    }, 240_000, 500);
    process.stdout.write(`writes during the split, by answer: ${JSON.stringify(await prober.stop())}\n`);
    const table: KeyRangeTable = { base: done.key_ranges.base, ranges: done.key_ranges.ranges };
    expect(table.ranges.map((r) => r.group)).toEqual([0, 1]);
    const placed = done.placement.groups.find((g) => g.group_id === 1)!;
    expect(placed.voters).toHaveLength(3);
    // writes go on after the split, then stop
    const before = load.writers.reduce((n, w) => n + w.acked.size, 0);
    await waitFor('writes acknowledged after the split', async () => load.writers.reduce((n, w) => n + w.acked.size, 0) >= before + 48, 120_000, 200);
    await load.stop();
    // a read without `consistency` is served by any replica: it sees every acknowledged write once the
    // replicas have applied what their leaders committed (a follower a few entries behind would not yet)
    await replicasCaughtUp(cluster);

    const groups = new Map(load.writers.map((w) => [w.user, groupOfUser(table, w.user)]));
    expect(new Set(groups.values())).toEqual(new Set([0, 1])); // writers on both sides
    const acked = load.writers.reduce((n, w) => n + w.acked.size, 0);
    const unknown = load.writers.reduce((n, w) => n + w.unknown.length, 0);
    // through a random node, and on every voter of the writer's group (a ReadIndex first on each)
    for (const w of load.writers) {
      const node = cluster.live()[Math.floor(Math.random() * 3)];
      expect(await checkExactlyOnce(node.url, [w])).toEqual([]);
      for (const n of cluster.live()) expect(await checkExactlyOnce(n.url, [w], '&consistency=linearizable')).toEqual([]);
    }
    process.stdout.write(`split under load: ${acked} writes acknowledged (${unknown} unknown), ${load.writers.filter((w) => groups.get(w.user) === 1).length} of 24 writers moved to group 1\n`);

    // on disk, with the nodes stopped (stop() would delete their directories): each writer's events in its own group only, on every node
    for (const n of [1, 2, 3]) await cluster.kill(n, 'SIGTERM');
    for (const n of [1, 2, 3]) {
      for (const w of load.writers) {
        const own = groups.get(w.user)!;
        const counts = [await eventsOnDisk(cluster.node(n).dataDir, 0, w.user), await eventsOnDisk(cluster.node(n).dataDir, 1, w.user)];
        expect([n, w.user, counts[1 - own]]).toEqual([n, w.user, 0]);
        expect(counts[own]).toBeGreaterThanOrEqual(w.acked.size);
      }
    }
  });
});
