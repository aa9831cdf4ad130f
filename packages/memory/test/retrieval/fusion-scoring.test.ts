/**
 * Fusion scores candidates best fused score first and stops once no candidate left can reach the
 * results, and keeps what it reads from a record (unit-traits.ts) between queries. Both must leave
 * the answer exactly as scoring every candidate gives it.
 */
import type { MemoryUnit } from '@strata/store';
import { fuse, type FusionOptions } from '../../src/retrieval/fusion';
import { buildAdjacency, neighborsOf } from '../../src/retrieval/graph';
import { queryIntent } from '../../src/retrieval/intent';
import { mulberry32 } from '../../src/embedding/hash';
import type { RankedList, ScoredUnit } from '../../src/retrieval/types';
import { unit } from './helpers';

const NOW = Date.parse('2024-06-01T00:00:00.000Z');
const DAY = 86_400_000;
const SPEAKERS = [null, 'Caroline', 'Melanie', 'user', 'assistant'];
const CONTENTS = [
  'I moved to York last spring',
  'Did you go to the park?',
  'We adopted a dog in March',
  'I quit the cafe',
  'The meeting is at 3pm on Friday',
  'Melanie painted a sunrise [image]',
  'Caroline has 3 kids',
];

/** A user's memory of `n` units with every trait fusion reads varied, and ranked lists over it. */
function world(seed: number, n: number) {
  const rand = mulberry32(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)];
  const units: MemoryUnit[] = [];
  for (let i = 0; i < n; i++) {
    const t = new Date(NOW - Math.floor(rand() * 400) * DAY).toISOString();
    units.push(unit({
      id: `u${String(i).padStart(4, '0')}`,
      // repeated contents exercise de-duplication; the index keeps most of them distinct
      content: rand() < 0.2 ? pick(CONTENTS) : `${pick(CONTENTS)} #${i}`,
      speaker: pick(SPEAKERS),
      level: rand() < 0.15 ? 2 : 1,
      stream_id: rand() < 0.5 ? 's1' : 's2',
      agent_id: rand() < 0.3 ? 'agent-1' : null,
      memory_type: rand() < 0.3 ? 'procedural' : 'factual',
      valid_time: rand() < 0.8 ? t : new Date(NOW - Math.floor(rand() * 400) * DAY).toISOString(),
      transaction_time: t,
      importance: rand(),
      subject: rand() < 0.3 ? pick(['caroline', 'melanie']) : null,
      attribute: rand() < 0.3 ? pick(['residence', 'job', 'pet']) : null,
      references: rand() < 0.7 ? [`e${Math.floor(rand() * n)}`] : [],
    }));
  }
  const ids = units.map((u) => u.id);
  const shuffled = () => [...ids].sort(() => rand() - 0.5).slice(0, 50 + Math.floor(rand() * 250));
  const lists: RankedList[] = [
    { name: 'vector', weight: 0.7, items: shuffled().map((id) => ({ id })) },
    { name: 'text', weight: 1, items: shuffled().map((id) => ({ id })) },
    { name: 'own', weight: 0.5, items: shuffled().map((id) => ({ id })) },
  ];
  const edges = Array.from({ length: n }, (_, i) => ({
    source_id: pick(ids), target_id: pick(ids), relation: pick(['RelatedTo', 'Next', 'Supports'] as const), weight: rand(), i,
  }));
  return { units, lists, neighbors: neighborsOf(buildAdjacency(edges)), pick, rand };
}

function options(seed: number, limit: number): FusionOptions {
  const rand = mulberry32(seed * 7 + 1);
  const queries = ['Where does Caroline live now?', 'When did Melanie paint?', 'What did Caroline do before?', 'how many kids', 'dog'];
  const query = queries[Math.floor(rand() * queries.length)];
  return {
    now: NOW,
    limit,
    minScore: rand() < 0.3 ? rand() * 0.2 : 0,
    graphDepth: Math.floor(rand() * 3),
    importanceHalfLifeDays: rand() < 0.5 ? 30 : undefined,
    agentId: rand() < 0.5 ? 'agent-1' : null,
    streamId: rand() < 0.7 ? 's1' : null,
    scope: 'user',
    questionFactor: 0.7,
    insightFactor: 0.5,
    speakerFocus: rand() < 0.5 ? { named: new Set(['caroline']), factor: 0.5 } : null,
    timeFocus: rand() < 0.5 ? { ranges: [{ start: NOW - 100 * DAY, end: NOW - 30 * DAY }], factor: 0.3 } : null,
    answerFocus: queryIntent(query),
    facetFocus: { facets: new Set(['residence']), factor: 0.8 },
    collapseKey: rand() < 0.5 ? (u) => (u.references && u.references.length > 0 ? u.references[0] : null) : undefined,
  };
}

const summary = (rs: ScoredUnit[]) => rs.map((r) => ({ id: r.unit.id, score: r.score, signals: r.signals }));

describe('fusion scores only the candidates that can rank', () => {
  it('answers exactly as scoring every candidate does, over varied memories and queries', () => {
    for (let seed = 1; seed <= 60; seed++) {
      const w = world(seed, 400);
      const byId = new Map(w.units.map((u) => [u.id, u]));
      const limit = 1 + (seed % 25);
      const input = { lists: w.lists, getUnit: (id: string) => byId.get(id), accept: () => true, neighbors: w.neighbors };
      // a limit above the number of candidates makes fusion score every one of them
      const all = fuse({ ...input, options: options(seed, 100_000) });
      const top = fuse({ ...input, options: options(seed, limit) });
      expect(summary(top)).toEqual(summary(all.slice(0, limit)));
    }
  });

  it('never reads the records of candidates too far down to rank, and reads none again on the next query', () => {
    const units = Array.from({ length: 500 }, (_, i) => unit({ id: `c${String(i).padStart(3, '0')}`, content: `note ${i}` }));
    const reads = new Map<string, number>();
    for (const u of units) {
      const time = u.valid_time;
      Object.defineProperty(u, 'valid_time', {
        get: () => {
          reads.set(u.id, (reads.get(u.id) ?? 0) + 1);
          return time;
        },
      });
    }
    const byId = new Map(units.map((u) => [u.id, u]));
    const run = () => fuse({
      lists: [{ name: 'text', weight: 1, items: units.map((u) => ({ id: u.id })) }],
      getUnit: (id) => byId.get(id),
      accept: () => true,
      options: { now: NOW, limit: 10 },
    });
    const first = run();
    expect(first.map((r) => r.unit.id)).toEqual(units.slice(0, 10).map((u) => u.id));
    // the last ranks' fused scores are a fraction of the tenth's: their records are never read
    expect(units.slice(400).filter((u) => reads.has(u.id))).toEqual([]);
    expect(reads.size).toBeLessThan(200);
    reads.clear();
    expect(summary(run())).toEqual(summary(first));
    expect(reads.size).toBe(0);
  });
});
