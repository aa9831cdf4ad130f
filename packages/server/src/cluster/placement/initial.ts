import { avalanche } from '@strata/store';
import type { GroupPlacement, NodeId } from './model';

/**
 * A 32-bit mix of two integers (murmur3's finalizer over a combination). It only breaks ties between
 * equally loaded nodes, so that the groups a node shares with each other node are spread out: when a
 * node dies, its replicas are re-created from (and onto) many nodes, not two.
 */
export function mix(a: number, b: number): number {
  return avalanche((Math.imul(a, 0x9e3779b1) ^ Math.imul(b + 0x7f4a7c15, 0x85ebca6b)) >>> 0);
}

/**
 * Pure and deterministic: groups 0..groups−1 on `nodes`, `rf` replicas each (fewer when there are fewer
 * nodes). Each group takes the least loaded nodes (ties broken by a hash of group and node) and its
 * leader is its member leading fewest groups so far, so replicas per node differ by at most one and so
 * do leaders.
 */
export function initialPlacement(groups: number, nodes: readonly NodeId[], rf: number): GroupPlacement[] {
  if (nodes.length === 0) throw new Error('initial placement needs at least one node');
  const ids = [...new Set(nodes)].sort((a, b) => a - b);
  const load = new Map<NodeId, number>(ids.map((n) => [n, 0]));
  const leads = new Map<NodeId, number>(ids.map((n) => [n, 0]));
  const out: GroupPlacement[] = [];
  for (let g = 0; g < groups; g++) {
    const voters = [...ids]
      .sort((a, b) => load.get(a)! - load.get(b)! || mix(g, a) - mix(g, b) || a - b)
      .slice(0, Math.min(rf, ids.length));
    for (const n of voters) load.set(n, load.get(n)! + 1);
    const leader = voters.reduce((best, n) => (leads.get(n)! < leads.get(best)! || (leads.get(n) === leads.get(best) && n < best) ? n : best));
    leads.set(leader, leads.get(leader)! + 1);
    out.push({ id: g, voters: voters.sort((a, b) => a - b), learners: [], leader, move: null });
  }
  return out;
}
