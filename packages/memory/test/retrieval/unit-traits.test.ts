/**
 * What ranking reads from a record's words is computed once per content (unit-traits.ts): a query
 * touches hundreds of candidates, and a record replaced by one of the same content (a reinforcement
 * changes a unit's statistics every few seconds under load) must not be tokenized, stemmed and matched
 * against the facet and change expressions again (issue 28: under a query storm the text work on records
 * was ~12% of the node's main thread). These tests count the reads of the records' `content`: a query
 * that parses a record again reads it. They assert no timing.
 */
import type { Edge, MemoryUnit } from '@strata/store';
import { retrieve, type RetrievalSources } from '../../src/retrieval/pipeline';
import { UserIndex, type IndexedRecord } from '../../src/retrieval/unit-set';
import { TEXT_FIELDS } from '../../src/retrieval/documents';
import { stem } from '../../src/text';
import { contentParses, WARMED_TRAITS, warmTraits } from '../../src/retrieval/unit-traits';
import { unit } from './helpers';

const NOW = Date.parse('2024-06-01T00:00:00.000Z');
const embedder = { dimensions: 4 };
const vec = (i: number) => Float32Array.from([1, i % 3, (i * 7) % 5, 0.5]);

/** Statements with every kind of trait ranking reads: names, times, numbers, changes and endings, facets, questions. */
const CONTENTS = [
  'Caroline: I moved to York last spring, the flat is near the river',
  'Melanie: I quit the cafe, now I work as a nurse at the hospital',
  'Caroline: Did you go to the park with the kids?',
  'Melanie painted a sunrise on 3 May, it took 4 hours',
  'Caroline has 3 kids and a dog called Bailey',
  'Melanie: my sister Anna lives in Leeds these days',
  'Caroline: switched my shifts to Tuesdays instead of Mondays',
  'We sold the car, I take the train to work now',
  'Melanie: I used to live in Bristol before the move',
  'Caroline goes to the support group every Friday at 7pm',
  'Melanie: my phone number is 07700 900958',
  'Caroline started a new job at the library in June',
];
const ATTRIBUTES = [null, 'residence', 'occupation', null, 'family', null, 'schedule'];

function memory(): { units: MemoryUnit[]; edges: Edge[] } {
  const units: MemoryUnit[] = [];
  for (let i = 0; i < 48; i++) {
    const content = `${CONTENTS[i % CONTENTS.length]}${i < CONTENTS.length ? '' : ` (${i})`}`;
    units.push(unit({
      id: `u${String(i).padStart(2, '0')}`, content, level: 1,
      speaker: content.startsWith('Caroline') ? 'Caroline' : content.startsWith('Melanie') ? 'Melanie' : null,
      valid_time: new Date(NOW - (60 - i) * 86_400_000).toISOString(),
      subject: i % 3 === 0 ? 'caroline' : null, attribute: ATTRIBUTES[i % ATTRIBUTES.length],
      references: [`e${Math.floor(i / 2)}`],
      retired_at: i % 11 === 5 ? '2024-05-01T00:00:00.000Z' : null, retired_reason: i % 11 === 5 ? 'superseded' : null,
    }));
  }
  units.push(unit({ id: 'i0', level: 2, content: 'Recurring topic: Caroline and her kids (12 memories) Key points: park, dog, York' }));
  const edges = units.filter((u) => u.level === 1 && Number(u.id.slice(1)) % 4 === 0).map((u, i) =>
    ({ edge_id: `d${i}`, user_id: 'alice', source_id: 'i0', target_id: u.id, relation: 'DerivedFrom', weight: 1, created_at: '2024-01-01T00:00:00.000Z' }) as unknown as Edge);
  edges.push({ edge_id: 'r0', user_id: 'alice', source_id: 'u01', target_id: 'u06', relation: 'RelatedTo', weight: 0.5, created_at: '2024-01-01T00:00:00.000Z' } as unknown as Edge);
  return { units, edges };
}

const QUERIES = [
  'Where does Caroline live now?', 'When did Melanie paint a sunrise?', 'Where did Melanie live before?', 'Who is Melanie\'s sister?',
  'How many kids does Caroline have?', 'What is Melanie\'s job now?', 'Which days does Caroline work?', 'What is Melanie\'s phone number?',
  'Did Caroline go to the park?', 'What did Caroline do in June?',
];

function sourcesOf(index: UserIndex): RetrievalSources<IndexedRecord> {
  return {
    vectorIndexes: [index.vector], textIndexes: [index.text], getUnit: (id) => index.units.get(id), neighbors: index.neighbors,
    fieldTextIndexes: TEXT_FIELDS.map((name) => ({ name, indexes: [index.fields[name]] })),
  };
}

const ask = (index: UserIndex) => QUERIES.map((query, i) => retrieve(sourcesOf(index), { user_id: 'alice', query, queryVector: vec(i), limit: 8, graph_depth: 1 }, {}, NOW).results
  .map((r) => ({ id: r.unit.id, score: r.score, signals: r.signals })));

/** Counts the reads of `content` on every record the index holds now. */
function countContentReads(index: UserIndex): Map<string, number> {
  const reads = new Map<string, number>();
  for (const record of index.units.values()) {
    const content = record.content;
    Object.defineProperty(record, 'content', {
      get: () => {
        reads.set(record.id, (reads.get(record.id) ?? 0) + 1);
        return content;
      },
    });
  }
  return reads;
}

function indexOf(units: MemoryUnit[], edges: Edge[]): UserIndex {
  const index = new UserIndex({ embedder });
  units.forEach((u, i) => index.put(u, vec(i)));
  index.loadEdges(edges);
  return index;
}

describe('unit traits: a record\'s words are read once per content', () => {
  it('a query reads no record\'s words that an earlier query read', () => {
    const { units, edges } = memory();
    const index = indexOf(units, edges);
    const first = ask(index);
    const reads = countContentReads(index);
    expect(ask(index)).toEqual(first);
    expect([...reads.keys()]).toEqual([]);
  });

  it('a record replaced with the same words (a reinforcement) keeps them read, and ranks as a record never read before', () => {
    const { units, edges } = memory();
    const index = indexOf(units, edges);
    ask(index);
    // reinforced: new statistics, same content; one record also gets other words
    const replaced = units.map((u, i) => ({ ...u, importance: 0.5 + (i % 5) / 10, ...(u.id === 'u07' ? { content: 'We sold the car, I cycle to work now' } : {}) }));
    for (const u of replaced) if (u.id !== 'u07') expect(index.replaceRecord(u)).toBe(true);
    index.put(replaced.find((u) => u.id === 'u07')!, vec(7));
    const reads = countContentReads(index);
    const after = ask(index);
    // only the record whose words changed is read again
    expect([...reads.keys()].filter((id) => id !== 'u07')).toEqual([]);
    // the same answers, scores and signals as an index of the same records that never ranked before
    const fresh = indexOf(replaced, edges);
    expect(after).toEqual(ask(fresh));
  });

  it('a set loaded again keeps what it read from records of the same content', async () => {
    const { units, edges } = memory();
    const index = indexOf(units, edges);
    const first = ask(index);
    await index.load(units.map((u, i) => ({ unit: { ...u }, vector: vec(i) })));
    index.loadEdges(edges);
    const reads = countContentReads(index);
    expect(ask(index)).toEqual(first);
    expect([...reads.keys()]).toEqual([]);
  });
});

describe('stem', () => {
  it('gives a word\'s stem however often it is asked, and for words too long to be kept', () => {
    const words = ['running', 'moved', 'addresses', 'stories', 'Anna\'s', 'internationalisations', 'caf\u00e9s', 'it\u2019s'];
    const once = words.map(stem);
    expect(once).toEqual(['run', 'mov', 'address', 'story', 'anna', 'internationalisation', 'caf\u00e9', 'it']);
    for (let i = 0; i < 3; i++) expect(words.map(stem)).toEqual(once);
  });
});

describe('warmTraits: what queries read of every candidate, computed before any query', () => {
  /** Computations of the warmed traits since `before` (contentParses), by trait. */
  const warmedSince = (before: ReadonlyMap<string, number>) => {
    const now = contentParses();
    return Object.fromEntries(WARMED_TRAITS.map((t) => [t, (now.get(t) ?? 0) - (before.get(t) ?? 0)]));
  };
  const none = Object.fromEntries(WARMED_TRAITS.map((t) => [t, 0]));

  it('queries after every record was warmed compute none of those traits, and answer as an index never warmed', () => {
    const { units, edges } = memory();
    const coldIndex = indexOf(units, edges);
    const p0 = contentParses();
    const cold = ask(coldIndex);
    // (without warming, the queries compute each of them)
    expect(Object.values(warmedSince(p0)).every((n) => n > 0)).toBe(true);
    const index = indexOf(units, edges);
    for (const record of index.units.values()) warmTraits(record);
    const reads = countContentReads(index);
    const p1 = contentParses();
    expect(ask(index)).toEqual(cold);
    expect([...reads.keys()]).toEqual([]);
    expect(warmedSince(p1)).toEqual(none);
  });
});
