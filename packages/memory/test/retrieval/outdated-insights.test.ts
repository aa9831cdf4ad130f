/**
 * Which insights quote a memory replaced since they were planned (outdated-insights.ts): a user's index keeps
 * the answer between queries, so a query no longer walks every insight's members (hundreds each), and
 * drops it when a member's retirement or an edge changes. Counts the walks; asserts no timing.
 */
import type { Edge, MemoryUnit } from '@strata/store';
import { retrieve, type RetrievalSources } from '../../src/retrieval/pipeline';
import { OutdatedInsights, summarizesSuperseded } from '../../src/retrieval/outdated-insights';
import { UserIndex, type IndexedRecord } from '../../src/retrieval/unit-set';
import type { Neighbors } from '../../src/retrieval/types';
import { unit } from './helpers';

const NOW = Date.parse('2024-06-01T00:00:00.000Z');
const vec = (i: number) => Float32Array.from([1, i % 3, (i * 7) % 5, 0.5]);
const derived = (id: string, insight: string, member: string): Edge =>
  ({ edge_id: id, user_id: 'alice', source_id: insight, target_id: member, relation: 'DerivedFrom', weight: 1, created_at: '2024-01-01T00:00:00.000Z' }) as unknown as Edge;

function memory(): { units: MemoryUnit[]; edges: Edge[] } {
  const units: MemoryUnit[] = [];
  for (let i = 0; i < 12; i++) {
    units.push(unit({ id: `m${i}`, content: `Caroline lives in ${i % 2 ? 'York' : 'Leeds'} near the river (${i})`, valid_time: new Date(NOW - (30 - i) * 86_400_000).toISOString() }));
  }
  units.push(unit({ id: 'i0', level: 2, content: 'Recurring topic: where Caroline lives (6 memories) Key points: York, Leeds, river' }));
  units.push(unit({ id: 'i1', level: 2, content: 'Recurring topic: Caroline by the river (6 memories) Key points: Leeds, York' }));
  const edges = units.slice(0, 12).map((u, i) => derived(`d${i}`, i < 6 ? 'i0' : 'i1', u.id));
  return { units, edges };
}

/** The index's neighbours, counting the walks of an insight's members. */
function counting(index: UserIndex): { neighbors: Neighbors; walks: () => number } {
  let walks = 0;
  return { neighbors: (id) => { if (id.startsWith('i')) walks++; return index.neighbors(id); }, walks: () => walks };
}

function sourcesOf(index: UserIndex, outdated?: OutdatedInsights): RetrievalSources<IndexedRecord> {
  return {
    vectorIndexes: [index.vector], textIndexes: [index.text], getUnit: (id) => index.units.get(id), neighbors: index.neighbors,
    ...(outdated ? { outdatedInsight: (id: string) => outdated.known(id) } : {}),
  };
}

const ask = (sources: RetrievalSources<IndexedRecord>) => retrieve(sources, { user_id: 'alice', query: 'Where does Caroline live now?', queryVector: vec(1), limit: 14, graph_depth: 1 }, {}, NOW).results
  .map((r) => ({ id: r.unit.id, score: r.score, signals: r.signals }));

describe('outdated insights, kept by the user\'s index', () => {
  const indexOf = (units: MemoryUnit[], edges: Edge[]) => {
    const index = new UserIndex({ embedder: { dimensions: 4 } });
    units.forEach((u, i) => index.put(u, vec(i)));
    index.loadEdges(edges);
    return index;
  };

  it('answers as summarizesSuperseded, walking an insight\'s members once while nothing changes', () => {
    const { units, edges } = memory();
    const index = indexOf(units, edges);
    index.put({ ...units[2], retired_at: '2024-05-01T00:00:00.000Z', retired_reason: 'superseded' }, vec(2));
    const { neighbors, walks } = counting(index);
    const kept = new OutdatedInsights(neighbors, () => index.units);
    const plain = ask(sourcesOf(index));
    expect(plain.find((r) => r.id === 'i0')?.signals.boosts).toContain('outdated_insight');
    expect(plain.find((r) => r.id === 'i1')?.signals.boosts).not.toContain('outdated_insight');
    expect(ask(sourcesOf(index, kept))).toEqual(plain);
    expect(walks()).toBe(2);
    expect(ask(sourcesOf(index, kept))).toEqual(plain);
    expect(walks()).toBe(2); // the second query walked no member
  });

  it('drops what it kept when a member\'s retirement or an edge changes, not when a record only is replaced', () => {
    const { units, edges } = memory();
    const index = indexOf(units, edges);
    const insights = index.outdatedInsights;
    const lookup = (id: string) => index.units.get(id);
    expect(insights.known('i1')).toBe(false);
    index.replaceRecord({ ...units[7], importance: 0.9 }); // a reinforcement
    expect(insights.size).toBe(1);
    index.put({ ...units[7], retired_at: '2024-05-01T00:00:00.000Z', retired_reason: 'superseded' }, vec(7));
    expect(insights.size).toBe(0);
    expect(insights.known('i1')).toBe(true);
    expect(summarizesSuperseded('i1', index.neighbors, lookup)).toBe(true);
    index.removeEdge('d7');
    expect(insights.known('i1')).toBe(false);
    index.putEdge(derived('d7', 'i1', 'm7'));
    expect(insights.known('i1')).toBe(true);
    index.delete('m7'); // and its edges
    expect(insights.known('i1')).toBe(false);
    // a member the set does not hold may be found by the query elsewhere: not kept, asked of its lookup
    index.putEdge(derived('dx', 'i1', 'elsewhere'));
    expect(insights.known('i1')).toBeNull();
    expect(insights.size).toBe(0);
  });
});
