import type { MemoryUnit } from '@strata/store';
import { boost, dedupeKey, fuse, recencyOf, weightedRrf, type FusionOptions } from '../../src/retrieval/fusion';
import { buildAdjacency, expandGraph, neighborsOf } from '../../src/retrieval/graph';
import type { GraphNeighbor } from '../../src/retrieval/types';
import type { RankedList } from '../../src/retrieval/types';
import { unit } from './helpers';
import { givesOnlyNewValue, queryIntent } from '../../src/retrieval/intent';
import { facetsOf } from '../../src/text';

const NOW = Date.parse('2024-01-01T00:00:00.000Z');

function setup(units: MemoryUnit[]) {
  const byId = new Map(units.map((u) => [u.id, u]));
  return { getUnit: (id: string) => byId.get(id), accept: (u: MemoryUnit) => u.retired_at === null };
}

const list = (name: string, ids: string[], weight = 1): RankedList => ({ name, weight, items: ids.map((id) => ({ id })) });

describe('weightedRrf', () => {
  it('normalizes by the theoretical maximum, not by the best hit', () => {
    const { fused, max } = weightedRrf([list('vector', ['a', 'b']), list('text', ['b'])], 60);
    expect(max).toBeCloseTo(2 / 61);
    expect(fused.get('b')!.raw / max).toBeCloseTo((1 / 62 + 1 / 61) / (2 / 61));
    expect(fused.get('a')!.raw / max).toBeCloseTo(0.5);
    expect(fused.get('b')!.ranks).toEqual({ vector: 2, text: 1 });
  });
  it('counts empty lists in the maximum and ignores duplicate ids within a list', () => {
    const { fused, max } = weightedRrf([list('vector', ['a', 'a', 'b']), list('text', [], 3)], 0);
    expect(max).toBeCloseTo(4);
    expect(fused.get('b')!.ranks.vector).toBe(2);
  });
});

describe('helpers', () => {
  it('boost stays in [0,1] and keeps order', () => {
    for (const s of [0, 0.1, 0.5, 0.9, 1]) {
      expect(boost(s, 0.3)).toBeGreaterThanOrEqual(s);
      expect(boost(s, 0.3)).toBeLessThanOrEqual(1);
    }
    expect(boost(0.4, 0.3)).toBeLessThan(boost(0.5, 0.3));
    expect(boost(0, 1)).toBe(0);
  });
  it('recency halves per half-life and treats the future as now', () => {
    const u = unit({ valid_time: '2023-12-02T00:00:00.000Z' });
    expect(recencyOf(u, NOW, 30)).toBeCloseTo(0.5, 5);
    expect(recencyOf(unit({ valid_time: '2025-01-01T00:00:00.000Z' }), NOW, 30)).toBe(1);
  });
  it('dedupeKey ignores case, punctuation and spacing', () => {
    expect(dedupeKey('Likes  TEA!')).toBe(dedupeKey('likes tea'));
    expect(dedupeKey('likes tea')).not.toBe(dedupeKey('likes coffee'));
  });
});

describe('fuse', () => {
  const base: FusionOptions = { now: NOW, graphDepth: 0, recencyWeight: 0, importanceWeight: 0 };

  it('ranks items found by both retrievers first, scores in [0,1] and non-increasing', () => {
    const units = ['a', 'b', 'c', 'd'].map((id) => unit({ id, content: `fact ${id}` }));
    const out = fuse({ ...setup(units), lists: [list('vector', ['a', 'b', 'c']), list('text', ['b', 'd'])], options: base });
    expect(out.map((r) => r.unit.id)).toEqual(['b', 'a', 'd', 'c']); // d: text rank 2 beats c: vector rank 3
    for (let i = 0; i < out.length; i++) {
      expect(out[i].score).toBeGreaterThanOrEqual(0);
      expect(out[i].score).toBeLessThanOrEqual(1);
      if (i > 0) expect(out[i].score).toBeLessThanOrEqual(out[i - 1].score);
    }
  });

  it('for a question about now, a statement that a value ended ranks below an earlier version of the fact', () => {
    const units = [
      unit({ id: 'quit', content: 'Omar: I quit the cafe last week.' }),
      unit({ id: 'old', content: 'Omar: I work at the cafe.', subject: 'omar', attribute: 'employer', valid_time: '2023-01-01T00:00:00.000Z' }),
      unit({ id: 'new', content: 'Omar: I work at the fire station now.', subject: 'omar', attribute: 'employer', valid_time: '2023-09-01T00:00:00.000Z' }),
    ];
    const lists = [list('vector', ['quit', 'old', 'new']), list('text', ['quit', 'old', 'new'])];
    const out = fuse({ ...setup(units), lists, options: { ...base, answerFocus: queryIntent('What does Omar do for work now?') } });
    expect(out.map((r) => [r.unit.id, r.signals.boosts])).toEqual([
      ['new', []], ['old', ['earlier_version']], ['quit', ['context_only', 'ended']],
    ]);
    // an ending that gives the new value too answers "now"
    const both = [...units, unit({ id: 'both', content: 'Omar: I gave up the cafe, I work at the fire station now.' })];
    const withBoth = fuse({ ...setup(both), lists: [list('vector', ['both', ...lists[0].items.map((i) => i.id)]), list('text', ['both'])], options: { ...base, answerFocus: queryIntent('What does Omar do for work now?') } });
    expect(withBoth[0].unit.id).toBe('both');
    expect(withBoth[0].signals.boosts).toEqual([]);
    // a question about when asks about the event, and the ending may be it
    const when = fuse({ ...setup(units), lists, options: { ...base, answerFocus: queryIntent('When is Omar quitting the cafe?') } });
    expect(when.find((r) => r.unit.id === 'quit')?.signals.boosts).not.toContain('ended');
    // about before, the ending is no longer scaled
    const before = fuse({ ...setup(units), lists, options: { ...base, answerFocus: queryIntent('What did Omar do for work before?') } });
    expect(before.find((r) => r.unit.id === 'quit')?.signals.boosts).not.toContain('ended');
  });

  it('a later statement that repeats an earlier one is no newer version of it; one with a new number is', () => {
    const said = unit({ id: 'said', content: "Also I'm vegetarian, please request the meal.", valid_time: '2023-09-01T08:03:00.000Z' });
    const confirmed = unit({ id: 'confirmed', content: 'assistant: Done, a vegetarian meal is requested.', valid_time: '2023-09-01T08:03:20.000Z' });
    const intent = queryIntent('What meal does Rui need on the flight?');
    const out = fuse({ ...setup([said, confirmed]), lists: [list('vector', ['said', 'confirmed']), list('text', ['said', 'confirmed'])], options: { ...base, answerFocus: intent } });
    expect(out.map((r) => [r.unit.id, r.signals.boosts])).toEqual([['said', []], ['confirmed', []]]);
    const dose = unit({ id: 'dose', content: "Ama: Mum's GP put her on amlodipine 5mg for the blood pressure", valid_time: '2023-01-01T00:00:00.000Z' });
    const doubled = unit({ id: 'doubled', content: "Ama: Mum's GP doubled the amlodipine to 10mg for the blood pressure", valid_time: '2023-03-01T00:00:00.000Z' });
    const now = fuse({ ...setup([dose, doubled]), lists: [list('vector', ['dose', 'doubled']), list('text', ['dose', 'doubled'])], options: { ...base, answerFocus: queryIntent('How much amlodipine does Mum take now?') } });
    expect(now.map((r) => [r.unit.id, r.signals.boosts])).toEqual([['doubled', []], ['dose', ['earlier_version']]]);
  });

  it('two statements that share only a word of order in time ("last", "next") are no versions of one thing', () => {
    const leaving = unit({ id: 'leaving', content: "Priya: also Helen's leaving, last day is March 7.", valid_time: '2025-02-01T00:00:00.000Z' });
    const live = unit({ id: 'live', content: 'Dmitri: Atlas is live!! search cut over last night with zero errors', valid_time: '2025-05-02T00:00:00.000Z' });
    const lists = [list('vector', ['leaving', 'live']), list('text', ['leaving', 'live'])];
    const out = fuse({ ...setup([leaving, live]), lists, options: { ...base, answerFocus: queryIntent("When is Helen's last day?") } });
    expect(out.map((r) => [r.unit.id, r.signals.boosts])).toEqual([['leaving', []], ['live', []]]);
    // a word of the thing itself still makes them versions ("deadline")
    const first = unit({ id: 'first', content: 'Priya: the last deadline is March 31', valid_time: '2025-02-01T00:00:00.000Z' });
    const moved = unit({ id: 'moved', content: 'Dmitri: deadline moved, last call is April 30', valid_time: '2025-03-01T00:00:00.000Z' });
    const again = fuse({ ...setup([first, moved]), lists: [list('vector', ['first', 'moved']), list('text', ['first', 'moved'])], options: { ...base, answerFocus: queryIntent('What is the last deadline now?') } });
    expect(again.map((r) => [r.unit.id, r.signals.boosts])).toEqual([['moved', []], ['first', ['earlier_version']]]);
  });

  it('scales a statement that holds none of the question\'s words (names aside) as matched by the turns around it alone', () => {
    const congrats = unit({ id: 'congrats', content: 'Jamal: Congratulations both!' });
    const meera = unit({ id: 'meera', content: 'Ravi: Meera is doing great, Anaya sleeps a lot.' });
    const lists = [list('text', ['congrats', 'meera']), list('vector', ['congrats', 'meera'])];
    const out = fuse({ ...setup([congrats, meera]), lists, options: { ...base, answerFocus: queryIntent("How is Anaya's mum doing?") } });
    expect(out.map((r) => [r.unit.id, r.signals.boosts])).toEqual([['meera', []], ['congrats', ['context_only']]]);
    // a name alone is no word of the question's topic: every statement of a person's chat shares it
    const named = unit({ id: 'named', content: 'Ravi: Anaya!!' });
    const again = fuse({ ...setup([named, meera]), lists: [list('text', ['named', 'meera'])], options: { ...base, answerFocus: queryIntent("How is Anaya's mum doing?") } });
    expect(again.find((r) => r.unit.id === 'named')?.signals.boosts).toEqual(['context_only']);
    // without a question's intent nothing is scaled
    const plain = fuse({ ...setup([congrats, meera]), lists, options: base });
    expect(plain.map((r) => r.signals.boosts)).toEqual([[], []]);
  });

  it('for a question about now, a later statement of the same person on the asked single-valued kind of fact is the newer version, though it shares no word of the question', () => {
    const old = unit({ id: 'old', content: 'I can train Monday, Wednesday and Saturday mornings.', speaker: 'user', valid_time: '2025-01-05T00:00:00.000Z' });
    const moved = unit({ id: 'moved', content: 'I moved my runs to Tuesday, Thursday and Sunday because of my new job schedule.', speaker: 'user', valid_time: '2025-06-01T00:00:00.000Z' });
    const q = 'Which days does Hana train now?';
    const options = { ...base, answerFocus: queryIntent(q), facetFocus: { facets: facetsOf(q), factor: 0.8 } };
    const out = fuse({ ...setup([old, moved]), lists: [list('vector', ['old', 'moved']), list('text', ['moved', 'old'])], options });
    expect(out.map((r) => [r.unit.id, r.signals.boosts])).toEqual([['moved', []], ['old', ['earlier_version']]]);
    // another person's statement of the kind is no version of this one
    const band = unit({ id: 'band', content: 'I moved my runs to Tuesday, Thursday and Sunday because of my new job schedule.', speaker: 'Bea', valid_time: '2025-06-01T00:00:00.000Z' });
    const other = fuse({ ...setup([old, band]), lists: [list('vector', ['old', 'band']), list('text', ['band', 'old'])], options });
    // (and, holding none of the question's words, it is scaled as matched by the turns around it alone)
    expect(other.map((r) => [r.unit.id, r.signals.boosts])).toEqual([['old', []], ['band', ['context_only']]]);
  });

  it('scales a fact stored under another kind than the asked one, unless its own words state the asked kind', () => {
    const home = unit({ id: 'home', content: 'I live in Leeds.', subject: 'user', attribute: 'residence' });
    const job = unit({ id: 'job', content: 'I work at the library.', subject: 'user', attribute: 'occupation' });
    const gym = unit({ id: 'gym', content: 'Gym on Mondays.', subject: 'user', attribute: 'schedule' });
    const days = unit({ id: 'days', content: 'I moved my runs to Tuesday and Sunday because of my new job.', subject: 'user', attribute: 'occupation' });
    const q = 'Which days does Hana train?';
    const out = fuse({ ...setup([home, job, days, gym]), lists: [list('vector', ['job', 'days', 'home', 'gym'])], options: { ...base, facetFocus: { facets: facetsOf(q), factor: 0.8 } } });
    const boosts = new Map(out.map((r) => [r.unit.id, r.signals.boosts]));
    expect(boosts.get('days')).toEqual([]);
    expect(boosts.get('job')).toEqual(['other_fact']);
  });

  it('for a question about now, an insight summarizing a memory replaced since is an earlier state', () => {
    const old = unit({ id: 'old', content: 'I live in Leeds.', retired_at: '2023-06-01T00:00:00.000Z', retired_reason: 'superseded', superseded_by: 'new' });
    const fresh = unit({ id: 'new', content: 'I moved to York.' });
    const insight = unit({ id: 'ins', level: 2, content: 'Recurring topic: home. Key points: I live in Leeds.' });
    const other = unit({ id: 'ins2', level: 2, content: 'Recurring topic: music. Key points: I play bass.' });
    const neighbors = neighborsOf(buildAdjacency([
      { source_id: 'ins', target_id: 'old', relation: 'DerivedFrom', weight: 1 },
      { source_id: 'ins2', target_id: 'new', relation: 'DerivedFrom', weight: 1 },
    ]));
    const byId = new Map([old, fresh, insight, other].map((u) => [u.id, u]));
    const input = { getUnit: (id: string) => byId.get(id), accept: (u: MemoryUnit) => u.retired_at === null, neighbors, lists: [list('vector', ['ins', 'ins2', 'new'])] };
    const now = fuse({ ...input, options: { ...base, answerFocus: queryIntent('Where do I live now?') } });
    expect(now.find((r) => r.unit.id === 'ins')?.signals.boosts).toEqual(['outdated_insight']);
    expect(now.find((r) => r.unit.id === 'ins2')?.signals.boosts).toEqual([]);
    const before = fuse({ ...input, options: { ...base, answerFocus: queryIntent('Where did I live before?') } });
    expect(before.find((r) => r.unit.id === 'ins')?.signals.boosts).toEqual([]);
  });

  it('for a question about before, a statement giving only a new value is scaled; a beginning or one naming the old value is not', () => {
    const fender = unit({ id: 'fender', content: 'Sina: my Fender Jazz weighs a ton btw', valid_time: '2025-01-19T00:00:00.000Z' });
    const sire = unit({ id: 'sire', content: 'Sina: playing a Sire Marcus Miller bass now, way lighter', valid_time: '2025-03-02T00:00:00.000Z' });
    const from = unit({ id: 'from', content: 'Sina: switched from the Fender to a Sire', valid_time: '2025-03-03T00:00:00.000Z' });
    const started = unit({ id: 'started', content: 'She started me on metformin 500 mg once a day.', valid_time: '2024-10-14T00:00:00.000Z' });
    const lists = [list('vector', ['sire', 'from', 'started', 'fender']), list('text', ['sire', 'from', 'started', 'fender'])];
    const out = fuse({ ...setup([fender, sire, from, started]), lists, options: { ...base, answerFocus: queryIntent('What bass did Sina play before?') } });
    const boosts = new Map(out.map((r) => [r.unit.id, r.signals.boosts]));
    expect(boosts.get('sire')).toEqual(['current_version']);
    expect(boosts.get('from')).not.toContain('current_version');
    expect(boosts.get('started')).not.toContain('current_version');
    expect(givesOnlyNewValue('Jayden: also footy moved to 10am saturdays now not 9 thank god', 'update')).toBe(false);
    // "from now on", "from tomorrow" say when the new value holds, not where it came from
    expect(givesOnlyNewValue("Kofi: it's the bus and the bike for me from now on", 'update')).toBe(true);
    expect(givesOnlyNewValue("assistant: You're upgraded to Fibre 500 at £39 a month from tomorrow", 'update')).toBe(true);
    expect(givesOnlyNewValue('assistant: Thank you, Colette, address updated to 9 Mill Race Court.', 'update')).toBe(true);
    expect(givesOnlyNewValue('we moved the class from monday to friday now', 'update')).toBe(false);
    // a question about how it changed wants every version
    const changed = fuse({ ...setup([fender, sire]), lists, options: { ...base, answerFocus: queryIntent('How has Sina\'s bass changed?') } });
    expect(changed.find((r) => r.unit.id === 'sire')?.signals.boosts).toEqual([]);
    // of two new values, the earlier is what was before the later one
    const first = unit({ id: 'first', content: 'Asha: my rating just updated btw, 1640 now', valid_time: '2025-09-01T00:00:00.000Z' });
    const then = unit({ id: 'then', content: 'Asha: also rating now 1712 after the Durham congress', valid_time: '2026-03-01T00:00:00.000Z' });
    const ratings = fuse({ ...setup([first, then]), lists: [list('vector', ['then', 'first']), list('text', ['then', 'first'])], options: { ...base, answerFocus: queryIntent("What was Asha's rating at the start of the season?") } });
    expect(ratings.map((r) => [r.unit.id, r.signals.boosts])).toEqual([['first', []], ['then', ['current_version']]]);
    // a middle version is no first one
    const mid = unit({ id: 'mid', content: 'Asha: rating 1688 now', valid_time: '2025-12-01T00:00:00.000Z' });
    const three = fuse({ ...setup([first, mid, then]), lists: [list('vector', ['then', 'mid', 'first']), list('text', ['then', 'mid', 'first'])], options: { ...base, answerFocus: queryIntent("What was Asha's rating at the start of the season?") } });
    expect(three.find((r) => r.unit.id === 'mid')?.signals.boosts).toEqual(['current_version']);
    expect(three[0].unit.id).toBe('first');
  });

  it('gives 1.0 only to a unit ranked first everywhere, at full recency and importance', () => {
    const u = unit({ id: 'a', importance: 1, valid_time: new Date(NOW).toISOString() });
    const [top] = fuse({ ...setup([u]), lists: [list('vector', ['a']), list('text', ['a'])], options: { now: NOW, graphDepth: 0 } });
    expect(top.score).toBeCloseTo(1, 10);
    const [lone] = fuse({ ...setup([u]), lists: [list('vector', ['a']), list('text', [])], options: { now: NOW, graphDepth: 0 } });
    expect(lone.score).toBeCloseTo(0.5, 10); // same unit, found by one retriever of two: not 1.0
  });

  it('applies recency and importance as small bounded effects', () => {
    const old = unit({ id: 'old', importance: 0, valid_time: '2020-01-01T00:00:00.000Z' });
    const fresh = unit({ id: 'fresh', importance: 1, valid_time: '2023-12-31T00:00:00.000Z' });
    const out = fuse({ ...setup([old, fresh]), lists: [list('vector', ['old', 'fresh'])], options: { now: NOW, graphDepth: 0 } });
    expect(out[0].unit.id).toBe('fresh'); // rank 2 vs rank 1 is a small gap, recency+importance close it
    expect(out[1].score).toBeGreaterThanOrEqual(0.8 * out[1].signals.fused - 1e-12);
    // but they never overturn a large relevance gap
    const ids = Array.from({ length: 30 }, (_, i) => `x${i}`);
    const many = ids.map((id) => unit({ id, importance: 0, valid_time: '2020-01-01T00:00:00.000Z' }));
    const out2 = fuse({ ...setup([...many, fresh]), lists: [list('vector', [...ids, 'fresh']), list('text', ids)], options: { now: NOW, graphDepth: 0, limit: 40 } });
    expect(out2[0].unit.id).toBe('x0');
  });

  it('boosts the agent\'s procedural units and the current stream in user scope only', () => {
    const units = [
      unit({ id: 'p', memory_type: 'procedural', agent_id: 'bot', content: 'how to deploy' }),
      unit({ id: 'f', content: 'deploy fact' }),
    ];
    // two retrievers, as in a real query: a unit found by one of them scores ~0.5, where boosts act most
    const lists = [list('vector', ['f', 'p']), list('text', [])];
    expect(fuse({ ...setup(units), lists, options: base }).map((r) => r.unit.id)).toEqual(['f', 'p']);
    const withAgent = fuse({ ...setup(units), lists, options: { ...base, agentId: 'bot' } });
    expect(withAgent.map((r) => r.unit.id)).toEqual(['p', 'f']);
    expect(withAgent[0].signals.boosts).toEqual(['agent']);
    const s2 = [unit({ id: 'x', stream_id: 'other' }), unit({ id: 'y', stream_id: 'current' })];
    const l2 = [list('vector', ['x', 'y']), list('text', [])];
    expect(fuse({ ...setup(s2), lists: l2, options: { ...base, streamId: 'current', streamBoost: 0.5 } })[0].unit.id).toBe('y');
    expect(fuse({ ...setup(s2), lists: l2, options: { ...base, streamId: 'current', streamBoost: 0.5, scope: 'stream' } })[0].unit.id).toBe('x');
  });

  it('removes duplicates, applies min_score and limit, drops filtered units', () => {
    const units = [
      unit({ id: 'a', content: 'Likes tea.' }),
      unit({ id: 'b', content: 'likes TEA' }),
      unit({ id: 'c', content: 'retired', retired_at: '2023-01-01T00:00:00.000Z' }),
      unit({ id: 'd', content: 'other' }),
      unit({ id: 'e', content: 'another' }),
    ];
    const lists = [list('vector', ['a', 'b', 'c', 'd', 'e'])];
    expect(fuse({ ...setup(units), lists, options: base }).map((r) => r.unit.id)).toEqual(['a', 'd', 'e']);
    expect(fuse({ ...setup(units), lists, options: { ...base, limit: 2 } }).map((r) => r.unit.id)).toEqual(['a', 'd']);
    const scored = fuse({ ...setup(units), lists, options: base });
    const cut = fuse({ ...setup(units), lists, options: { ...base, minScore: scored[1].score } });
    expect(cut.map((r) => r.unit.id)).toEqual(['a', 'd']);
    expect(fuse({ ...setup(units), lists, options: { ...base, dedupe: false } }).map((r) => r.unit.id)).toEqual(['a', 'b', 'd', 'e']);
  });

  it('keeps the best unit per collapse key, and fills the limit from the next keys', () => {
    const units = [
      unit({ id: 'a', content: 'Went hiking.', references: ['e1'] }),
      unit({ id: 'b', content: 'Saw a bear.', references: ['e1'] }),
      unit({ id: 'c', content: 'Bought boots.', references: ['e2'] }),
      unit({ id: 'd', content: 'An insight.', level: 2, references: ['e1', 'e2'] }),
      unit({ id: 'e', content: 'Rested.', references: [] }),
    ];
    const lists = [list('vector', ['b', 'a', 'c', 'd', 'e'])];
    const collapseKey = (u: { level: number; references?: string[] }) => (u.level === 1 && u.references?.length ? u.references[0] : null);
    const out = fuse({ ...setup(units), lists, options: { ...base, collapseKey } });
    expect(out.map((r) => r.unit.id)).toEqual(['b', 'c', 'd', 'e']);
    expect(fuse({ ...setup(units), lists, options: { ...base, collapseKey, limit: 2 } }).map((r) => r.unit.id)).toEqual(['b', 'c']);
    expect(fuse({ ...setup(units), lists, options: base }).map((r) => r.unit.id)).toEqual(['b', 'a', 'c', 'd', 'e']);
  });

  it('expands through the graph, with decaying scores, only to visible units', () => {
    const units = [
      unit({ id: 'seed', content: 'seed' }),
      unit({ id: 'n1', content: 'one hop' }),
      unit({ id: 'n2', content: 'two hops' }),
      unit({ id: 'hidden', content: 'retired neighbour', retired_at: '2023-01-01T00:00:00.000Z' }),
    ];
    const adj = buildAdjacency([
      { source_id: 'seed', target_id: 'n1', relation: 'RelatedTo', weight: 1 },
      { source_id: 'n2', target_id: 'n1', relation: 'Supports', weight: 1 }, // walked against its direction
      { source_id: 'seed', target_id: 'hidden', relation: 'RelatedTo', weight: 1 },
    ]);
    const lists = [list('vector', ['seed']), list('text', ['seed'])];
    const none = fuse({ ...setup(units), lists, neighbors: neighborsOf(adj), options: { ...base, graphDepth: 0 } });
    expect(none.map((r) => r.unit.id)).toEqual(['seed']);
    const one = fuse({ ...setup(units), lists, neighbors: neighborsOf(adj), options: { ...base, graphDepth: 1 } });
    expect(one.map((r) => r.unit.id)).toEqual(['seed', 'n1']);
    const two = fuse({ ...setup(units), lists, neighbors: neighborsOf(adj), options: { ...base, graphDepth: 2 } });
    expect(two.map((r) => r.unit.id)).toEqual(['seed', 'n1', 'n2']);
    expect(two[1].signals.graph).toEqual({ from: 'seed', hops: 1, strength: expect.any(Number) });
    expect(two[2].score).toBeLessThan(two[1].score);
    expect(two[2].signals.graph!.hops).toBe(2);
    const capped = fuse({ ...setup(units), lists, neighbors: neighborsOf(adj), options: { ...base, graphDepth: 99 } });
    expect(capped.map((r) => r.unit.id)).toEqual(['seed', 'n1', 'n2']);
  });
});

describe('expandGraph', () => {
  it('decays per hop and with edge weight, strongest path winning, capped at 3 hops', () => {
    const adj = buildAdjacency([
      { source_id: 'a', target_id: 'b', relation: 'RelatedTo', weight: 0.5 },
      { source_id: 'a', target_id: 'c', relation: 'RelatedTo', weight: 1 },
      { source_id: 'c', target_id: 'b', relation: 'RelatedTo', weight: 1 },
      { source_id: 'b', target_id: 'd', relation: 'RelatedTo', weight: 1 },
      { source_id: 'd', target_id: 'e', relation: 'RelatedTo', weight: 1 },
      { source_id: 'e', target_id: 'f', relation: 'RelatedTo', weight: 1 },
    ]);
    const hits = expandGraph([{ id: 'a', score: 1 }], neighborsOf(adj), { depth: 5, decay: 0.5 });
    const by = new Map(hits.map((h) => [h.id, h]));
    expect(by.get('c')!.strength).toBeCloseTo(0.5);
    expect(by.get('b')!.strength).toBeCloseTo(0.25); // direct 0.5·0.5 = 0.25 ties the path via c (0.25)
    expect(by.get('d')!.strength).toBeCloseTo(0.125);
    expect(by.get('e')!.hops).toBe(3);
    expect(by.has('f')).toBe(false); // 4 hops
    expect(by.has('a')).toBe(false);
  });
  it('one hop gives what the walk of any depth gives at depth 1, asking accept only of neighbours that could improve', () => {
    // the walk as it was before one hop had a path of its own (per seed: the best strength per node seen)
    const walk = (seeds: { id: string; score: number }[], neighbors: (id: string) => GraphNeighbor[], accept: (id: string) => boolean, maxVisited: number) => {
      const best = new Map<string, { id: string; strength: number; from: string; hops: number }>();
      let visited = 0;
      for (const seed of seeds) {
        const seen = new Map<string, number>([[seed.id, seed.score]]);
        for (const n of neighbors(seed.id)) {
          if (++visited > maxVisited) break;
          if (n.id === seed.id || !accept(n.id)) continue;
          const strength = seed.score * 0.5 * Math.min(1, Math.max(0, n.weight)) * (n.relation === 'Contradicts' ? 0.8 : 1);
          if (strength <= 0 || strength <= (seen.get(n.id) ?? 0)) continue;
          seen.set(n.id, strength);
          const prev = best.get(n.id);
          if (!prev || strength > prev.strength) best.set(n.id, { id: n.id, strength, from: seed.id, hops: 1 });
        }
      }
      return [...best.values()].sort((a, b) => b.strength - a.strength || (a.id < b.id ? -1 : 1));
    };
    let s = 7;
    const rnd = () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (let round = 0; round < 30; round++) {
      const ids = Array.from({ length: 25 }, (_, i) => `n${i}`);
      const adj = new Map<string, GraphNeighbor[]>();
      for (const id of ids) {
        // repeated neighbours, the node itself, weights of 0 and equal weights: every tie and skip
        adj.set(id, Array.from({ length: Math.floor(rnd() * 12) }, () => ({
          id: ids[Math.floor(rnd() * ids.length)], relation: rnd() < 0.3 ? 'Contradicts' as const : 'RelatedTo' as const,
          weight: [0, 0.5, 1, 1, rnd()][Math.floor(rnd() * 5)], direction: 'out' as const,
        })));
      }
      const neighbors = (id: string) => adj.get(id) ?? [];
      const seeds = Array.from({ length: 2 + Math.floor(rnd() * 12) }, () => ({ id: ids[Math.floor(rnd() * ids.length)], score: [1, 1, 0.5, 0, rnd()][Math.floor(rnd() * 5)] }));
      const hidden = new Set(ids.filter(() => rnd() < 0.2));
      let asked = 0;
      const accept = (id: string) => {
        asked++;
        return !hidden.has(id);
      };
      const maxVisited = round % 3 === 0 ? 15 : 2000;
      let walked = 0;
      const expected = walk(seeds, neighbors, (id) => (walked++, accept(id)), maxVisited);
      asked = 0;
      expect(expandGraph(seeds, neighbors, { depth: 1, decay: 0.5, accept, maxVisited })).toEqual(expected);
      expect(asked).toBeLessThanOrEqual(walked);
    }
  });
});
