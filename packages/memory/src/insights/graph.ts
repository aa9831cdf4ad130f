/**
 * The weighted, undirected memory graph that communities are found in: current L1 units as nodes, stored
 * edges (RelatedTo, Supports, …) plus nearest-neighbour similarity as weights. Units of different scopes
 * (another org, or private versus org knowledge) are never joined, so an insight never mixes them.
 */
import type { Edge, MemoryUnit, Relation } from '@strata/store';
import { cosine } from '../embedding/vector-math';

export type Graph = Map<string, Map<string, number>>;

/** How much each stored relation says "these belong to one topic". EvolvedTo joins versions of one fact. */
export const RELATION_WEIGHT: Partial<Record<Relation, number>> = {
  RelatedTo: 1, Supports: 1, Contradicts: 0.8, EvolvedTo: 0.8, CausedBy: 0.8, Next: 0.5, Abstracts: 0.5,
};

export interface GraphOptions {
  /** Similarity at or above which two units are joined even without a stored edge. */
  similarityThreshold: number;
  /** Similarity neighbours kept per unit (bounds the graph's degree). */
  similarityK: number;
}

export const scopeOf = (u: MemoryUnit): string => u.org_id ?? '';

function addWeight(g: Graph, a: string, b: string, w: number): void {
  if (a === b || w <= 0) return;
  // Several reasons to join a pair do not add up past the strongest one.
  const cur = g.get(a)?.get(b) ?? 0;
  if (w <= cur) return;
  g.get(a)?.set(b, w);
  g.get(b)?.set(a, w);
}

export function buildGraph(units: MemoryUnit[], edges: Edge[], vectors: Map<string, ArrayLike<number>>, options: GraphOptions): Graph {
  const g: Graph = new Map();
  const byId = new Map(units.map((u) => [u.id, u]));
  for (const u of units) g.set(u.id, new Map());
  for (const e of edges) {
    const a = byId.get(e.source_id);
    const b = byId.get(e.target_id);
    const rw = RELATION_WEIGHT[e.relation];
    if (!a || !b || rw === undefined || scopeOf(a) !== scopeOf(b)) continue;
    addWeight(g, a.id, b.id, rw * e.weight);
  }
  const ids = units.map((u) => u.id);
  for (let i = 0; i < ids.length; i++) {
    const va = vectors.get(ids[i]);
    if (!va) continue;
    const near: { id: string; s: number }[] = [];
    for (let j = 0; j < ids.length; j++) {
      if (i === j) continue;
      const vb = vectors.get(ids[j]);
      if (!vb || scopeOf(units[i]) !== scopeOf(units[j])) continue;
      const s = cosine(va, vb);
      if (s >= options.similarityThreshold) near.push({ id: ids[j], s });
    }
    near.sort((x, y) => y.s - x.s || (x.id < y.id ? -1 : 1));
    for (const n of near.slice(0, options.similarityK)) addWeight(g, ids[i], n.id, n.s);
  }
  return g;
}
