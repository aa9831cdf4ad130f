/** Helpers of the split and merge tests (docs/cluster.md "Splitting a group", "Merging two groups"). */
import { join } from 'node:path';
import { StateDb, prefixRange, type KeyRangeTable, type KeySplit } from '@strata/store';
import { randomUUID } from 'node:crypto';
import { api, waitFor, type TestCluster } from '../helpers/cluster';
import { statusOf } from '../helpers/placement';

export interface RangesStatus {
  shards: { shard_id: number; role: string; leader: number | null; commit_index: number; applied_index: number; holds: boolean }[];
  key_ranges: KeyRangeTable & { recorded: boolean; splits: KeySplit[]; dropping: KeySplit[]; aborting: KeySplit[]; retired: number[]; removed?: number[] };
  placement: { groups: { group_id: number; voters: number[]; leader: number | null }[] };
  splits: { split: KeySplit; step: string; error: string | null }[];
}

export async function rangesOf(cluster: TestCluster, id: number): Promise<RangesStatus> {
  return (await statusOf(cluster, id)) as unknown as RangesStatus;
}

/** Every live node sees `groups` ranges and no split or merge in flight, dropping or being put back; the first node's view. */
export async function rangesSettled(cluster: TestCluster, groups: number, timeoutMs: number): Promise<RangesStatus> {
  return waitFor(`${groups} key range(s) and nothing in flight, as every node sees it`, async () => {
    for (const n of cluster.live()) {
      const s = (await rangesOf(cluster, n.id)).key_ranges;
      if (s.ranges.length !== groups || s.splits.length || s.dropping.length || s.aborting.length) return false;
    }
    return rangesOf(cluster, cluster.live()[0].id);
  }, timeoutMs, 500);
}

/**
 * Every live node's replica of every group it holds has applied what that group's leader had committed
 * when this began: from then on a read served from any replica (the default, not linearizable) sees every
 * write acknowledged before. Called once the writes have stopped.
 */
export async function replicasCaughtUp(cluster: TestCluster, timeoutMs = 60_000): Promise<void> {
  const target = new Map<number, number>();
  for (const n of cluster.live()) {
    for (const s of (await rangesOf(cluster, n.id)).shards) if (s.role === 'leader') target.set(s.shard_id, s.commit_index);
  }
  await waitFor('every replica caught up with its leader', async () => {
    const statuses = await Promise.all(cluster.live().map(async (n) => ({ id: n.id, status: await rangesOf(cluster, n.id) })));
    // A group that was electing when the targets were read (a busy machine starves a leader's ticks) takes
    // its target from the leader it has now, once that leader's commit index covers every replica's applied
    // and known commit index: a new leader learns the commit index only by committing an entry of its term.
    for (const { status } of statuses) {
      for (const s of status.shards) {
        if (s.role !== 'leader' || target.has(s.shard_id)) continue;
        const replicas = statuses.flatMap((x) => x.status.shards.filter((r) => r.shard_id === s.shard_id && r.holds));
        if (replicas.every((r) => r.applied_index <= s.commit_index && r.commit_index <= s.commit_index)) target.set(s.shard_id, s.commit_index);
      }
    }
    for (const { id, status } of statuses) {
      for (const s of status.shards) {
        // thrown, not false: a timeout then says which replica was behind (waitFor shows the last error)
        if (s.holds && s.applied_index < (target.get(s.shard_id) ?? Infinity)) {
          throw new Error(`node ${id}'s replica of group ${s.shard_id} applied ${s.applied_index} of ${target.get(s.shard_id) ?? 'no leader seen'} (role ${s.role}, leader ${s.leader}; removed groups ${JSON.stringify(status.key_ranges.removed ?? [])})`);
        }
      }
    }
    return true;
  }, timeoutMs, 300);
}

/** How many records of `user` a stopped node's store of a group holds in a few per-user sublevels (events, ids, pending). */
export async function userRecordsOnDisk(dataDir: string, group: number, user: string): Promise<number> {
  const db = await StateDb.open(join(dataDir, `shard-${group}`, 'state'));
  try {
    let n = 0;
    for (const sub of [db.events, db.eventIds, db.pendingByUser, db.idempotency]) n += (await (sub as typeof db.events).keys(prefixRange(user)).all()).length;
    return n;
  } finally {
    await db.close();
  }
}

/**
 * Writes for one new user after another through the live nodes in turn while a split or merge runs,
 * and counts what the hand-over answered (`200`, `503 range_moving`, …); `stop` ends it and gives the counts.
 */
export function startProber(cluster: TestCluster): { stop: () => Promise<Record<string, number>> } {
  let probing = true;
  const answers = new Map<string, number>();
  const stream = randomUUID();
  const loop = (async () => {
    for (let i = 0; probing; i++) {
      const nodes = cluster.live();
      const r = await api(nodes[i % nodes.length].url, 'POST', `/v1/users/probe-${randomUUID()}/streams/${stream}/events`, { content: `probe ${i}` }, { 'idempotency-key': randomUUID() }).catch(() => null);
      const code = r === null ? 'no answer' : r.status === 200 ? '200' : `${r.status} ${(r.body as { code?: string }).code}`;
      answers.set(code, (answers.get(code) ?? 0) + 1);
    }
  })();
  return {
    stop: async () => {
      probing = false;
      await loop;
      return Object.fromEntries(answers);
    },
  };
}
