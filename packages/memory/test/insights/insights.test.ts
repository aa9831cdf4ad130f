import type { Edge, EventRecord, MemoryUnit } from '@strata/store';
import { buildGraph, jaccard, labelPropagation, planInsights, planReflection, reflectionSubject, type InsightInput } from '../../src/insights';
import { HashEmbedder } from '../consolidation/hash-embedder';
import { counter, event } from '../consolidation/fixtures';

const NOW = '2023-06-10T12:00:00.000Z';

function unit(id: string, content: string, keywords: string[], over: Partial<MemoryUnit> = {}): MemoryUnit {
  return {
    id, user_id: 'u1', stream_id: 's1', org_id: null, agent_id: null, level: 1, memory_type: 'factual', content, keywords,
    speaker: 'Caroline', valid_time: '2023-05-07T00:00:00.000Z', transaction_time: '2023-05-08T14:00:00.000Z',
    references: [`ev-${id}`], assets: [], importance: 0.5, subject: null, attribute: null, retired_at: null,
    retired_reason: null, superseded_by: null, ...over,
  };
}

function related(source: string, target: string, weight = 0.8): Edge {
  return { edge_id: `r-${source}-${target}`, user_id: 'u1', source_id: source, target_id: target, relation: 'RelatedTo', weight, created_at: NOW };
}

const pets = [
  unit('p1', 'Caroline: We adopted a puppy named Max.', ['caroline', 'puppy', 'max', 'adopted'], { importance: 0.6 }),
  unit('p2', 'Caroline: Max loves the beach.', ['caroline', 'max', 'beach'], { valid_time: '2023-05-20T00:00:00.000Z' }),
  unit('p3', 'Caroline: The puppy chewed my shoes.', ['caroline', 'puppy', 'shoe'], { references: ['ev-p3', 'ev-p3b'] }),
];
const work = [
  unit('w1', 'Caroline: I started a job at the library.', ['caroline', 'job', 'library'], { speaker: 'Caroline' }),
  unit('w2', 'Melanie: The library job pays well.', ['melanie', 'library', 'job', 'pay'], { speaker: 'Melanie' }),
  unit('w3', 'Caroline: My library shift starts at 9.', ['caroline', 'library', 'shift', '9'], { speaker: 'Caroline' }),
];
const loner = unit('x1', 'Caroline: The tax report is due.', ['caroline', 'tax report']);
const edges = [related('p1', 'p2'), related('p2', 'p3'), related('p1', 'p3', 0.6), related('w1', 'w2'), related('w2', 'w3'), related('w1', 'w3')];

function input(over: Partial<InsightInput> = {}): InsightInput {
  return {
    units: [...pets, ...work, loner], edges, existingInsights: [], now: NOW, newId: counter('i'), embedder: new HashEmbedder(),
    // Similarity would also join units; here the stored edges alone define the communities.
    options: { similarityThreshold: 0.99 }, ...over,
  };
}

describe('label propagation', () => {
  it('finds the two dense groups and leaves the loner alone, deterministically', () => {
    const g = buildGraph([...pets, ...work, loner], edges, new Map(), { similarityThreshold: 1, similarityK: 5 });
    expect(labelPropagation(g)).toEqual([['p1', 'p2', 'p3'], ['w1', 'w2', 'w3'], ['x1']]);
    expect(labelPropagation(g, { seed: 7, maxRounds: 50 })).toEqual(labelPropagation(g, { seed: 7, maxRounds: 50 }));
  });

  it('never joins units of different scopes', () => {
    const orgUnit = unit('o1', 'x', [], { org_id: 'acme' });
    const g = buildGraph([pets[0], orgUnit], [related('p1', 'o1')], new Map(), { similarityThreshold: 1, similarityK: 5 });
    expect(g.get('p1')?.size).toBe(0);
  });

  it('jaccard', () => {
    expect(jaccard(new Set(['a', 'b']), new Set(['b', 'c']))).toBeCloseTo(1 / 3);
  });
});

describe('planInsights', () => {
  it('turns each community into an insight: summary, DerivedFrom edges, references = union of members', async () => {
    const plan = await planInsights(input());
    expect(plan.update).toEqual([]);
    expect(plan.create.map((c) => c.unit.content)).toEqual([
      // p2 is the most central pet memory (two 0.8 links); the names are said once, not repeated as topics.
      'Recurring topic: max, puppy, beach, adopted (3 memories, Caroline, 2023-05-07 to 2023-05-20). Key points: Caroline: Max loves the beach; Caroline: We adopted a puppy named Max; Caroline: The puppy chewed my shoes.',
      'Recurring topic: library, job, pay, shift (3 memories, Caroline and Melanie, 2023-05-07). Key points: Caroline: I started a job at the library; Melanie: The library job pays well; Caroline: My library shift starts at 9.',
    ]);
    const [p] = plan.create;
    expect(p.unit).toMatchObject({
      id: 'i1', level: 2, org_id: null, stream_id: 's1', memory_type: 'factual', speaker: 'Caroline', subject: null, attribute: null,
      keywords: ['caroline', 'max', 'puppy', 'beach', 'adopted', 'shoe'], references: ['ev-p2', 'ev-p1', 'ev-p3', 'ev-p3b'],
      valid_time: '2023-05-20T00:00:00.000Z', transaction_time: NOW, importance: 0.613,
    });
    expect(p.vector).toHaveLength(512);
    expect(plan.edges.map((e) => [e.relation, e.source_id, e.target_id])).toEqual([
      ['DerivedFrom', 'i1', 'p1'], ['DerivedFrom', 'i1', 'p2'], ['DerivedFrom', 'i1', 'p3'],
      ['DerivedFrom', 'i5', 'w1'], ['DerivedFrom', 'i5', 'w2'], ['DerivedFrom', 'i5', 'w3'],
    ]);
  });

  it('updates the matching insight when its community grows, instead of creating another; leaves an unchanged one alone', async () => {
    const first = await planInsights(input());
    const insights = first.create.map((c) => c.unit);
    const p4 = unit('p4', 'Caroline: Max learned to sit.', ['caroline', 'max', 'sit'], { references: ['ev-p4'] });
    const second = await planInsights(input({
      units: [...pets, p4, ...work, loner], edges: [...edges, ...first.edges, related('p4', 'p1'), related('p4', 'p2')],
      existingInsights: insights, newId: counter('j'),
    }));
    expect(second.create).toEqual([]);
    expect(second.update).toHaveLength(1);
    expect(second.update[0]).toMatchObject({ unit_id: 'i1', added_members: ['p4'], removed_members: [], references: ['ev-p2', 'ev-p1', 'ev-p4', 'ev-p3', 'ev-p3b'] }); // most central first
    expect(second.update[0].content).toContain('(4 memories');
    expect(second.edges.map((e) => [e.relation, e.source_id, e.target_id])).toEqual([['DerivedFrom', 'i1', 'p4']]);
    expect(second.removed_edges).toEqual([]);
  });

  it('removes DerivedFrom edges of members that left (a retired member), keeping the insight when overlap ≥ 0.5', async () => {
    const first = await planInsights(input());
    const insights = first.create.map((c) => c.unit);
    const extra = [unit('p4', 'Caroline: Max learned to sit.', ['max']), unit('p5', 'Caroline: Max sleeps a lot.', ['max'])];
    const grown = await planInsights(input({
      units: [...pets, ...extra, ...work], existingInsights: insights, newId: counter('k'),
      edges: [...edges, ...first.edges, related('p4', 'p1'), related('p5', 'p2'), related('p4', 'p5')],
    }));
    expect(grown.update.map((u) => u.unit_id)).toEqual(['i1']);
    const retiredP3 = { ...pets[2], retired_at: NOW };
    const shrunk = await planInsights(input({
      units: [pets[0], pets[1], retiredP3, ...work], existingInsights: insights, newId: counter('m'), edges: [...edges, ...first.edges],
      options: { similarityThreshold: 0.99, minCommunitySize: 2 },
    }));
    expect(shrunk.update.map((u) => [u.unit_id, u.removed_members])).toEqual([['i1', ['p3']]]);
    const removedEdge = first.edges.find((e) => e.source_id === 'i1' && e.target_id === 'p3');
    expect(shrunk.removed_edges).toEqual([removedEdge?.edge_id]);
  });

  it('an insight drawn from org knowledge carries the org id', async () => {
    const org = pets.map((u) => ({ ...u, org_id: 'acme' }));
    const plan = await planInsights(input({ units: [...org, ...work] }));
    expect(plan.create.map((c) => c.unit.org_id)).toEqual(['acme', null]);
  });

  it('similarity alone can form a community', async () => {
    const units = [
      unit('a', 'Caroline paints sunsets at the lake.', ['sunset']), unit('b', 'Caroline paints sunsets at the lake often.', ['sunset']),
      unit('c', 'Caroline paints sunsets at the lake in summer.', ['sunset']), unit('d', 'Quarterly tax filing deadline.', ['tax']),
    ];
    const plan = await planInsights(input({ units, edges: [], options: { similarityThreshold: 0.6 } }));
    expect(plan.edges.map((e) => e.target_id)).toEqual(['a', 'b', 'c']);
  });
});

describe('planReflection', () => {
  const t = (min: number) => new Date(Date.parse('2023-05-08T13:56:00.000Z') + min * 60_000).toISOString();
  const evs: EventRecord[] = [
    event('Caroline: I went to a LGBTQ support group yesterday.', { event_id: 'r1', stream_id: 'st', valid_time: t(0), transaction_time: t(0) }),
    event('Melanie: I painted a lake sunrise last year.', { event_id: 'r2', stream_id: 'st', valid_time: t(5), transaction_time: t(5) }),
    event('Caroline: thanks!', { event_id: 'r3', stream_id: 'st', valid_time: t(9), transaction_time: t(9) }),
  ];
  const units = [
    unit('m1', 'Caroline: I went to a LGBTQ support group yesterday (2023-05-07).', ['caroline', '2023-05-07', 'lgbtq', 'support group'], { stream_id: 'st', importance: 0.55 }),
    unit('m2', 'Melanie: I painted a lake sunrise last year (2022).', ['melanie', '2022', 'painted', 'lake sunrise'], { stream_id: 'st', speaker: 'Melanie', importance: 0.5 }),
  ];

  it('waits until the stream is quiet', async () => {
    expect(await planReflection({ streamId: 'st', units, events: evs, now: t(20), newId: counter() })).toBeNull();
    expect(await planReflection({ streamId: 'st', units, events: [], now: t(200), newId: counter() })).toBeNull();
  });

  it('reflects who, what and when, derived from the stream\'s memories', async () => {
    const plan = await planReflection({ streamId: 'st', units, events: evs, now: t(60), newId: counter('f'), quietMinutes: 30 });
    expect(plan?.create?.unit).toMatchObject({
      id: 'f1', level: 2, stream_id: 'st', subject: reflectionSubject('st'), attribute: 'reflection', references: ['r1', 'r2', 'r3'],
      content: 'Conversation of Caroline and Melanie on 2023-05-08 (13:56–14:05 UTC), 3 messages. Topics: lgbtq, support group, painted, lake sunrise. Highlights: Caroline: I went to a LGBTQ support group yesterday (2023-05-07); Melanie: I painted a lake sunrise last year (2022).',
      keywords: ['caroline', 'melanie', 'lgbtq', 'support group', 'painted', 'lake sunrise'], valid_time: t(9),
    });
    expect(plan?.create?.vector).toBeNull();
    expect(plan?.edges.map((e) => [e.relation, e.source_id, e.target_id])).toEqual([['DerivedFrom', 'f1', 'm1'], ['DerivedFrom', 'f1', 'm2']]);
  });

  it('updates the existing reflection when the stream had more to say, and does nothing when it has not', async () => {
    const first = await planReflection({ streamId: 'st', units, events: evs, now: t(60), newId: counter('f'), embedder: new HashEmbedder() });
    const existing = first?.create?.unit as MemoryUnit;
    expect(first?.create?.vector).toHaveLength(512);
    expect(await planReflection({ streamId: 'st', units, events: evs, now: t(90), newId: counter('g'), existing })).toBeNull();
    const more = [...evs, event('Melanie: We are going camping next month.', { event_id: 'r4', stream_id: 'st', valid_time: t(100), transaction_time: t(100) })];
    const m3 = unit('m3', 'Melanie: We are going camping next month (2023-06).', ['melanie', 'camping'], { stream_id: 'st', speaker: 'Melanie' });
    const second = await planReflection({ streamId: 'st', units: [...units, m3], events: more, now: t(200), newId: counter('g'), existing, edges: first?.edges });
    expect(second?.create).toBeNull();
    expect(second?.update).toMatchObject({ unit_id: 'f1', references: ['r1', 'r2', 'r3', 'r4'] });
    expect(second?.update?.content).toMatch(/^Conversation of Caroline and Melanie on 2023-05-08 \(13:56–15:36 UTC\), 4 messages\./);
    expect(second?.edges.map((e) => [e.source_id, e.target_id])).toEqual([['f1', 'm3']]);
  });

  it('org knowledge: a stream whose events all belong to one org gives an org reflection', async () => {
    const orgEvents = evs.map((e) => ({ ...e, org_id: 'acme' }));
    const plan = await planReflection({ streamId: 'st', units, events: orgEvents, now: t(60), newId: counter() });
    expect(plan?.create?.unit.org_id).toBe('acme');
  });
});
