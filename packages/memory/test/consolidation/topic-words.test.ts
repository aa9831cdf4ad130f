import { COMMON_WORD_UNITS, planConsolidation, TopicWords } from '../../src/consolidation';
import type { MemoryUnit } from '@strata/store';
import { HashEmbedder } from './hash-embedder';
import { MemoryFixture, counter, event } from './fixtures';

const NOW = '2025-06-01T00:00:00.000Z';
const unit = (id: string, content: string, extra: Partial<MemoryUnit> = {}): MemoryUnit =>
  ({ id, content, level: 1, memory_type: 'factual', retired_at: null, user_id: 'u1', ...extra } as unknown as MemoryUnit);

describe('TopicWords', () => {
  it('finds the statements sharing two topic words, most shared first, and forgets what changed', () => {
    const t = new TopicWords();
    t.put(unit('a', "Dmitri: btw I'm WFH Tue/Thu from now on, nursery pickup"));
    t.put(unit('b', 'Dmitri: the nursery is lovely'));
    t.put(unit('c', 'Dmitri: pickup truck for sale, nursery run done'));
    const text = "also I'm home Mondays and Wednesdays now, nursery changed its pickup days";
    expect(t.sharing(text, 5).map((u) => u.id)).toEqual(['a', 'c']); // b shares one word only
    t.put(unit('a', "Dmitri: btw I'm WFH Tue/Thu from now on, nursery pickup", { retired_at: NOW }));
    expect(t.sharing(text, 5).map((u) => u.id)).toEqual(['c']); // a retired statement is no candidate
    t.remove('c');
    expect(t.sharing(text, 5)).toEqual([]);
    // an assistant's statement may hold a value that changes (procedural as it is); an insight is no statement
    t.put(unit('p', 'assistant: nursery pickup is booked for Tue/Thu', { memory_type: 'procedural' }));
    t.put(unit('i', 'Recurring topic: nursery pickup, days', { level: 2 }));
    expect(t.sharing(text, 5).map((u) => u.id)).toEqual(['p']);
  });

  it('answers the latest record of a statement put again, with its words kept or taken again from a new text', () => {
    const t = new TopicWords();
    const text = "also I'm home Mondays and Wednesdays now, nursery changed its pickup days";
    t.put(unit('a', "Dmitri: btw I'm WFH Tue/Thu from now on, nursery pickup", { importance: 0.5 }));
    t.put(unit('c', 'Dmitri: pickup truck for sale, nursery run done'));
    t.put(unit('a', "Dmitri: btw I'm WFH Tue/Thu from now on, nursery pickup", { importance: 0.9 })); // reinforced: same text
    const first = t.sharing(text, 5);
    expect(first.map((u) => [u.id, u.importance])).toEqual([['a', 0.9], ['c', undefined]]);
    t.put(unit('c', 'Dmitri: the truck is sold')); // a new text: its old words no longer find it
    expect(t.sharing(text, 5).map((u) => u.id)).toEqual(['a']);
    t.put(unit('c', 'Dmitri: pickup truck for sale, nursery run done'));
    expect(t.sharing(text, 5).map((u) => u.id)).toEqual(['a', 'c']);
  });

  it('skips words most of a long memory holds', () => {
    const t = new TopicWords();
    for (let i = 0; i <= COMMON_WORD_UNITS; i++) t.put(unit(`w${i}`, `work meeting number ${i} about budget`));
    t.put(unit('x', 'the nursery pickup moved'));
    expect(t.sharing('work meeting about the nursery pickup', 3).map((u) => u.id)).toEqual(['x']);
  });

  it('lets a topic update reach a statement the vectors did not bring', async () => {
    const mem = new MemoryFixture();
    const topics = new TopicWords();
    const newId = counter('u');
    const run = async (events: Parameters<typeof planConsolidation>[0]['events']) => {
      const plan = await planConsolidation({
        events, now: NOW, newId, embedder: new HashEmbedder(),
        findSimilar: async () => [], // as when the local embedder puts the two statements far apart
        findBySubjectAttribute: mem.findBySubjectAttribute,
        findSharingWords: async (_user, text, k, min) => topics.sharing(text, k, min),
      });
      mem.apply(plan);
      for (const u of mem.units.values()) topics.put(u);
      return plan;
    };
    await run([event("Dmitri: btw I'm WFH Tue/Thu from now on, nursery pickup", { valid_time: '2025-01-13T10:00:00.000Z', metadata: { speaker: 'Dmitri' } })]);
    const p = await run([event("Dmitri: also I'm home Mondays and Wednesdays now, nursery changed its pickup days", { valid_time: '2025-04-10T10:00:00.000Z', metadata: { speaker: 'Dmitri' } })]);
    expect(p.retired.map((r) => mem.units.get(r.unit_id)?.content)).toEqual(["Dmitri: btw I'm WFH Tue/Thu from now on, nursery pickup"]);
  });

  it('looks up the statements sharing its words only for a statement that announces an update (8c), and retires as before', async () => {
    const mem = new MemoryFixture();
    const topics = new TopicWords();
    const newId = counter('u');
    const asked: string[] = [];
    const run = async (content: string, validTime: string) => {
      const plan = await planConsolidation({
        events: [event(content, { valid_time: validTime, metadata: { speaker: 'Dmitri' } })], now: NOW, newId, embedder: new HashEmbedder(),
        findSimilar: mem.findSimilar,
        findBySubjectAttribute: mem.findBySubjectAttribute,
        findSharingWords: async (_user, text, k, min) => { asked.push(text); return topics.sharing(text, k, min); },
      });
      mem.apply(plan);
      for (const u of mem.units.values()) topics.put(u);
      return plan;
    };
    await run("Dmitri: btw I'm WFH Tue/Thu from now on, nursery pickup", '2025-01-13T10:00:00.000Z');
    await run('Dmitri: the nursery pickup is a bit chaotic but the staff are lovely', '2025-02-10T10:00:00.000Z');
    expect(asked).toEqual(["btw I'm WFH Tue/Thu from now on, nursery pickup"]); // the second announces no change: nothing to look up
    const p = await run("Dmitri: also I'm home Mondays and Wednesdays now, nursery changed its pickup days", '2025-04-10T10:00:00.000Z');
    expect(asked.slice(1)).toEqual(["also I'm home Mondays and Wednesdays now, nursery changed its pickup days"]);
    expect(p.retired.map((r) => mem.units.get(r.unit_id)?.content)).toEqual(["Dmitri: btw I'm WFH Tue/Thu from now on, nursery pickup"]);
  });
});
