import type { MemoryUnit } from '@strata/store';
import { InlineHnswBuilder, TextIndex, VectorIndex } from '@strata/store/indexes';
import { buildAdjacency, neighborsOf } from '../../src/retrieval/graph';
import { retrieve, retrieveAsync } from '../../src/retrieval/pipeline';
import { namesForRelations, relationsAsked } from '../../src/retrieval/bridge';
import { unit } from './helpers';

/** A toy embedder: one dimension per known word, so similar texts have similar vectors. */
const VOCAB = ['tea', 'coffee', 'berlin', 'paris', 'dog', 'cat', 'deploy', 'server', 'hiking', 'mountain'];
const embed = (text: string) => {
  const v = new Float32Array(VOCAB.length + 1);
  v[VOCAB.length] = 0.05; // never all-zero
  for (const w of text.toLowerCase().split(/\W+/)) {
    const i = VOCAB.indexOf(w.replace(/s$/, ''));
    if (i >= 0) v[i] += 1;
  }
  return v;
};

function world(units: MemoryUnit[]) {
  const byId = new Map(units.map((u) => [u.id, u]));
  const vector = new VectorIndex({ dimensions: VOCAB.length + 1, builder: new InlineHnswBuilder() });
  const text = new TextIndex();
  for (const u of units) {
    vector.add(u.id, embed(u.content));
    text.add(u.id, u.content);
  }
  return { vectorIndexes: [vector], textIndexes: [text], getUnit: (id: string) => byId.get(id) };
}

const NOW = Date.parse('2024-06-01T00:00:00.000Z');

describe('retrieve', () => {
  const units = [
    unit({ id: 'tea', content: 'Alice drinks green tea every morning' }),
    unit({ id: 'coffee', content: 'Alice stopped drinking coffee' }),
    unit({ id: 'dog', content: 'Alice has a dog named Rex', stream_id: 's2' }),
    unit({ id: 'bob-tea', user_id: 'bob', content: 'Bob loves tea' }),
    unit({ id: 'org-tea', user_id: 'bob', org_id: 'acme', content: 'The office tea kitchen is on floor 2' }),
    unit({ id: 'old-tea', content: 'Alice drank black tea', retired_at: '2024-03-01T00:00:00.000Z', transaction_time: '2024-01-01T00:00:00.000Z' }),
  ];

  it('finds by meaning and by words, never another user\'s private memory', () => {
    const { results } = retrieve(world(units), { query: 'tea', queryVector: embed('tea'), user_id: 'alice', stream_id: 's1' }, {}, NOW);
    const ids = results.map((r) => r.unit.id);
    expect(ids[0]).toBe('tea');
    expect(ids).not.toContain('bob-tea');
    expect(ids).not.toContain('org-tea');
    expect(ids).not.toContain('old-tea');
    for (const r of results) expect(r.score).toBeLessThanOrEqual(1);
  });

  it('adds org knowledge when org_id is given, and sees retired units through as_of', () => {
    const w = world(units);
    const withOrg = retrieve(w, { query: 'tea', queryVector: embed('tea'), user_id: 'alice', org_id: 'acme' }, {}, NOW);
    expect(withOrg.results.map((r) => r.unit.id)).toContain('org-tea');
    const past = retrieve(w, { query: 'tea', queryVector: embed('tea'), user_id: 'alice', as_of: '2024-02-01T00:00:00.000Z' }, {}, NOW);
    expect(past.results.map((r) => r.unit.id)).toContain('old-tea');
  });

  it('honours stream scope, limit and min_score, and works without a query vector', () => {
    const w = world(units);
    const s2 = retrieve(w, { query: 'Alice', user_id: 'alice', stream_id: 's2', scope: 'stream' }, {}, NOW);
    expect(s2.results.map((r) => r.unit.id)).toEqual(['dog']);
    const one = retrieve(w, { query: 'Alice tea coffee', user_id: 'alice', limit: 1 }, {}, NOW);
    expect(one.results).toHaveLength(1);
    const none = retrieve(w, { query: 'tea', queryVector: embed('tea'), user_id: 'alice', min_score: 0.99 }, {}, NOW);
    expect(none.results).toEqual([]);
    expect(() => retrieve(w, { query: 'tea', user_id: 'alice', limit: 0 }, {}, NOW)).toThrow(RangeError);
    expect(retrieve(w, { query: 'tea', user_id: 'alice', limit: 1000 }, { maxLimit: 2 }, NOW).results.length).toBeLessThanOrEqual(2);
  });

  it('restricts to a candidate set from a derived index', () => {
    const w = world(units);
    const r = retrieve({ ...w, restrictTo: new Set(['coffee', 'dog']) }, { query: 'Alice tea coffee dog', queryVector: embed('tea coffee dog'), user_id: 'alice' }, {}, NOW);
    expect(r.results.map((x) => x.unit.id).sort()).toEqual(['coffee', 'dog']);
  });

  it('arbitrates versions when asked, filling the limit after dropping', () => {
    const versions = [
      unit({ id: 'berlin', content: 'Alice lives in Berlin', subject: 'alice', attribute: 'city', valid_time: '2020-01-01T00:00:00.000Z' }),
      unit({ id: 'paris', content: 'Alice lives in Paris', subject: 'alice', attribute: 'city', valid_time: '2023-01-01T00:00:00.000Z' }),
      unit({ id: 'hike', content: 'Alice went hiking in the mountains' }),
    ];
    const w = { ...world(versions), neighbors: neighborsOf(buildAdjacency([])) };
    const q = { query: 'where does Alice live Berlin Paris', queryVector: embed('berlin paris'), user_id: 'alice', limit: 2 };
    const plain = retrieve(w, q, {}, NOW);
    expect(plain.results.map((r) => r.unit.id)).toEqual(expect.arrayContaining(['berlin', 'paris']));
    const arb = retrieve(w, { ...q, enable_arbitration: true }, {}, NOW);
    expect(arb.results.map((r) => r.unit.id)).toEqual(['paris', 'hike']);
    expect(arb.arbitration).toEqual({ mode: 'current', dropped: ['berlin'] });
  });

  it('brings in graph neighbours and image matches', () => {
    const w = world(units);
    const adj = neighborsOf(buildAdjacency([{ source_id: 'tea', target_id: 'dog', relation: 'RelatedTo', weight: 1 }]));
    const g = retrieve({ ...w, neighbors: adj }, { query: 'green tea', user_id: 'alice', graph_depth: 1 }, {}, NOW);
    expect(g.results.map((r) => r.unit.id)).toContain('dog');
    const g0 = retrieve({ ...w, neighbors: adj }, { query: 'green tea', user_id: 'alice', graph_depth: 0 }, {}, NOW);
    expect(g0.results.map((r) => r.unit.id)).not.toContain('dog');
    const img = retrieve({ ...w, imageMatches: [{ id: 'dog' }] }, { query: 'photo', user_id: 'alice' }, {}, NOW);
    expect(img.results.map((r) => r.unit.id)).toEqual(['dog']);
  });
});

describe('retrieveAsync', () => {
  it('answers what retrieve answers, with a vector index large enough to be scanned in slices', async () => {
    const words = ['tea', 'coffee', 'berlin', 'paris', 'dog', 'cat', 'deploy', 'server', 'hiking', 'mountain'];
    const units = Array.from({ length: 9000 }, (_, i) =>
      unit({ id: `m${String(i).padStart(5, '0')}`, content: `${words[i % 10]} and ${words[(i * 7) % 10]} ${words[(i * 3) % 10]}`, stream_id: i % 4 === 0 ? 's2' : 's1', retired_at: i % 11 === 0 ? '2024-03-01T00:00:00.000Z' : null }),
    );
    const w = world(units);
    expect(w.vectorIndexes[0].size).toBeGreaterThan(8192); // over one slice, under the HNSW threshold
    for (const request of [
      { query: 'tea in berlin', queryVector: embed('tea in berlin'), user_id: 'alice', stream_id: 's1' },
      { query: 'dog server', queryVector: embed('dog server'), user_id: 'alice', stream_id: 's2', scope: 'stream' as const, limit: 20 },
      { query: 'hiking', queryVector: embed('hiking'), user_id: 'alice', as_of: '2024-02-01T00:00:00.000Z', enable_arbitration: true },
    ]) {
      const sources = request.scope === 'stream' ? { ...w, restrictTo: new Set(units.filter((u) => u.stream_id === 's2').map((u) => u.id)) } : w;
      expect(await retrieveAsync(sources, request, {}, NOW)).toEqual(retrieve(sources, request, {}, NOW));
    }
  });
});

describe('retrieve with field lists', () => {
  const units = [
    unit({ id: 'answer', content: 'The shower made me feel tiny and in awe' }),
    unit({ id: 'other', content: 'The meteor shower is a yearly event' }),
  ];
  const byId = new Map(units.map((u) => [u.id, u]));
  const whole = new TextIndex();
  whole.add('answer', 'The shower made me feel tiny and in awe. Before: how was it?');
  whole.add('other', 'The meteor shower is a yearly event');
  const context = new TextIndex();
  context.add('answer', 'how was the meteor shower?');
  const ask = (fields: boolean, weights?: Record<string, number>) =>
    retrieve(
      { vectorIndexes: [], textIndexes: [whole], getUnit: (id) => byId.get(id), fieldTextIndexes: fields ? [{ name: 'context', indexes: [context] }] : undefined },
      { query: 'meteor shower', user_id: 'alice', graph_depth: 0 },
      { weights },
      NOW,
    ).results;

  it('a field match is a list of its own, weighted like the others', () => {
    expect(ask(false).map((r) => r.unit.id)).toEqual(['other', 'answer']);
    const withContext = ask(true);
    expect(withContext[0].signals.ranks).toEqual({ text: 2, context: 1 });
    expect(withContext.map((r) => r.unit.id)).toEqual(['answer', 'other']);
    // weight 0: the field counts for nothing
    expect(ask(true, { context: 0 }).map((r) => r.unit.id)).toEqual(['other', 'answer']);
  });
});

describe('retrieve through a relation', () => {
  it('reads who the relation is among the best candidates and ranks what is said of that person above the statement that named them', () => {
    const units = [
      unit({ id: 'wife', content: 'Also my wife Meera wants to join the lessons, she is coming with me.' }),
      unit({ id: 'flat', content: 'Meera found us a flat in Coyoacán, near the museum.' }),
      unit({ id: 'mine', content: 'I found a flat for the dog in the old town once.' }),
    ];
    const w = world(units);
    const q = "Which neighbourhood did Siddharth's wife find a flat in?";
    const out = retrieve(w, { user_id: 'alice', query: q, queryVector: embed(q), limit: 3 }, {}, NOW).results;
    expect(out[0].unit.id).toBe('flat');
    expect(out[0].signals.ranks.bridge).toBe(1);
    expect(out.find((r) => r.unit.id === 'wife')?.signals.ranks.bridge).toBeUndefined();
    // no relation in the question: no second search
    const plain = retrieve(w, { user_id: 'alice', query: 'Where did Meera find a flat?', queryVector: embed('flat'), limit: 3 }, {}, NOW).results;
    expect(plain.every((r) => r.signals.ranks.bridge === undefined)).toBe(true);
    // asking who the relation is: the statement naming her answers, nothing to search again
    for (const who of ["Who is Siddharth's wife?", "What is the name of Siddharth's wife?"]) {
      const named = retrieve(w, { user_id: 'alice', query: who, queryVector: embed(who), limit: 3 }, {}, NOW).results;
      expect(named.every((r) => r.signals.ranks.bridge === undefined)).toBe(true);
    }
  });

  it('reads a relation written before or after the name', () => {
    expect(namesForRelations('Also, my son Adam is coming with me now', ['son'])).toEqual(['Adam']);
    expect(namesForRelations('Per is my husband, he only drives at weekends', ['husband'])).toEqual(['Per']);
    expect(namesForRelations('Dani, my coworker, is a nurse', ['coworker'])).toEqual(['Dani']);
    expect(namesForRelations('my son is 9 and my daughter Leila is 6', ['son'])).toEqual([]);
    expect(relationsAsked("Which seat does Fatima's son have?")).toEqual(['son']);
  });
});

describe('the kind of fact asked', () => {
  it('takes a job and where it is held as one fact: "do for work" is answered by "working for a solar installer"', () => {
    const units = [
      unit({ id: 'moved', content: 'Tomek: marek says hi. he moved to Manchester, working for a solar installer now', speaker: 'Tomek', attribute: 'residence' }),
      unit({ id: 'home', content: 'Tomek: marek lives in a flat in Gdansk', speaker: 'Tomek', attribute: 'residence' }),
    ];
    const { results } = retrieve(world(units), { query: 'What does Marek do for work?', user_id: 'alice', graph_depth: 0 }, {}, NOW);
    const moved = results.find((r) => r.unit.id === 'moved');
    expect(moved?.signals.boosts).not.toContain('other_fact');
    expect(moved?.signals.ranks.facet).toBe(1);
    expect(results.find((r) => r.unit.id === 'home')?.signals.ranks.facet).toBeUndefined();
  });
});
