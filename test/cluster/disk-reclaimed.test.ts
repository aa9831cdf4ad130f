/**
 * Disk reclaimed (docs/cluster.md "Placement"): real node processes on 127.0.0.1, 4 shard groups,
 * replication factor 3. A node is killed while writers run; a fourth joins and the dead node's
 * replicas are re-created on it, the dead node removed from their groups while down (the drop is
 * recorded and asked again every round). The dead node comes back: it wipes those replicas, and the
 * balancing that gives it its share moves replicas off the others, which wipe theirs. At the end every
 * replica a node does not hold is gone from its disk (read with the nodes stopped: no directory, no Raft
 * key but the removal's index, no snapshot file) and every acknowledged write is on every voter of its
 * group exactly once; a node restarted does not open, nor make the directory of, a group it dropped.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { LevelStorage } from '@strata/raft';
import { StateDb } from '@strata/store';
import { shardOf } from '../../packages/server/src/shards';
import { sleep, TestCluster, waitFor } from '../helpers/cluster';
import { quickPlacementEnv, settled, spreadOf, statusOf, type Placed } from '../helpers/placement';
import { checkExactlyOnce, checkReplicas, startWriters } from './writers';

jest.setTimeout(420_000);

const SHARDS = 4;
const RF = 3;

/** The directory (as the first live node has it) once settled and `check` holds. */
async function settledWith(cluster: TestCluster, gone: number[], check: (groups: Placed[]) => boolean): Promise<Placed[] | false> {
  const groups = (await settled(cluster, SHARDS, RF, gone)) as Placed[] | false;
  return groups && check(groups) ? groups : false;
}

/** What a stopped node's disk holds of a group: its directory and state records, Raft keys, and whether its snapshot directory exists. */
async function onDisk(dataDir: string, group: number): Promise<{ dir: boolean; records: number; raftKeys: number; snapshots: boolean }> {
  const dir = existsSync(join(dataDir, `shard-${group}`));
  let records = 0;
  if (dir) {
    const db = await StateDb.open(join(dataDir, `shard-${group}`, 'state'));
    records = (await db.level.keys().all()).length;
    await db.close();
  }
  const storage = await LevelStorage.open(join(dataDir, 'raft'));
  let raftKeys = 0;
  for await (const k of storage.db.keys()) if (k.readUInt32BE(1) === group) raftKeys++;
  const snapshots = existsSync(storage.snapshots.dir(group));
  await storage.close();
  return { dir, records, raftKeys, snapshots };
}

describe(`disk reclaimed: ${SHARDS} groups, replication ${RF}`, () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await TestCluster.start({
      nodes: 3, shards: SHARDS,
      // new replicas come by snapshot: the logs are compacted early
      env: quickPlacementEnv(RF),
    });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('wipes the replicas moved off a node, also one that was down when it was removed, and loses no acknowledged write', async () => {
    await waitFor('the placement recorded and led', () => settled(cluster, SHARDS, RF), 90_000, 300);
    const via = Array.from({ length: 12 }, (_, i) => (i % 3) + 1);
    const load = startWriters(cluster, via, (i) => `reclaimed-user-${i}`);
    expect(new Set(load.writers.map((w) => shardOf(w.user, SHARDS))).size).toBe(SHARDS);
    await sleep(3000);

    // Kill a node that does not run the placement loop; a new node joins and takes its replicas.
    const metaLeader = await cluster.leader(0);
    const victim = [1, 2, 3].find((id) => id !== metaLeader)!;
    await cluster.kill(victim);
    await cluster.addJoiningNode(4, metaLeader);
    // removed from every group while down: each removal's drop stays recorded until the node answers
    const moved = await waitFor(`every group re-replicated away from node ${victim}`, () => settledWith(cluster, [victim], (groups) =>
      groups.every((g) => (g.drops ?? []).some((d) => d.node === victim))), 180_000, 500);
    expect(moved.every((g) => !g.voters.includes(victim))).toBe(true);

    // It comes back: it wipes the replicas it was removed from, then gets its share again (replicas
    // moved off the others, which wipe theirs), until nothing is left to drop anywhere.
    await cluster.startNode(victim);
    const nodes = [1, 2, 3, 4];
    const final = await waitFor(`node ${victim} back in, balanced, every drop done`, () => settledWith(cluster, [], (groups) =>
      groups.some((g) => g.voters.includes(victim)) && spreadOf(groups, nodes) <= 1 && groups.every((g) => (g.drops ?? []).length === 0)), 180_000, 500);
    await sleep(1000);
    await load.stop();

    const acked = load.writers.reduce((n, w) => n + w.acked.size, 0);
    expect(acked).toBeGreaterThan(100);
    expect(await checkReplicas(cluster, load.writers, final, SHARDS)).toEqual([]);
    for (const n of cluster.live()) expect(await checkExactlyOnce(n.url, load.writers.slice(0, 4), '&consistency=linearizable')).toEqual([]);

    // The directory did not move while the writes were checked; the nodes stop, and their disks are read.
    const placed = (await statusOf(cluster, metaLeader)).placement.groups;
    expect(placed.map((g) => [g.group_id, [...g.voters].sort()])).toEqual(final.map((g) => [g.group_id, [...g.voters].sort()]));
    for (const id of nodes) await cluster.kill(id);
    const wiped: string[] = [];
    for (const id of nodes) {
      for (const g of final) {
        const disk = await onDisk(cluster.node(id).dataDir, g.group_id);
        if (g.voters.includes(id)) {
          expect([id, g.group_id, disk.dir, disk.records > 0, disk.raftKeys > 0]).toEqual([id, g.group_id, true, true, true]);
        } else {
          // every replica a node lacks was once there (the victim held every group, node 4 took the victim's,
          // the others every group from the start) and was dropped: its directory is gone, and of its Raft keys
          // one is left, the removal's index, which keeps a replica opened again blank out of the group's
          // elections until it is added back (packages/raft/test/wiped-votes.test.ts)
          expect([id, g.group_id, disk.dir, disk.records, disk.raftKeys, disk.snapshots]).toEqual([id, g.group_id, false, 0, 1, false]);
          wiped.push(`${id}/${g.group_id}`);
        }
      }
    }
    // 3 groups on 4 nodes: each node lacks at least one, and the victim held every group before it died
    expect(wiped.length).toBe(3);

    // A node restarted alone opens shard 0 and the groups it holds, not one it dropped, and does not make its directory.
    const [id, group] = wiped[0].split('/').map(Number);
    await cluster.startNode(id);
    const open = await waitFor(`node ${id} serving again`, async () => (await statusOf(cluster, id)).shards.map((s) => s.shard_id), 120_000, 500);
    expect(open).toEqual([0, ...final.filter((g) => g.voters.includes(id)).map((g) => g.group_id)].sort((a, b) => a - b));
    expect(existsSync(join(cluster.node(id).dataDir, `shard-${group}`))).toBe(false);
    await cluster.kill(id);
  });
});
