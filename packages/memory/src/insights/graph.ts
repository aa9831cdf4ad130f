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
  const rows = SimilarityRows.of(units, vectors);
  const k = options.similarityK;
  for (let i = 0; i < units.length; i++) {
    if (!rows.has(i)) continue;
    const near = rows.nearest(i, options.similarityThreshold, k);
    for (const n of near) addWeight(g, units[i].id, units[n.j].id, n.s);
  }
  return g;
}

/**
 * The all-pairs cosine pass of `buildGraph`, O(n²·d) and the cost of insight planning: the vectors copied
 * once into one Float64Array (exact for float32 and number inputs) with each squared norm summed once,
 * so a pair costs one dot product. `cosine` sums the dot product and both squared norms in the same
 * order, so every similarity is bit for bit the value `cosine(va, vb)` returns, and so is the graph.
 */
class SimilarityRows {
  private constructor(
    private readonly dims: Int32Array, // per unit: its vector's length, -1 without one
    private readonly offset: Int32Array,
    private readonly data: Float64Array,
    private readonly sq: Float64Array, // squared norms
    private readonly scope: Int32Array,
    private readonly ids: string[],
    private readonly raw: (ArrayLike<number> | undefined)[],
  ) {}

  static of(units: MemoryUnit[], vectors: Map<string, ArrayLike<number>>): SimilarityRows {
    const n = units.length;
    const dims = new Int32Array(n).fill(-1);
    const offset = new Int32Array(n);
    const raw = units.map((u) => vectors.get(u.id));
    let size = 0;
    raw.forEach((v, i) => {
      if (!v) return;
      dims[i] = v.length;
      offset[i] = size;
      size += v.length;
    });
    const data = new Float64Array(size);
    const sq = new Float64Array(n);
    raw.forEach((v, i) => {
      if (!v) return;
      let s = 0;
      for (let x = 0; x < v.length; x++) {
        data[offset[i] + x] = v[x];
        s += v[x] * v[x];
      }
      sq[i] = s;
    });
    const scopes = new Map<string, number>();
    const scope = Int32Array.from(units, (u) => {
      const key = scopeOf(u);
      let id = scopes.get(key);
      if (id === undefined) scopes.set(key, (id = scopes.size));
      return id;
    });
    return new SimilarityRows(dims, offset, data, sq, scope, units.map((u) => u.id), raw);
  }

  has(i: number): boolean {
    return this.dims[i] >= 0;
  }

  /**
   * The `k` units of i's scope most similar to unit i at or above `threshold`, best first, ties by the
   * smaller id (the order a full sort by (similarity desc, id) gives, kept by insertion into a short list).
   */
  nearest(i: number, threshold: number, k: number): { j: number; s: number }[] {
    const { dims, offset, data, sq, scope, ids } = this;
    const top: { j: number; s: number }[] = [];
    if (k <= 0) return top;
    const d = dims[i];
    const oi = offset[i];
    const na = sq[i];
    const better = (s: number, j: number, than: { j: number; s: number }) => s > than.s || (s === than.s && ids[j] < ids[than.j]);
    for (let j = 0; j < ids.length; j++) {
      if (j === i || dims[j] < 0 || scope[j] !== scope[i]) continue;
      if (dims[j] !== d) cosine(this.raw[i]!, this.raw[j]!); // throws, as a direct comparison would
      const oj = offset[j];
      let dot = 0;
      for (let x = 0; x < d; x++) dot += data[oi + x] * data[oj + x];
      const nb = sq[j];
      const s = na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
      if (!(s >= threshold)) continue;
      if (top.length === k && !better(s, j, top[k - 1])) continue;
      let at = top.length;
      while (at > 0 && better(s, j, top[at - 1])) at--;
      top.splice(at, 0, { j, s });
      if (top.length > k) top.pop();
    }
    return top;
  }
}
