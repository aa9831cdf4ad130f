import type { MemoryUnit } from '@strata/store';
import { assertPlanCoversEvents, cosine, reinforceImportance, planConsolidation, PlanInvariantError, type ConsolidationInput, type ConsolidationPlan } from '../../src/consolidation';
import type { Llm } from '../../src/providers/types';
import { HashEmbedder } from './hash-embedder';
import { MemoryFixture, counter, event } from './fixtures';

const NOW = '2023-05-08T14:00:00.000Z';

function setup(mem = new MemoryFixture(), prefix = 'n') {
  const embedder = new HashEmbedder();
  const newId = counter(prefix);
  const run = (events: ConsolidationInput['events'], extra: Partial<ConsolidationInput> = {}) => planConsolidation({
    events, now: NOW, newId, embedder, findSimilar: mem.findSimilar, findBySubjectAttribute: mem.findBySubjectAttribute, ...extra,
  });
  return { mem, embedder, run };
}

const contents = (p: ConsolidationPlan) => p.units.map((u) => u.unit.content);

describe('planConsolidation', () => {
  it('drops a noise-only event with the reason, keeps the informative part of a mixed one', async () => {
    const { run } = setup();
    const p = await run([
      event('thanks!', { event_id: 'a' }),
      event('ok, my flight is at 9', { event_id: 'b' }),
      event('Melanie: Hey Caroline! Good to see you! How have you been?', { event_id: 'c' }),
      event("Caroline: Hey Mel! I'm swamped with work.", { event_id: 'd' }),
    ]);
    expect(p.dropped).toEqual([
      { event_id: 'a', reason: 'noise: acknowledgement or small talk without information' },
      { event_id: 'c', reason: 'noise: greeting without information; acknowledgement or small talk without information' },
    ]);
    expect(contents(p)).toEqual(['ok, my flight is at 9', "Caroline: I'm swamped with work."]);
    expect(p.units.map((u) => u.unit.references)).toEqual([['b'], ['d']]);
    expect(p.method).toBe('offline');
  });

  it('builds a complete unit: attribution, resolved relative date, keywords, provenance, importance, vector', async () => {
    const { run, embedder } = setup();
    const p = await run([event('Caroline: I went to a LGBTQ support group yesterday and it was so powerful.', { event_id: 'e1', org_id: 'acme' })]);
    expect(p.units).toHaveLength(1);
    const { unit, vector } = p.units[0];
    expect(unit).toEqual({
      id: 'n1', user_id: 'u1', stream_id: 's1', org_id: 'acme', agent_id: null, level: 1, memory_type: 'factual',
      content: 'Caroline: I went to a LGBTQ support group yesterday (2023-05-07) and it was so powerful.',
      keywords: ['caroline', '2023-05-07', 'lgbtq', 'support group', 'powerful'], speaker: 'Caroline',
      valid_time: '2023-05-07T00:00:00.000Z', transaction_time: NOW, references: ['e1'], assets: [], importance: 0.55,
      subject: null, attribute: null, retired_at: null, retired_reason: null, superseded_by: null,
    });
    const [expected] = await embedder.embed([unit.content]);
    expect(vector).toEqual(Array.from(expected));
    expect(p.embedder_id).toBe('test-hash-512');
  });

  it('splits an event into atomic statements that all reference it', async () => {
    const { run } = setup();
    const p = await run([event('Jon: I lost my job as a banker, but I am starting a dance studio. Contemporary is my top pick.', { event_id: 'j' })]);
    expect(contents(p)).toEqual(['Jon: I lost my job as a banker.', 'Jon: I am starting a dance studio.', 'Jon: Contemporary is my top pick.']);
    expect(p.units.every((u) => u.unit.references[0] === 'j' && u.unit.speaker === 'Jon')).toBe(true);
  });

  it('classifies a how-to as procedural and keeps a step list whole', async () => {
    const { run } = setup();
    const p = await run([
      event('To deploy the app, run npm run deploy.', { event_id: 'p1' }),
      event('Reset the router:\n1. Unplug it\n2. Wait ten seconds\n3. Plug it back in', { event_id: 'p2' }),
      event('I booked a table for two at Nopa.', { event_id: 'p3', role: 'assistant', agent_id: 'concierge' }),
    ]);
    expect(p.units.map((u) => [u.unit.memory_type, u.unit.content])).toEqual([
      ['procedural', 'To deploy the app, run npm run deploy.'],
      ['procedural', 'Reset the router:\n1. Unplug it\n2. Wait ten seconds\n3. Plug it back in'],
      ['procedural', 'concierge: I booked a table for two at Nopa.'],
    ]);
    expect(p.units[2].unit.agent_id).toBe('concierge');
  });

  it('turns a JSON event into one key-path unit', async () => {
    const { run } = setup();
    const p = await run([event('{"order":{"id":7,"items":[{"name":"pen"}]}}', { event_id: 'j1', content_type: 'json' })]);
    expect(p.units.map((u) => [u.unit.content, u.unit.keywords])).toEqual([
      ['order.id: 7; order.items[0].name: pen', ['7', 'order item name', 'order id', 'pen']],
    ]);
  });

  it('keeps media findable: caption text and the asset on the unit', async () => {
    const { run } = setup();
    const asset = { asset_id: 'f'.repeat(64), media_type: 'image' as const, size: 1234, url: null, phash: '0f0f0f0f0f0f0f0f' };
    const p = await run([
      event('aGVsbG8=', { event_id: 'm1', content_type: 'image', assets: [asset] }),
      event('Caroline: The stories were so inspiring!', { event_id: 'm2', metadata: { blip_caption: 'a photo of a rainbow mural', img_url: ['https://i.redd.it/x.jpg'] } }),
    ]);
    expect(p.units.map((u) => [u.unit.content, u.unit.assets.length, u.unit.references])).toEqual([
      ['[image]', 1, ['m1']],
      ['Caroline: The stories were so inspiring!', 0, ['m2']],
      ['Caroline: shared [image https://i.redd.it/x.jpg] a photo of a rainbow mural', 0, ['m2']],
    ]);
  });

  it('a correction against existing memory retires the old unit and links it EvolvedTo the new one', async () => {
    const { run, mem } = setup();
    const first = await run([event('I live in Boston.', { event_id: 'old' })]);
    mem.apply(first);
    expect(first.units[0].unit).toMatchObject({ id: 'n1', subject: 'user', attribute: 'residence' });
    const second = await run([event('I moved to Denver last month.', { event_id: 'new' })]);
    expect(second.units.map((u) => [u.unit.id, u.unit.content, u.unit.valid_time, u.unit.subject, u.unit.attribute])).toEqual([
      ['n2', 'I moved to Denver last month (2023-04).', '2023-04-01T00:00:00.000Z', 'user', 'residence'],
    ]);
    expect(second.retired).toEqual([{ unit_id: 'n1', retired_at: NOW, reason: 'superseded', superseded_by: 'n2' }]);
    expect(second.edges.filter((e) => e.relation === 'EvolvedTo').map((e) => [e.source_id, e.target_id, e.weight])).toEqual([['n1', 'n2', 1]]);
    expect(second.edges.some((e) => e.relation === 'RelatedTo' && e.target_id === 'n1')).toBe(false);
    mem.apply(second);
    expect(mem.units.get('n1')).toMatchObject({ retired_at: NOW, retired_reason: 'superseded', superseded_by: 'n2' });
    // The same value again is a repeat of the current fact, not a new version.
    const third = await run([event('I live in Denver.', { event_id: 'again' })]);
    expect(third.units).toEqual([]);
    expect(third.retired).toEqual([]);
    expect(third.reinforced).toEqual([{ unit_id: 'n2', add_references: ['again'], importance: reinforceImportance(second.units[0].unit.importance) }]);
  });

  it('a correction inside one batch ("actually, it\'s Y") creates the old version already retired', async () => {
    const { run } = setup();
    const p = await run([
      event('Sam: My favorite color is green.', { event_id: 'c1' }),
      event("Sam: Actually, it's blue.", { event_id: 'c2' }),
    ]);
    expect(p.units.map((u) => [u.unit.id, u.unit.content, u.unit.subject, u.unit.attribute, u.unit.retired_at, u.unit.superseded_by])).toEqual([
      ['n1', 'Sam: My favorite color is green.', 'sam', 'favorite color', NOW, 'n2'],
      ['n2', "Sam: Actually, it's blue. (favorite color: blue)", 'sam', 'favorite color', null, null],
    ]);
    expect(p.units[0].unit.retired_reason).toBe('superseded');
    expect(p.retired).toEqual([]);
    expect(p.edges.map((e) => [e.relation, e.source_id, e.target_id])).toEqual([['EvolvedTo', 'n1', 'n2']]);
  });

  it('a duplicate of an existing unit reinforces it (references merged, importance bumped) instead of creating one', async () => {
    const { run, mem } = setup();
    const first = await run([event('I adopted a puppy named Max.', { event_id: 'd1' })]);
    mem.apply(first);
    const base = first.units[0].unit.importance;
    const second = await run([event('I adopted a puppy named Max!', { event_id: 'd2' }), event('i adopted a puppy named max', { event_id: 'd3' })], {
      options: { thresholds: { duplicate: 0.9, related: 0.3 } },
    });
    expect(second.units).toEqual([]);
    expect(second.reinforced).toEqual([{ unit_id: 'n1', add_references: ['d2', 'd3'], importance: Math.round((1 - (1 - base) * 0.85 * 0.85) * 1000) / 1000 }]);
    mem.apply(second);
    expect(mem.units.get('n1')?.references).toEqual(['d1', 'd2', 'd3']);
  });

  it('duplicates within the batch merge into one new unit', async () => {
    const { run } = setup();
    const p = await run([event('Our dog Max loves the beach.', { event_id: 'x1' }), event('our dog max loves the beach', { event_id: 'x2' })]);
    expect(p.units).toHaveLength(1);
    expect(p.units[0].unit.references).toEqual(['x1', 'x2']);
  });

  it('similar but incompatible text is not merged: another number, the opposite polarity, another speaker', async () => {
    const { run } = setup();
    const p = await run([
      event('Ana: I ran 5 km in the park.', { event_id: 'r1' }),
      event('Ana: I ran 10 km in the park.', { event_id: 'r2' }),
      event('Ana: I like the park.', { event_id: 'r3' }),
      event("Ana: I don't like the park.", { event_id: 'r4' }),
      event('Ben: I like the park.', { event_id: 'r5' }),
    ], { options: { thresholds: { duplicate: 0.6, related: 0.3 } } });
    expect(p.units.map((u) => u.unit.references)).toEqual([['r1'], ['r2'], ['r3'], ['r4'], ['r5']]);
  });

  it('embedding similarity alone does not merge: a repeat shares most of its words (speaker prefix aside)', async () => {
    const { run, mem } = setup();
    const first = await run([event('Mel: My kids and I just finished another painting.', { event_id: 'p1' })]);
    mem.apply(first);
    // a permissive duplicate threshold stands for a weak embedder that scores these pairs as near-identical
    const loose = { options: { thresholds: { duplicate: 0.2, related: 0.1 } } };
    const p = await run([
      event('Mel: My kids and I finished another painting!', { event_id: 'p2' }),
      event("Mel: I'm packing.", { event_id: 'p3' }),
      event("Mel: I'm packing for the trip!", { event_id: 'p4' }),
    ], loose);
    expect(p.reinforced.map((r) => [r.unit_id, r.add_references])).toEqual([['n1', ['p2']]]);
    expect(contents(p)).toEqual(["Mel: I'm packing.", "Mel: I'm packing for the trip!"]);
    // the bar can be lowered to merge by embedding alone
    const q = await setup().run([event("Mel: I'm packing.", { event_id: 'q1' }), event("Mel: I'm packing for the trip!", { event_id: 'q2' })],
      { options: { ...loose.options, minWordOverlap: 0 } });
    expect(q.units.map((u) => u.unit.references)).toEqual([['q1', 'q2']]);
  });

  it('auto-links RelatedTo the top similar units above the lower threshold, weight = similarity', async () => {
    const { run, mem, embedder } = setup();
    const first = await run([
      event('Caroline paints landscapes at the lake.', { event_id: 'l1' }),
      event('The quarterly tax report is due.', { event_id: 'l2' }),
    ]);
    mem.apply(first);
    const p = await run([event('Caroline paints sunsets at the lake with Melanie.', { event_id: 'l3' })], { options: { thresholds: { duplicate: 0.95, related: 0.3 }, maxLinks: 3 } });
    const [a, b] = await embedder.embed(['Caroline paints sunsets at the lake with Melanie.', 'Caroline paints landscapes at the lake.']);
    const related = p.edges.filter((e) => e.relation === 'RelatedTo');
    expect(related.map((e) => [e.source_id, e.target_id])).toEqual([['n3', 'n1']]);
    expect(related[0].weight).toBeCloseTo(cosine(a, b), 4);
    expect(related[0]).toMatchObject({ user_id: 'u1', created_at: NOW, edge_id: 'n4' });
  });

  it('is deterministic: the same input gives the same plan', async () => {
    const events = [event('I live in Oslo, and I work at Equinor.'), event('Tomorrow I fly to Rome.'), event('lol')];
    const a = await setup().run(events);
    const b = await setup().run(events);
    expect(a).toEqual(b);
  });

  it('refuses a batch that mixes users', async () => {
    await expect(setup().run([event('a b c'), event('d e f', { user_id: 'u2' })])).rejects.toThrow('mixes users');
  });

  it('every event is referenced or dropped (the invariant holds on a whole LoCoMo-like session)', async () => {
    const lines = [
      'Caroline: Hey Mel! Good to see you! How have you been?',
      "Melanie: Hey Caroline! Good to see you! I'm swamped with the kids & work. What's up with you? Anything new?",
      'Caroline: I went to a LGBTQ support group yesterday and it was so powerful.',
      'Melanie: Wow, that\'s cool, Caroline! What happened that was so awesome?',
      'Caroline: The transgender stories were so inspiring! I was so happy and thankful for all the support.',
      'Melanie: Wow, love that painting! So cool you found such a helpful group.',
      'Caroline: Thanks!',
      'Melanie: ok',
    ];
    const events = lines.map((l, i) => event(l, { event_id: `t${i}` }));
    const p = await setup().run(events);
    expect(() => assertPlanCoversEvents(events, p)).not.toThrow();
    // t3 is a reaction and a question back ("Wow, that's cool, Caroline! What happened …?")
    expect(p.dropped.map((d) => d.event_id)).toEqual(['t0', 't3', 't6', 't7']);
  });
});

describe('assertPlanCoversEvents', () => {
  const empty = (): ConsolidationPlan => ({ units: [], reinforced: [], retired: [], edges: [], dropped: [], method: 'offline', embedder_id: 'x' });
  it('throws on an event that is neither referenced nor dropped, or dropped without reason', () => {
    expect(() => assertPlanCoversEvents([event('x', { event_id: 'lost' })], empty())).toThrow(PlanInvariantError);
    expect(() => assertPlanCoversEvents([event('x', { event_id: 'q' })], { ...empty(), dropped: [{ event_id: 'q', reason: ' ' }] })).toThrow('without a reason');
    const unit = { id: 'u', references: ['q'], importance: 0.5 } as MemoryUnit;
    expect(() => assertPlanCoversEvents([event('x', { event_id: 'q' })], { ...empty(), units: [{ unit, vector: [] }], dropped: [{ event_id: 'q', reason: 'r' }] })).toThrow('both');
  });
});

describe('LLM path', () => {
  const fakeLlm = (reply: string | Error): Llm & { prompts: string[] } => {
    const prompts: string[] = [];
    return {
      id: 'fake', prompts,
      async complete(messages) {
        prompts.push(messages.map((m) => m.content).join('\n'));
        if (reply instanceof Error) throw reply;
        return reply;
      },
    };
  };

  it('maps JSON facts into the same plan (statements, type, keywords, subject/attribute) and noise into drops', async () => {
    const llm = fakeLlm(JSON.stringify({
      facts: [
        { event: 0, statement: 'Caroline: I went to a support group yesterday.', memory_type: 'factual', keywords: ['support group'], subject: null, attribute: null, value: null },
        { event: 2, statement: 'I live in Denver.', memory_type: 'factual', keywords: ['Denver'], subject: 'user', attribute: 'residence', value: 'Denver' },
      ],
      noise: [{ event: 1, reason: 'a greeting' }],
    }));
    const { run } = setup();
    const p = await run([
      event('Caroline: I went to a support group yesterday and it was great.', { event_id: 'l0' }),
      event('hello there', { event_id: 'l1' }),
      event('I live in Denver', { event_id: 'l2', role: null }),
    ], { llm });
    expect(p.method).toBe('llm');
    expect(llm.prompts[0]).toContain('[0] (speaker: Caroline, type: text, time: 2023-05-08T13:56:00.000Z) I went to a support group');
    expect(p.units.map((u) => [u.unit.content, u.unit.keywords, u.unit.subject, u.unit.attribute, u.unit.valid_time])).toEqual([
      ['Caroline: I went to a support group yesterday (2023-05-07).', ['caroline', 'support group'], null, null, '2023-05-07T00:00:00.000Z'],
      ['I live in Denver.', ['denver'], 'user', 'residence', '2023-05-08T13:56:00.000Z'],
    ]);
    expect(p.dropped).toEqual([{ event_id: 'l1', reason: 'noise (llm): a greeting' }]);
  });

  it('events the reply leaves out are consolidated offline', async () => {
    const llm = fakeLlm('{"facts":[{"event":0,"statement":"I like tea.","memory_type":"factual","keywords":[],"subject":null,"attribute":null,"value":null}]}');
    const p = await setup().run([event('I like tea a lot', { event_id: 'a' }), event('I play chess on Sundays.', { event_id: 'b' })], { llm });
    expect(p.units.map((u) => [u.unit.content, u.unit.references])).toEqual([['I like tea.', ['a']], ['I play chess on Sundays.', ['b']]]);
  });

  it.each([
    ['not JSON at all', 'Sure! Here are the facts: ...'],
    ['wrong shape', '{"facts":{"event":0}}'],
    ['event out of range', '{"facts":[{"event":9,"statement":"x","memory_type":"factual"}]}'],
    ['bad memory type', '{"facts":[{"event":0,"statement":"x","memory_type":"opinion"}]}'],
    ['transport error', new Error('503 after retries')],
  ])('falls back to the offline algorithm for the batch on %s', async (_name, reply) => {
    const events = [event('I live in Oslo.', { event_id: 'o1' }), event('thanks!', { event_id: 'o2' })];
    const withLlm = await setup().run(events, { llm: fakeLlm(reply) });
    const offline = await setup().run(events);
    expect(withLlm).toEqual(offline);
    expect(withLlm.method).toBe('offline');
  });

  it('tolerates a fenced JSON reply', async () => {
    const llm = fakeLlm('```json\n{"facts":[{"event":0,"statement":"I like tea.","memory_type":"factual"}],"noise":[]}\n```');
    const p = await setup().run([event('I like tea', { event_id: 'a' })], { llm });
    expect(p.method).toBe('llm');
    expect(p.units[0].unit.content).toBe('I like tea.');
  });
});
