/**
 * Weighted label propagation (Raghavan, Albert & Kumara, 2007), made deterministic: nodes are visited in an
 * order shuffled by a seeded PRNG each round, a node takes the label with the largest summed edge weight
 * among its neighbours, keeps its own label on a tie with it, and otherwise breaks ties by the smallest
 * label. Asynchronous updates and a bounded number of rounds guarantee termination.
 */
import type { Graph } from './graph';
import { mulberry32 } from '../embedding/hash';

export interface CommunityOptions {
  seed: number;
  maxRounds: number;
}

export const DEFAULT_COMMUNITY_OPTIONS: CommunityOptions = { seed: 42, maxRounds: 50 };

/** Communities as sorted member lists, largest first (ties by first member id). */
export function labelPropagation(graph: Graph, options: CommunityOptions = DEFAULT_COMMUNITY_OPTIONS): string[][] {
  const nodes = [...graph.keys()].sort();
  const label = new Map(nodes.map((n) => [n, n]));
  const rand = mulberry32(options.seed);
  for (let round = 0; round < options.maxRounds; round++) {
    const order = [...nodes];
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [order[i], order[j]] = [order[j], order[i]];
    }
    let changed = false;
    for (const n of order) {
      const nb = graph.get(n);
      if (!nb || nb.size === 0) continue;
      const score = new Map<string, number>();
      for (const [m, w] of nb) {
        const l = label.get(m) as string;
        score.set(l, (score.get(l) ?? 0) + w);
      }
      const own = label.get(n) as string;
      let best = own;
      let bestScore = score.get(own) ?? -1;
      for (const [l, s] of [...score.entries()].sort((x, y) => (x[0] < y[0] ? -1 : 1))) {
        if (s > bestScore + 1e-12) { best = l; bestScore = s; }
      }
      if (best !== own) { label.set(n, best); changed = true; }
    }
    if (!changed) break;
  }
  const groups = new Map<string, string[]>();
  for (const n of nodes) {
    const l = label.get(n) as string;
    const g = groups.get(l) ?? [];
    g.push(n);
    groups.set(l, g);
  }
  return [...groups.values()].map((g) => g.sort()).sort((a, b) => b.length - a.length || (a[0] < b[0] ? -1 : 1));
}
