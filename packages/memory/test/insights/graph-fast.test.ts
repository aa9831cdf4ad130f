/**
 * buildGraph's similarity pass (one Float64Array, norms summed once) against the direct definition it
 * replaced: the same graph, weights bit for bit and neighbours in the same insertion order, on vectors
 * with ties, zero vectors, units without vectors, several scopes and both float32 and number inputs.
 */
import type { Edge, MemoryUnit } from '@strata/store';
import { buildGraph, RELATION_WEIGHT, scopeOf, type Graph, type GraphOptions } from '../../src/insights/graph';
import { cosine } from '../../src/embedding/vector-math';
import { mulberry32 } from '../../src/embedding/hash';

/** The definition: every pair through `cosine`, all neighbours above the threshold sorted, the best k kept. */
function reference(units: MemoryUnit[], edges: Edge[], vectors: Map<string, ArrayLike<number>>, options: GraphOptions): Graph {
  const g: Graph = new Map();
  const add = (a: string, b: string, w: number) => {
    if (a === b || w <= 0) return;
    const cur = g.get(a)?.get(b) ?? 0;
    if (w <= cur) return;
    g.get(a)?.set(b, w);
    g.get(b)?.set(a, w);
  };
  const byId = new Map(units.map((u) => [u.id, u]));
  for (const u of units) g.set(u.id, new Map());
  for (const e of edges) {
    const a = byId.get(e.source_id);
    const b = byId.get(e.target_id);
    const rw = RELATION_WEIGHT[e.relation];
    if (!a || !b || rw === undefined || scopeOf(a) !== scopeOf(b)) continue;
    add(a.id, b.id, rw * e.weight);
  }
  for (let i = 0; i < units.length; i++) {
    const va = vectors.get(units[i].id);
    if (!va) continue;
    const near: { id: string; s: number }[] = [];
    for (let j = 0; j < units.length; j++) {
      const vb = vectors.get(units[j].id);
      if (i === j || !vb || scopeOf(units[i]) !== scopeOf(units[j])) continue;
      const s = cosine(va, vb);
      if (s >= options.similarityThreshold) near.push({ id: units[j].id, s });
    }
    near.sort((x, y) => y.s - x.s || (x.id < y.id ? -1 : 1));
    for (const n of near.slice(0, options.similarityK)) add(units[i].id, n.id, n.s);
  }
  return g;
}

const T = '2026-01-01T00:00:00.000Z';
const unit = (id: string, org: string | null): MemoryUnit => ({
  id, user_id: 'u', stream_id: 's', org_id: org, agent_id: null, level: 1, memory_type: 'factual', content: id, keywords: [], speaker: null,
  valid_time: T, transaction_time: T, references: [], assets: [], importance: 0.5, subject: null, attribute: null,
  retired_at: null, retired_reason: null, superseded_by: null,
});

const asPairs = (g: Graph) => [...g].map(([k, m]) => [k, [...m]]);

describe('buildGraph', () => {
  it.each([1, 2, 3])('equals the pairwise definition (seed %i)', (seed) => {
    const rand = mulberry32(seed);
    const n = 120;
    const units = Array.from({ length: n }, (_, i) => unit(`u${String((i * 37) % n).padStart(3, '0')}`, rand() < 0.2 ? 'org-1' : null));
    const vectors = new Map<string, ArrayLike<number>>();
    const base = Array.from({ length: 6 }, () => Array.from({ length: 16 }, () => rand() - 0.5));
    units.forEach((u, i) => {
      const r = rand();
      if (r < 0.05) return; // no vector
      if (r < 0.08) { vectors.set(u.id, new Float32Array(16)); return; } // zero vector
      const b = base[i % base.length];
      const v = b.map((x) => x + (r < 0.3 ? 0 : (rand() - 0.5) * 0.6)); // some exact repeats: ties
      vectors.set(u.id, r < 0.6 ? Float32Array.from(v) : v);
    });
    const edges: Edge[] = Array.from({ length: 60 }, (_, i) => ({
      edge_id: `e${i}`, user_id: 'u', source_id: units[Math.floor(rand() * n)].id, target_id: units[Math.floor(rand() * n)].id,
      relation: (['RelatedTo', 'EvolvedTo', 'Next', 'DerivedFrom'] as const)[i % 4], weight: Math.round(rand() * 100) / 100, created_at: T,
    }));
    for (const options of [{ similarityThreshold: 0.5, similarityK: 5 }, { similarityThreshold: -1, similarityK: 3 }, { similarityThreshold: 0.9, similarityK: 0 }]) {
      expect(asPairs(buildGraph(units, edges, vectors, options))).toEqual(asPairs(reference(units, edges, vectors, options)));
    }
  });

  it('refuses vectors of different lengths, as cosine does', () => {
    const units = [unit('a', null), unit('b', null)];
    const vectors = new Map<string, ArrayLike<number>>([['a', [1, 0]], ['b', [1, 0, 0]]]);
    expect(() => buildGraph(units, [], vectors, { similarityThreshold: 0.5, similarityK: 5 })).toThrow(RangeError);
  });
});
