/**
 * Automatic splits and merges (docs/cluster.md "Automatic splits and merges"): 3 real node processes
 * started with the defaults (one group), RF 3, a low split threshold (`cluster.auto_split_records` 200);
 * 24 writers write through every node and the cluster splits its groups by itself until it has at least
 * 4, one hand-over at a time. Once the writes stop it stays as it is (no flapping). The nodes are then
 * restarted one at a time with the default threshold and a floor of 20,000 (merges are off by default): every group but shard 0 is
 * now below the floor, and the cluster merges them by itself down to shard 0 and one more. The groups
 * merged away are then removed (docs/cluster.md "Removing a retired group"): no placement record, no
 * replica on any node's disk, not opened by a restarted node. Every acknowledged write is then read back
 * exactly once through a random node and on every node.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { api, TestCluster, sleep, waitFor } from '../helpers/cluster';
import { startWriters, stopWritersAndCluster, readBackExactlyOnce } from './writers';
import { rangesOf, rangesSettled, replicasCaughtUp } from './ranges';

jest.setTimeout(900_000);

interface AutoStatus {
  autoscale: { split_above_records: number; merge_below_records: number; decisions: { kind: string; group: number; records: number }[] };
  shards: { shard_id: number; role: string; records: number | null }[];
}

/** The autoscale section of the status of the leader of shard 0. */
async function autoscaleOnLeader(cluster: TestCluster): Promise<AutoStatus> {
  const leader = await cluster.leader(0);
  return (await api(cluster.node(leader).url, 'GET', '/v1/cluster/status')).body as unknown as AutoStatus;
}

/** Automatic decisions of a kind, all nodes together (strata_autoscale_decisions_total: each leader of shard 0 counts its own). */
async function decisionsMetric(cluster: TestCluster, kind: string): Promise<number> {
  let sum = 0;
  for (const n of cluster.live()) {
    const text = (await api(n.url, 'GET', '/metrics')).body as unknown as string;
    const m = new RegExp(`^strata_autoscale_decisions_total\\{kind="${kind}"\\} (\\d+)`, 'm').exec(text);
    sum += m ? Number(m[1]) : 0;
  }
  return sum;
}

describe('automatic splits and merges', () => {
  let cluster: TestCluster;
  let writing: ReturnType<typeof startWriters> | undefined;
  beforeAll(async () => {
    cluster = await TestCluster.start({
      nodes: 3,
      env: {
        STRATA__CLUSTER__REPLICATION_FACTOR: '3', STRATA__CLUSTER__PLACEMENT_INTERVAL_MS: '300',
        STRATA__CLUSTER__AUTO_SPLIT_RECORDS: '200', STRATA__CLUSTER__AUTO_MERGE_RECORDS: '50',
      },
    });
  });
  afterAll(() => stopWritersAndCluster(writing, cluster));

  it('splits groups that pass the threshold while written to, stays put when the writes stop, merges them below the floor', async () => {
    await waitFor('the key ranges recorded', async () => (await rangesOf(cluster, 1)).key_ranges.recorded, 60_000, 200);
    const via = Array.from({ length: 24 }, (_, i) => (i % 3) + 1);
    const load = startWriters(cluster, via, () => `auto-${randomUUID()}`);
    writing = load;
    // one hand-over at a time, whoever looks: never two in flight
    let most = 0;
    await waitFor('800 writes acknowledged, and a split made by the cluster itself', async () => {
      const s = await rangesOf(cluster, cluster.live()[0].id);
      most = Math.max(most, s.key_ranges.splits.length + s.key_ranges.dropping.length);
      return s.key_ranges.ranges.length >= 2 && load.writers.reduce((n, w) => n + w.acked.size, 0) >= 800;
    }, 480_000, 300);
    await load.stop();
    // the writes stopped: groups still above the threshold are split; then nothing changes for 8 s
    let seen = '';
    let since = Date.now();
    const grown = await waitFor('nothing in flight and no change for 8 s', async () => {
      const s = await rangesOf(cluster, cluster.live()[0].id);
      const k = s.key_ranges;
      most = Math.max(most, k.splits.length + k.dropping.length);
      const now = JSON.stringify([k.ranges, k.splits, k.dropping]);
      if (now !== seen || k.splits.length + k.dropping.length > 0) {
        seen = now;
        since = Date.now();
        return false;
      }
      return Date.now() - since >= 8000 && s;
    }, 300_000, 500);
    const groups = grown.key_ranges.ranges.length;
    const auto = await autoscaleOnLeader(cluster);
    expect(auto.autoscale).toMatchObject({ split_above_records: 200, merge_below_records: 50 });
    expect(auto.autoscale.decisions.every((d) => d.kind === 'split' && d.records > 200)).toBe(true);
    expect(most).toBe(1);
    // 800 records or more over groups of at most 200 (each writer's user alone is far below): 4 groups at least
    expect(groups).toBeGreaterThanOrEqual(4);
    const splits = await decisionsMetric(cluster, 'split');
    expect(splits).toBeGreaterThanOrEqual(1);
    expect(splits).toBeLessThanOrEqual(groups - 1);
    process.stdout.write(`grew to ${groups} groups by ${splits} automatic splits: ${JSON.stringify(auto.autoscale.decisions)}\n`);

    // no writes: nothing more is decided (the sizes stay between floor and threshold, or a group has one user)
    await sleep(5000);
    const still = await rangesSettled(cluster, groups, 60_000);
    expect(still.key_ranges.ranges).toEqual(grown.key_ranges.ranges);
    expect(await decisionsMetric(cluster, 'split')).toBe(splits);
    expect(await decisionsMetric(cluster, 'merge')).toBe(0);

    // the default threshold and a floor of 20,000 (merges are off by default), one node at a time: every group but shard 0 is below the floor now
    for (const n of [1, 2, 3]) {
      await cluster.kill(n, 'SIGTERM');
      const node = cluster.node(n);
      node.env = { ...node.env, STRATA__CLUSTER__AUTO_SPLIT_RECORDS: '100000', STRATA__CLUSTER__AUTO_MERGE_RECORDS: '20000' };
      await cluster.startNode(n);
      await cluster.leader(0, undefined, 120_000);
    }
    const merged = await rangesSettled(cluster, 2, 600_000);
    expect(merged.key_ranges.ranges[0]).toEqual({ start: 0, group: 0 });
    expect(merged.key_ranges.retired.length).toBe(groups - 2);
    const after = await autoscaleOnLeader(cluster);
    expect(after.autoscale).toMatchObject({ split_above_records: 100_000, merge_below_records: 20_000 });
    process.stdout.write(`merged back to 2 groups: ${JSON.stringify(after.autoscale.decisions)}\n`);

    // the retired groups are removed: no placement record, and every node closes its replica and deletes it
    const retired = merged.key_ranges.retired;
    let view = '';
    await waitFor('every retired group removed on every node', async () => {
      for (const n of cluster.live()) {
        const s = await rangesOf(cluster, n.id);
        view = JSON.stringify({ node: n.id, removed: s.key_ranges.removed, shards: s.shards.map((x) => x.shard_id), placed: s.placement.groups.map((g) => g.group_id) });
        if (retired.some((g) => !(s.key_ranges.removed ?? []).includes(g))) return false;
        if (s.shards.some((x) => retired.includes(x.shard_id)) || s.placement.groups.some((g) => retired.includes(g.group_id))) return false;
        // its replica deleted from the node's disk (the last step of the removal)
        if (retired.some((g) => existsSync(join(n.dataDir, `shard-${g}`)))) return false;
      }
      return true;
    }, 180_000, 500).catch((err: Error) => {
      const logs = cluster.live().map((n) => n.proc!.output().split('\n').filter((l) => /remov|retired/.test(l)).join('\n'));
      for (const n of cluster.live()) writeFileSync(`/tmp/auto30-node${n.id}.log`, n.proc!.output());
      throw new Error(`${err.message}; last seen ${view}\n${logs.join('\n')}`);
    });
    // and a restarted node does not open them again
    await cluster.kill(1, 'SIGTERM');
    await cluster.startNode(1);
    await waitFor('node 1 serving again', async () => (await api(cluster.node(1).url, 'GET', '/readyz')).status === 200, 120_000, 500);
    const restarted = await rangesOf(cluster, 1);
    expect(restarted.shards.map((x) => x.shard_id)).toEqual(merged.key_ranges.ranges.map((r) => r.group).sort((a, b) => a - b));
    for (const g of retired) expect(existsSync(join(cluster.node(1).dataDir, `shard-${g}`))).toBe(false);

    await replicasCaughtUp(cluster);
    expect(await readBackExactlyOnce(cluster, load.writers)).toEqual([]);
    const acked = load.writers.reduce((n, w) => n + w.acked.size, 0);
    const unknown = load.writers.reduce((n, w) => n + w.unknown.length, 0);
    process.stdout.write(`automatic splits and merges: ${acked} writes acknowledged (${unknown} unknown)\n`);
  });
});
