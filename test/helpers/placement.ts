/**
 * Clusters whose shard groups are placed on some of the nodes (docs/cluster.md "Placement"): start one,
 * read a node's view, and wait until the placement has settled.
 */
import { api, TestCluster, waitFor } from './cluster';

export interface Placed { group_id: number; voters: number[]; learners: number[]; leader: number | null; move: unknown; drops?: { node: number; index: number; url: string }[] }
export interface PlacementStatus {
  shards: { shard_id: number; role: string; leader: number | null; holds: boolean; members: { node_id: number; voter: boolean }[] }[];
  placement: { replication_factor: number; groups: Placed[] };
}

export async function statusOf(cluster: TestCluster, id: number): Promise<PlacementStatus> {
  const r = await api(cluster.node(id).url, 'GET', '/v1/cluster/status', undefined, {}, 3000);
  if (r.status !== 200) throw new Error(`status of node ${id}: ${r.status}`);
  return r.body as unknown as PlacementStatus;
}

/**
 * The directory once every placed group has `rf` voters, none on `gone`, no learner and no move in
 * flight, and a leader that reports the same voters; and every live node holds exactly its groups
 * (shard 0 and those the directory gives it). False until then.
 */
export async function settled(cluster: TestCluster, shards: number, rf: number, gone: number[] = []): Promise<Placed[] | false> {
  const groups = (await statusOf(cluster, cluster.live()[0].id)).placement.groups;
  if (groups.length !== shards - 1) return false;
  for (const g of groups) {
    if (g.voters.length !== rf || g.learners.length > 0 || g.move !== null || g.voters.some((v) => gone.includes(v))) return false;
    if (g.leader === null || gone.includes(g.leader)) return false;
    const own = (await statusOf(cluster, g.leader)).shards.find((s) => s.shard_id === g.group_id)!;
    if (own.role !== 'leader' || JSON.stringify(own.members.filter((m) => m.voter).map((m) => m.node_id).sort()) !== JSON.stringify([...g.voters].sort())) return false;
  }
  for (const n of cluster.live()) {
    const held = (await statusOf(cluster, n.id)).shards.filter((s) => s.holds).map((s) => s.shard_id).sort();
    const want = [0, ...groups.filter((g) => g.voters.includes(n.id)).map((g) => g.group_id)].sort();
    if (JSON.stringify(held) !== JSON.stringify(want)) return false;
  }
  return groups;
}

/** Starts `nodes` processes with `shards` groups of `rf` voters each (placement rounds every 300 ms) and waits until the placement settled. */
export async function startPlaced(opts: { nodes: number; shards: number; rf: number; env?: Record<string, string> }): Promise<{ cluster: TestCluster; groups: Placed[] }> {
  const cluster = await TestCluster.start({
    nodes: opts.nodes, shards: opts.shards,
    env: { STRATA__CLUSTER__REPLICATION_FACTOR: String(opts.rf), STRATA__CLUSTER__PLACEMENT_INTERVAL_MS: '300', ...opts.env },
  });
  try {
    const groups = await waitFor('the initial placement recorded and led', () => settled(cluster, opts.shards, opts.rf), 60_000, 300);
    return { cluster, groups };
  } catch (err) {
    await cluster.stop();
    throw err;
  }
}

/** max − min of the placed replicas per node, over `nodes`. */
export function spreadOf(groups: Placed[], nodes: number[]): number {
  const per = nodes.map((id) => groups.filter((g) => g.voters.includes(id)).length);
  return Math.max(...per) - Math.min(...per);
}

/**
 * Settings for fault tests of the placement loop: rounds every 300 ms, a node dead after 4 s, 4 moves
 * at once, and logs compacted early (replicas hold snapshot files, and new ones come by snapshot).
 */
export function quickPlacementEnv(rf: number): Record<string, string> {
  return {
    STRATA__CLUSTER__REPLICATION_FACTOR: String(rf),
    STRATA__CLUSTER__PLACEMENT_INTERVAL_MS: '300',
    STRATA__CLUSTER__DEAD_AFTER_S: '4',
    STRATA__CLUSTER__MAX_MOVES: '4',
    STRATA__RAFT__SNAPSHOT_EVERY: '100',
    STRATA__RAFT__COMPACTION_MARGIN: '20',
  };
}
