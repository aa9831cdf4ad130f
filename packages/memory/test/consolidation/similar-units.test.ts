import type { MemoryUnit } from '@strata/store';
import { SimilarUnits } from '../../src/consolidation';

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
