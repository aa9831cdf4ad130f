import type { MemoryUnit } from '@strata/store';
import { SharedDirections, SimilarUnits } from '../../src/consolidation';

const T = '2026-01-01T00:00:00.000Z';
const unit = (id: string, extra: Partial<MemoryUnit> = {}): MemoryUnit => ({
  id, user_id: 'u', stream_id: 's', org_id: null, agent_id: null, level: 1, memory_type: 'factual', content: id, keywords: [], speaker: 'user',
  valid_time: T, transaction_time: T, references: [`e-${id}`], assets: [], importance: 0.5, subject: null, attribute: null,
  retired_at: null, retired_reason: null, superseded_by: null, ...extra,
});

// The same memory as server/test/workers/memory-view.test.ts builds through the state machine.
const units = [
  unit('a'), unit('b'), unit('c'), unit('d'), unit('old', { retired_at: T, retired_reason: 'superseded', superseded_by: 'a' }),
  unit('home', { subject: 'user', attribute: 'residence' }), unit('l2', { level: 2 }), unit('foreign'), unit('novector'),
];
const v = (xs: number[], embedder_id = 'emb-a') => ({ vector: Float32Array.from(xs), embedder_id });
const vectors = new Map([
  ['a', v([1, 0, 0])], ['b', v([0.6, 0.8, 0])], ['c', v([0.6, 0.8, 0])], ['d', v([0, 0, 1])], ['old', v([1, 0, 0])],
  ['home', v([0, 1, 0])], ['l2', v([1, 0, 0])], ['foreign', v([1, 0, 0], 'emb-other')],
]);

describe('SimilarUnits', () => {
  const similar = SimilarUnits.of(units, vectors, 'emb-a');

  it('keeps current L1 units with a vector of the embedder only', () => {
    expect(similar.size).toBe(5);
  });

  it('ranks by cosine, ties by id, best k only', () => {
    const hits = similar.topK(new Float32Array([2, 1, 0]), 3);
    expect(hits.map((h) => h.unit.id)).toEqual(['b', 'c', 'a']);
    expect(hits[0].similarity).toBeCloseTo((2 * 0.6 + 0.8) / Math.sqrt(5), 6);
    expect(hits[2].similarity).toBeCloseTo(2 / Math.sqrt(5), 6);
    expect(similar.topK(new Float32Array([0, 0, 1]), 10).map((h) => h.unit.id)).toEqual(['d', 'a', 'b', 'c', 'home']);
  });

  it('answers nothing for a zero vector or k ≤ 0, and skips vectors of another dimension', () => {
    expect(similar.topK(new Float32Array([0, 0, 0]), 3)).toEqual([]);
    expect(similar.topK(new Float32Array([1, 0, 0]), 0)).toEqual([]);
    expect(similar.topK(new Float32Array([1, 0]), 3)).toEqual([]);
  });
});

/** The full scan SimilarUnits replaced: every unit compared, sorted, the best k kept. */
function scan(held: Map<string, { unit: MemoryUnit; vector: Float32Array }>, q: Float32Array, k: number) {
  const qn = Math.sqrt(q.reduce((s, x) => s + x * x, 0));
  if (k <= 0 || qn === 0) return [];
  const all = [...held.values()].map(({ unit, vector }) => {
    let d = 0;
    let n = 0;
    for (let i = 0; i < q.length; i++) { d += q[i] * vector[i]; n += vector[i] * vector[i]; }
    return { unit, similarity: d / (qn * Math.sqrt(n)) };
  });
  return all.sort((a, b) => b.similarity - a.similarity || (a.unit.id < b.unit.id ? -1 : 1)).slice(0, k);
}

describe('SimilarUnits kept current, with the pruning bound', () => {
  it.each([1, 2, 3, 4])('answers what a full scan answers through puts, replacements and removals (seed %i)', (seed) => {
    let state = seed * 7919;
    const rand = () => ((state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32);
    const d = 24;
    // Like sentence vectors: one dominant shared direction, a few topics, exact repeats (ties).
    const common = Array.from({ length: d }, () => rand() - 0.5);
    const topics = Array.from({ length: 5 }, () => Array.from({ length: d }, () => rand() - 0.5));
    const make = () => {
      const t = topics[Math.floor(rand() * topics.length)];
      return Float32Array.from(common, (x, i) => 3 * x + t[i] + 0.3 * (rand() - 0.5));
    };
    const pool = Array.from({ length: 40 }, make);
    // The bound from 16 units (and again from 128), with directions another set computed when `shared` has them.
    const shared = new SharedDirections();
    if (seed % 2 === 0) new SimilarUnits('emb-a', { boundFrom: 1, shared }).put(unit('other'), { vector: make(), embedder_id: 'emb-a' });
    const similar = new SimilarUnits('emb-a', { boundFrom: 16, shared });
    const held = new Map<string, { unit: MemoryUnit; vector: Float32Array }>();
    for (let step = 0; step < 900; step++) {
      const id = `u${String(Math.floor(rand() * 400)).padStart(3, '0')}`;
      const r = rand();
      if (r < 0.1) {
        similar.remove(id);
        held.delete(id);
      } else if (r < 0.15) {
        similar.put(unit(id, { retired_at: T }), { vector: make(), embedder_id: 'emb-a' }); // retired: out
        held.delete(id);
      } else {
        const vector = r < 0.3 ? pool[Math.floor(rand() * pool.length)] : make();
        const u = unit(id, { content: `${id}@${step}` });
        similar.put(u, { vector, embedder_id: 'emb-a' });
        held.set(id, { unit: u, vector });
      }
      if (step % 9 === 0) {
        const q = rand() < 0.2 ? pool[Math.floor(rand() * pool.length)] : make();
        for (const k of [1, 8]) expect(similar.topK(q, k)).toEqual(scan(held, q, k));
      }
    }
    expect(similar.size).toBe(held.size);
  });
});
