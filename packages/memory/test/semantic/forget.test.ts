import type { Embedder } from '../../src/providers/types';
import { matchForget, planForget } from '../../src/semantic';
import { ev, unit } from './fixtures';

const oak = unit('oak', 'I live at 12 Oak Street', {
  references: ['e-oak'], transaction_time: '2024-01-01T00:00:00.000Z',
  retired_at: '2024-06-01T00:00:00.000Z', retired_reason: 'superseded', superseded_by: 'pine',
});
const pine = unit('pine', 'I live at 5 Pine Road', { references: ['e-pine'], transaction_time: '2024-06-01T00:00:00.000Z' });
const pizza = unit('pizza', 'I like pizza', { references: ['e-pizza'] });
const email = unit('email', 'My email address is ana@example.com');
const events = [
  ev('e-oak', 'I live at 12 Oak Street', '2024-01-01T00:00:00.000Z'), ev('e-pine', 'I live at 5 Pine Road', '2024-06-01T00:00:00.000Z'),
  ev('e-pizza', 'I like pizza'), ev('e-addr', 'My address changed again, ugh', '2024-07-01T00:00:00.000Z'),
];

describe('matchForget', () => {
  it('"Forget my old address" takes the superseded address only, never the one the user lives at now', () => {
    const r = matchForget({ instruction: 'Forget my old address', units: [pizza, pine, oak, email], events });
    expect(r.memory_units.map((u) => u.id)).toEqual(['oak']);
    expect(r.matches).toEqual([{ id: 'oak', score: 0.95, reason: 'is about your residence; older value (superseded)' }]);
    // the source event of the unit, plus the event that mentions the address by word
    expect(r.matched_events.map((e) => e.id)).toEqual(['e-oak', 'e-addr']);
    expect(r.matched_events[0]).toEqual({ id: 'e-oak', content: 'I live at 12 Oak Street', transaction_time: '2024-01-01T00:00:00.000Z' });
  });

  it('"Forget my address" takes every version, older first by score; "my current address" the current one', () => {
    expect(matchForget({ instruction: 'Forget my address', units: [pizza, pine, oak, email], events }).memory_units.map((u) => u.id).sort()).toEqual(['oak', 'pine']);
    expect(matchForget({ instruction: 'Forget my current address', units: [pizza, pine, oak, email], events }).memory_units.map((u) => u.id)).toEqual(['pine']);
  });

  it('"delete everything about my ex" matches by word, not by substring', () => {
    const ex = unit('ex', 'My ex, Sam, moved to Lisbon');
    const text = unit('text', 'I sent an extra text to my boss');
    const r = matchForget({ instruction: 'delete everything about my ex', units: [ex, text, pizza] });
    expect(r.memory_units.map((u) => u.id)).toEqual(['ex']);
    expect(r.matches[0]).toEqual({ id: 'ex', score: 0.9, reason: 'mentions ex' });
  });

  it('matches a stated fact, uses stored subject/attribute, and respects the limit and mode', () => {
    const tagged = unit('tagged', 'Home: near the station', { subject: 'user', attribute: 'address' });
    const sushi = unit('sushi', 'I like sushi');
    expect(matchForget({ instruction: 'forget that I like pizza', units: [pizza, sushi] }).memory_units.map((u) => u.id)).toEqual(['pizza']);
    expect(matchForget({ instruction: 'forget my address', units: [tagged, pizza] }).memory_units.map((u) => u.id)).toEqual(['tagged']);
    expect(matchForget({ instruction: 'forget my address', units: [oak, pine], limit: 1 }).memory_units).toHaveLength(1);
    const forgotten = { ...oak, retired_reason: 'forgotten' as const };
    // logical mode: the old address is forgotten already, and the current one is not "old": nothing to do
    expect(matchForget({ instruction: 'forget my old address', units: [forgotten, pine] }).memory_units.map((u) => u.id)).toEqual([]);
    expect(matchForget({ instruction: 'forget my old address', units: [forgotten, pine], forget_mode: 'hard' }).memory_units.map((u) => u.id)).toEqual(['oak']);
  });

  it('never forgets everything by accident: a target with no words matches nothing', () => {
    expect(matchForget({ instruction: 'Forget everything', units: [oak, pine, pizza], events }).memory_units).toEqual([]);
    expect(matchForget({ instruction: 'please delete it', units: [oak, pine, pizza], events }).memory_units).toEqual([]);
  });

  it('matches topics by word, and skips non-text events', () => {
    const japan = unit('japan', 'Booked flights to Japan for April', { keywords: ['travel'] });
    const image = { event_id: 'img', content: 'https://x/japan.png', content_type: 'image' as const, transaction_time: '2025-01-01T00:00:00.000Z' };
    const r = matchForget({ instruction: 'Forget about Japan', units: [japan, pizza], events: [image, ev('e-j', 'Japan was amazing')] });
    expect(r.memory_units.map((u) => u.id)).toEqual(['japan']);
    expect(r.matched_events.map((e) => e.id)).toEqual(['e-j']);
    expect(matchForget({ instruction: 'forget my travel plans', units: [japan] }).memory_units.map((u) => u.id)).toEqual(['japan']); // keyword
  });

  it('matches nothing for an unrelated target', () => {
    expect(matchForget({ instruction: 'forget my trip to Japan', units: [oak, pine, pizza], events })).toEqual({ memory_units: [], matched_events: [], matches: [] });
  });
});

describe('planForget with an embedder', () => {
  /** Maps texts to fixed 2-d directions by the topic they contain (a stand-in for a real model). */
  const fake: Embedder & { seen: string[][] } = {
    id: 'fake-2d', dimensions: 2, seen: [],
    async embed(texts: string[]): Promise<Float32Array[]> {
      this.seen.push(texts);
      return texts.map((t) => (/food|pizza|sushi/i.test(t) ? Float32Array.from([1, 0]) : /cuisine/i.test(t) ? Float32Array.from([0.8, 0.6]) : Float32Array.from([0, 1])));
    },
  };

  it('adds units similar in meaning above the threshold and reuses stored vectors', async () => {
    const cuisine = unit('cuisine', 'Italian cuisine is the best');
    const r = await planForget({
      instruction: 'forget my food preferences', units: [pizza, cuisine, pine], embedder: fake,
      vectorOf: (u) => (u.id === 'pine' ? Float32Array.from([0, 1]) : null),
    });
    expect(r.memory_units.map((u) => u.id)).toEqual(['pizza', 'cuisine']);
    expect(r.matches).toEqual([
      { id: 'pizza', score: 1, reason: 'similar in meaning (1.00)' },
      { id: 'cuisine', score: 0.8, reason: 'similar in meaning (0.80)' },
    ]);
    expect(fake.seen).toEqual([['my food preferences', 'I like pizza', 'Italian cuisine is the best']]);
    const strict = await planForget({ instruction: 'forget my food preferences', units: [pizza, cuisine], embedder: fake, similarity_threshold: 0.9 });
    expect(strict.memory_units.map((u) => u.id)).toEqual(['pizza']);
  });
});
