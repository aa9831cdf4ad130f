import type { MemoryUnit } from '@strata/store';
import { arbitrate, asksAboutHistory } from '../../src/retrieval/arbitration';
import { buildAdjacency, neighborsOf } from '../../src/retrieval/graph';
import type { ScoredUnit } from '../../src/retrieval/types';
import { unit } from './helpers';

const scored = (u: MemoryUnit, score: number): ScoredUnit => ({ unit: u, score, signals: { ranks: {}, fused: score, recency: 0, importance: 0, boosts: [] } });

describe('asksAboutHistory', () => {
  it.each([
    ['Where did I live before?', true],
    ['What was my original address?', true],
    ['How has my job changed over the years?', true],
    ['What was the first car I owned?', true],
    ['Do I still work at Acme or did I switch?', true],
    ['Where do I live?', false],
    ['What is my favourite colour?', false],
    ['Firstly, what do I like?', false],
    ['Prioritize my tasks', false],
  ])('%s → %s', (q, expected) => expect(asksAboutHistory(q)).toBe(expected));
});

describe('arbitrate', () => {
  const berlin = unit({ id: 'berlin', content: 'Alice lives in Berlin', subject: 'alice', attribute: 'home city', valid_time: '2020-01-01T00:00:00.000Z' });
  const paris = unit({ id: 'paris', content: 'Alice lives in Paris', subject: 'Alice', attribute: 'Home  City', valid_time: '2023-01-01T00:00:00.000Z' });
  const other = unit({ id: 'tea', content: 'Alice likes tea' });

  it('keeps the current version of a fact, at the group\'s best score', () => {
    const { results, mode, dropped } = arbitrate([scored(berlin, 0.9), scored(other, 0.7), scored(paris, 0.6)], 'Where does Alice live?');
    expect(mode).toBe('current');
    expect(results.map((r) => [r.unit.id, r.score])).toEqual([['paris', 0.9], ['tea', 0.7]]);
    expect(dropped).toEqual(['berlin']);
  });

  it('keeps the history, oldest first, when the query asks for it', () => {
    const { results, mode } = arbitrate([scored(paris, 0.6), scored(other, 0.7), scored(berlin, 0.9)].sort((a, b) => b.score - a.score), 'Where did Alice live originally?');
    expect(mode).toBe('history');
    expect(results.map((r) => r.unit.id)).toEqual(['berlin', 'paris', 'tea']);
    for (let i = 1; i < results.length; i++) expect(results[i].score).toBeLessThanOrEqual(results[i - 1].score);
  });

  it('follows EvolvedTo edges over timestamps, and Contradicts by time', () => {
    // v2 has the older timestamp but the edge says v1 evolved to v2
    const v1 = unit({ id: 'v1', content: 'plan A', valid_time: '2024-05-01T00:00:00.000Z' });
    const v2 = unit({ id: 'v2', content: 'plan B', valid_time: '2024-01-01T00:00:00.000Z' });
    const c1 = unit({ id: 'c1', content: 'meeting on Monday', valid_time: '2024-01-01T00:00:00.000Z' });
    const c2 = unit({ id: 'c2', content: 'meeting on Tuesday', valid_time: '2024-02-01T00:00:00.000Z' });
    const adj = neighborsOf(buildAdjacency([
      { source_id: 'v1', target_id: 'v2', relation: 'EvolvedTo', weight: 1 },
      { source_id: 'c2', target_id: 'c1', relation: 'Contradicts', weight: 1 },
    ]));
    const input = [scored(v1, 0.8), scored(c1, 0.7), scored(v2, 0.5), scored(c2, 0.4)];
    expect(arbitrate(input, 'what is the plan', adj).results.map((r) => r.unit.id)).toEqual(['v2', 'c2']);
    expect(arbitrate(input, 'how did the plan change', adj).results.map((r) => r.unit.id)).toEqual(['v1', 'v2', 'c1', 'c2']);
  });

  it('uses superseded_by, and leaves unrelated results untouched', () => {
    const old = unit({ id: 'old', content: 'phone 123', superseded_by: 'new', retired_at: '2024-02-01T00:00:00.000Z', valid_time: '2024-03-01T00:00:00.000Z' });
    const fresh = unit({ id: 'new', content: 'phone 456', valid_time: '2024-01-01T00:00:00.000Z' });
    expect(arbitrate([scored(old, 0.9), scored(fresh, 0.3)], 'my phone number').results.map((r) => r.unit.id)).toEqual(['new']);
    const plain = [scored(other, 0.9), scored(unit({ id: 'x' }), 0.2)];
    expect(arbitrate(plain, 'anything').results).toEqual(plain);
    expect(arbitrate([], 'anything').results).toEqual([]);
  });

  it('can be forced into a mode', () => {
    const r = arbitrate([scored(berlin, 0.9), scored(paris, 0.6)], 'where did alice live before', undefined, { mode: 'current' });
    expect(r.results.map((x) => x.unit.id)).toEqual(['paris']);
  });
});
