import type { EventRecord, MemoryUnit } from '@strata/store';
import { currentReflection, reflectionSubject, streamIsQuiet, streamReflectionCommand, userInsightsCommand } from '../../src/insights';
import { HashEmbedder } from '../consolidation/hash-embedder';
import { counter, event } from '../consolidation/fixtures';

const t = (min: number) => new Date(Date.parse('2023-05-08T13:56:00.000Z') + min * 60_000).toISOString();

function unit(id: string, content: string, over: Partial<MemoryUnit> = {}): MemoryUnit {
  return {
    id, user_id: 'u1', stream_id: 'st', org_id: null, agent_id: null, level: 1, memory_type: 'factual', content, keywords: [],
    speaker: 'Caroline', valid_time: t(0), transaction_time: t(1), references: [`ev-${id}`], assets: [], importance: 0.5,
    subject: null, attribute: null, retired_at: null, retired_reason: null, superseded_by: null, ...over,
  };
}

const evs: EventRecord[] = [
  event('Caroline: I went to a support group yesterday.', { event_id: 'r1', stream_id: 'st', valid_time: t(0), transaction_time: t(0) }),
  event('Melanie: I painted a lake sunrise.', { event_id: 'r2', stream_id: 'st', valid_time: t(9), transaction_time: t(9) }),
];
const units = [unit('m1', 'Caroline: I went to a support group.'), unit('m2', 'Melanie: I painted a lake sunrise.', { speaker: 'Melanie' }), unit('x1', 'other stream', { stream_id: 'other' })];
const ctx = (now: string) => ({ embedder: new HashEmbedder(), now, newId: counter('f') });

describe('reflection policy', () => {
  it('a stream is quiet once quietMinutes have passed since its last accepted event', () => {
    expect(streamIsQuiet(t(9), Date.parse(t(38)), 30)).toBe(false);
    expect(streamIsQuiet(t(9), Date.parse(t(39)), 30)).toBe(true);
  });

  it('the stream\'s reflection is its current L2 unit with the smallest id', () => {
    const r = (id: string, over: Partial<MemoryUnit> = {}) => unit(id, 'r', { level: 2, subject: reflectionSubject('st'), attribute: 'reflection', ...over });
    expect(currentReflection([r('b'), r('a', { retired_at: t(0) }), r('c'), unit('a0', 'l1')])?.id).toBe('b');
    expect(currentReflection([])).toBeNull();
  });

  it('proposes nothing while the stream is active, then a reflection that clears the due mark', async () => {
    const state = { events: evs, units, edges: [], candidates: [] };
    expect(await streamReflectionCommand('u1', 'st', t(9), 30, state, ctx(t(20)))).toBeNull();
    const command = await streamReflectionCommand('u1', 'st', t(9), 30, state, ctx(t(60)));
    expect(command).toMatchObject({ type: 'memory.insights', user_id: 'u1', at: t(60), embedder_id: 'test-hash-512', reflected: [{ stream_id: 'st', through: t(9) }], update: [] });
    expect(command?.create.map((c) => [c.unit.id, c.unit.subject, c.unit.references])).toEqual([['f1', reflectionSubject('st'), ['r1', 'r2']]]);
    expect(command?.edges.map((e) => e.target_id)).toEqual(['m1', 'm2']);
  });

  it('with nothing new to reflect on, only clears the due mark', async () => {
    const first = await streamReflectionCommand('u1', 'st', t(9), 30, { events: evs, units, edges: [], candidates: [] }, ctx(t(60)));
    const existing = first!.create[0].unit;
    const again = await streamReflectionCommand('u1', 'st', t(9), 30, { events: evs, units, edges: first!.edges, candidates: [existing] }, ctx(t(90)));
    expect(again).toMatchObject({ create: [], update: [], edges: [], reflected: [{ stream_id: 'st', through: t(9) }] });
  });
});

describe('userInsightsCommand', () => {
  it('is null when there are no communities to store', async () => {
    expect(await userInsightsCommand('u1', { units: [], edges: [], vectors: new Map() }, ctx(t(60)))).toBeNull();
  });
});
