import { fuse } from '../../src/retrieval/fusion';
import { retrieve } from '../../src/retrieval/pipeline';
import { isNamedSpeaker, isQuestion, normalizeSpeaker, queryTimeRanges, speakersNamedIn } from '../../src/retrieval/query';
import { TextIndex } from '@strata/store/indexes';
import type { MemoryUnit } from '@strata/store';
import { unit } from './helpers';

const NOW = Date.parse('2024-01-01T00:00:00.000Z');

describe('speakersNamedIn', () => {
  const known = ['Caroline', 'Melanie', 'Dr. Ann Lee', 'user', 'assistant'];

  it('finds whole names in any case, possessives included, and first names of longer names', () => {
    expect([...speakersNamedIn("What is Caroline's identity?", known)]).toEqual(['caroline']);
    expect([...speakersNamedIn('what did MELANIE paint?', known)]).toEqual(['melanie']);
    expect([...speakersNamedIn('When did Caroline and Melanie meet?', known)].sort()).toEqual(['caroline', 'melanie']);
    expect([...speakersNamedIn('what did dr. ann lee prescribe?', known)]).toEqual(['dr. ann lee']);
  });

  it('ignores names inside other words, roles, and unknown people', () => {
    expect(speakersNamedIn('What about Melanies?', known).size).toBe(0);
    expect(speakersNamedIn('Carolineville history', known).size).toBe(0);
    expect(speakersNamedIn('what did the user say to the assistant?', known).size).toBe(0);
    expect(speakersNamedIn('What did Bob say?', known).size).toBe(0);
  });

  it('treats roles as unnamed speakers and normalizes spacing and case', () => {
    expect(isNamedSpeaker('user')).toBe(false);
    expect(isNamedSpeaker(' Assistant ')).toBe(false);
    expect(isNamedSpeaker(null)).toBe(false);
    expect(isNamedSpeaker('Melanie')).toBe(true);
    expect(normalizeSpeaker('  Ann   Lee ')).toBe('ann lee');
  });
});

describe('speaker focus', () => {
  const units: MemoryUnit[] = [
    unit({ id: 'c', speaker: 'Caroline', content: 'Caroline: I love painting sunsets.' }),
    unit({ id: 'm', speaker: 'Melanie', content: 'Melanie: I love painting horses and ponies in the meadow.' }),
    unit({ id: 'u', speaker: 'user', content: 'I love painting too.' }),
    unit({ id: 'n', speaker: null, content: 'Painting club meets on Fridays.' }),
  ];
  const byId = new Map(units.map((u) => [u.id, u]));
  const lists = [{ name: 'text', weight: 1, items: ['m', 'c', 'u', 'n'].map((id) => ({ id })) }];
  const run = (speakerFocus: { named: Set<string>; factor: number } | null) =>
    fuse({ lists, getUnit: (id) => byId.get(id), accept: () => true, options: { now: NOW, graphDepth: 0, recencyWeight: 0, importanceWeight: 0, speakerFocus } });

  it('scales units said by another named person, and leaves roles and unattributed units alone', () => {
    const plain = new Map(run(null).map((r) => [r.unit.id, r.score]));
    const focused = run({ named: new Set(['caroline']), factor: 0.5 });
    const score = new Map(focused.map((r) => [r.unit.id, r.score]));
    expect(score.get('m')).toBeCloseTo(plain.get('m')! * 0.5);
    for (const id of ['c', 'u', 'n']) expect(score.get(id)).toBeCloseTo(plain.get(id)!);
    expect(focused[0].unit.id).toBe('c');
    expect(focused.find((r) => r.unit.id === 'm')!.signals.boosts).toContain('other_speaker');
  });

  it('leaves another\'s statement that speaks of the named person alone, not one that only addresses them', () => {
    const told = [
      unit({ id: 'told', speaker: 'Nkechi', content: 'Nkechi: Carla sent photos, baby Mateo arrived 27 Oct, 3.4 kg' }),
      unit({ id: 'hey', speaker: 'Nkechi', content: 'Nkechi: Hey Carla! the baby photos are lovely' }),
      unit({ id: 'bye', speaker: 'Nkechi', content: 'Nkechi: the baby photos are lovely, Carla!' }),
    ];
    const byTold = new Map(told.map((u) => [u.id, u]));
    const out = fuse({ lists: [{ name: 'text', weight: 1, items: told.map((u) => ({ id: u.id })) }], getUnit: (id) => byTold.get(id), accept: () => true,
      options: { now: NOW, graphDepth: 0, recencyWeight: 0, importanceWeight: 0, speakerFocus: { named: new Set(['carla']), factor: 0.5 } } });
    const boosts = new Map(out.map((r) => [r.unit.id, r.signals.boosts]));
    expect(boosts.get('told')).not.toContain('other_speaker');
    expect(boosts.get('hey')).toContain('other_speaker');
    expect(boosts.get('bye')).toContain('other_speaker');
  });

  it('changes nothing with no named speaker or a factor of 1', () => {
    expect(run({ named: new Set(), factor: 0.1 })).toEqual(run(null));
    expect(run({ named: new Set(['caroline']), factor: 1 }).map((r) => r.score)).toEqual(run(null).map((r) => r.score));
  });

  it('is applied by the pipeline from the speakers of the candidates the query names', () => {
    const text = new TextIndex();
    for (const u of units) text.add(u.id, u.content);
    const ask = (query: string, speakerFactor?: number) =>
      retrieve({ vectorIndexes: [], textIndexes: [text], getUnit: (id) => byId.get(id) }, { query, user_id: 'alice', graph_depth: 0 }, { speakerFactor }, NOW)
        .results.map((r) => r.unit.id);
    // horses, ponies, meadow make Melanie's unit the best text match; naming Caroline lowers it, never drops it
    const q = 'Did Caroline paint horses, ponies or meadows?';
    expect(ask(q, 1)[0]).toBe('m');
    expect(ask(q, 0.3)[0]).toBe('c');
    expect(ask(q, 0.3)).toContain('m');
    expect(ask('Did Melanie paint horses, ponies or meadows?', 0.3)[0]).toBe('m');
  });
});

describe('questions', () => {
  it('isQuestion: the text ends with a question mark, trailing notes and captions aside', () => {
    expect(isQuestion('Melanie: Do you like to paint too?')).toBe(true);
    expect(isQuestion('Melanie: Any plans? [shares a photo: a lake at dawn]')).toBe(true);
    expect(isQuestion('What was it about? (2023-05-07) ')).toBe(true);
    expect(isQuestion('Melanie: I painted a sunset.')).toBe(false);
    expect(isQuestion('Is it? No, I painted a sunset.')).toBe(false);
    expect(isQuestion('I asked "why?" and left [shares a photo: what?]')).toBe(false);
  });

  it('scales L1 questions by questionFactor, never insights, and leaves the default alone', () => {
    const units: MemoryUnit[] = [
      unit({ id: 'q', content: 'Do you like to paint?' }),
      unit({ id: 'a', content: 'I paint sunsets.' }),
      unit({ id: 'i', level: 2, content: 'Who paints what?' }),
    ];
    const byId = new Map(units.map((u) => [u.id, u]));
    const run = (questionFactor?: number) => fuse({
      lists: [{ name: 'text', weight: 1, items: ['q', 'a', 'i'].map((id) => ({ id })) }],
      getUnit: (id) => byId.get(id), accept: () => true,
      options: { now: NOW, graphDepth: 0, recencyWeight: 0, importanceWeight: 0, questionFactor },
    });
    expect(run().map((r) => r.unit.id)).toEqual(['q', 'a', 'i']);
    const scaled = run(0.5);
    expect(scaled.map((r) => r.unit.id)).toEqual(['a', 'i', 'q']);
    expect(scaled.find((r) => r.unit.id === 'q')!.score).toBeCloseTo(run().find((r) => r.unit.id === 'q')!.score * 0.5);
    expect(scaled.find((r) => r.unit.id === 'q')!.signals.boosts).toContain('question');
  });

  it('scales insights by insightFactor', () => {
    const units: MemoryUnit[] = [unit({ id: 'i', level: 2, content: 'Recurring topic: painting' }), unit({ id: 'm', content: 'I paint sunsets.' })];
    const byId = new Map(units.map((u) => [u.id, u]));
    const run = (insightFactor?: number) => fuse({
      lists: [{ name: 'text', weight: 1, items: ['i', 'm'].map((id) => ({ id })) }],
      getUnit: (id) => byId.get(id), accept: () => true,
      options: { now: NOW, graphDepth: 0, recencyWeight: 0, importanceWeight: 0, insightFactor },
    });
    expect(run().map((r) => r.unit.id)).toEqual(['i', 'm']);
    expect(run(0.5).map((r) => r.unit.id)).toEqual(['m', 'i']);
    expect(run(0.5)[1].score).toBeCloseTo(run()[0].score * 0.5);
    expect(run(0.5)[1].signals.boosts).toContain('insight');
  });
});

describe('dates named in a query', () => {
  const day = (iso: string) => Date.parse(`${iso}T00:00:00.000Z`);
  const spans = (q: string) => queryTimeRanges(q).map((r) => [new Date(r.start).toISOString().slice(0, 10), new Date(r.end).toISOString().slice(0, 10)]);

  it('a day opens a window two weeks before it; a month spans the month from two weeks before it', () => {
    expect(spans('What painting did Melanie show on October 13, 2023?')).toEqual([['2023-09-29', '2023-10-14']]);
    expect(spans('What did Maria start, as mentioned on 3 June, 2023?')).toEqual([['2023-05-20', '2023-06-04']]);
    expect(spans('What happened on the 1st of Feb 2023?')).toEqual([['2023-01-18', '2023-02-02']]);
    expect(spans('and on 2023-05-07')).toEqual([['2023-04-23', '2023-05-08']]);
    expect(spans('What did Maria donate in December 2023?')).toEqual([['2023-11-17', '2024-01-01']]);
    expect(spans('between May 2023 and 16 August, 2023')).toEqual([['2023-08-02', '2023-08-17'], ['2023-04-17', '2023-06-01']]);
  });

  it('names no window for a bare year, a weekday or no date', () => {
    expect(queryTimeRanges('When did they go to a pride festival in 2022?')).toEqual([]);
    expect(queryTimeRanges('What did she do on Friday?')).toEqual([]);
    expect(queryTimeRanges('May I ask what Maria likes?')).toEqual([]);
  });

  it('scales the units outside every window, by their valid time (else transaction time)', () => {
    const units: MemoryUnit[] = [
      unit({ id: 'old', valid_time: '2023-01-10T00:00:00.000Z' }),
      unit({ id: 'in', valid_time: '2023-06-01T00:00:00.000Z' }),
      unit({ id: 'tx', valid_time: null as never, transaction_time: '2023-06-02T00:00:00.000Z' }),
    ];
    const byId = new Map(units.map((u) => [u.id, u]));
    const run = (timeFocus: { ranges: { start: number; end: number }[]; factor: number } | null) => fuse({
      lists: [{ name: 'text', weight: 1, items: ['old', 'in', 'tx'].map((id) => ({ id })) }],
      getUnit: (id) => byId.get(id), accept: () => true,
      options: { now: NOW, graphDepth: 0, recencyWeight: 0, importanceWeight: 0, timeFocus },
    });
    const focused = run({ ranges: [{ start: day('2023-05-20'), end: day('2023-06-04') }], factor: 0.3 });
    expect(focused.map((r) => r.unit.id)).toEqual(['in', 'tx', 'old']);
    expect(focused[2].signals.boosts).toContain('other_time');
    expect(run({ ranges: [], factor: 0.3 }).map((r) => r.unit.id)).toEqual(['old', 'in', 'tx']);
  });
});
