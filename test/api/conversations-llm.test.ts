/**
 * The conversation suite's scoring (scripts/lib/conversations.ts) with `[llm]` configured: a node whose
 * consolidation drafts memory through an OpenAI-compatible chat model (here a scripted stand-in on
 * 127.0.0.1 speaking the real protocol, test/helpers/scripted-llm.ts). What the model says a turn holds
 * (its statements, and the subject, attribute and value of a fact) drives what is stored and what a later
 * value retires, across sessions; its noise verdicts keep small talk out; and the same figures come out
 * as for the offline path (`npm run eval:conversations -- --llm URL --llm-model M` runs the whole suite).
 */
import { StrataClient } from '@strata/client';
import { runSuite, type Conversation } from '../../scripts/lib/conversations';
import { ScriptedChatModel, type ScriptedAnswer } from '../helpers/scripted-llm';
import { removeDir, startServer, type ServerProcess } from '../helpers/server-process';

const KEY = 'conversations-llm-test-admin-key';
const MODEL_KEY = 'sk-scripted-model';

const conversation: Conversation = {
  id: 'barista-to-developer',
  turns: [
    ['2025-01-10T09:00:00Z', 'user', "Hi! I'm Dana. I work as a barista at Bean There, and I live in Leeds."],
    ['2025-01-10T09:00:20Z', 'assistant', 'Nice to meet you, Dana! How can I help?'],
    ['2025-01-10T09:01:00Z', 'user', 'I drink an oat flat white every morning before my shift.'],
    ['2025-04-02T18:00:00Z', 'user', 'Big change: I started as a junior developer at Finch Labs this week!'],
    ['2025-04-02T18:00:30Z', 'assistant', 'Congratulations, that is a big step.'],
    ['2025-04-02T18:01:00Z', 'user', 'haha thanks'],
    ['2025-08-20T10:00:00Z', 'user', 'We moved to York last weekend, the new flat is lovely.'],
    ['2025-08-20T10:01:00Z', 'user', "And I've given up coffee, it's green tea in the mornings now."],
  ],
  questions: [
    { q: 'What does Dana do for work now?', answer: 'developer', stale: 'barista', kind: 'current' },
    { q: 'Where does Dana live now?', answer: 'York', stale: 'Leeds', kind: 'current' },
    { q: 'What does Dana drink in the morning now?', answer: 'green tea', stale: 'flat white', kind: 'current' },
    { q: 'Where did Dana live before?', answer: 'Leeds', kind: 'earlier' },
    { q: 'What did Dana do for work before?', answer: 'barista|Bean There', kind: 'earlier' },
    { q: 'When did Dana move to York?', answer: 'York', kind: 'when' },
  ],
};

/** What a model answers for each turn (by its text): statements in the speaker's words, and the fact they hold. */
const script = new Map<string, ScriptedAnswer>([
  [conversation.turns[0][2], { facts: [
    { statement: 'I work as a barista at Bean There.', subject: 'user', attribute: 'occupation', value: 'barista at bean there' },
    { statement: 'I live in Leeds.', subject: 'user', attribute: 'residence', value: 'leeds' },
  ] }],
  [conversation.turns[1][2], { noise: 'a greeting' }],
  [conversation.turns[2][2], { facts: [{ statement: 'I drink an oat flat white every morning.', subject: 'user', attribute: 'drink', value: 'oat flat white' }] }],
  [conversation.turns[3][2], { facts: [{ statement: 'I work as a junior developer at Finch Labs since this week.', subject: 'user', attribute: 'occupation', value: 'junior developer at finch labs' }] }],
  [conversation.turns[4][2], { noise: 'congratulations' }],
  [conversation.turns[5][2], { noise: 'an acknowledgement' }],
  [conversation.turns[6][2], { facts: [{ statement: 'We moved to York last weekend.', subject: 'user', attribute: 'residence', value: 'york' }] }],
  [conversation.turns[7][2], { facts: [{ statement: 'I drink green tea in the mornings now, I gave up coffee.', subject: 'user', attribute: 'drink', value: 'green tea' }] }],
]);

describe('conversation suite with [llm] configured', () => {
  let model: ScriptedChatModel;
  let server: ServerProcess;
  let client: StrataClient;

  beforeAll(async () => {
    model = new ScriptedChatModel(script, MODEL_KEY);
    const baseUrl = await model.start();
    server = await startServer({
      env: {
        STRATA_ADMIN_API_KEY: KEY, STRATA__CONSOLIDATION__INTERVAL_MS: '50',
        STRATA__LLM__PROVIDER: 'openai', STRATA__LLM__BASE_URL: baseUrl, STRATA__LLM__MODEL: 'scripted-small', STRATA__LLM__API_KEY: MODEL_KEY,
      },
      timeoutMs: 60_000,
    });
    client = new StrataClient({ baseUrl: server.url, apiKey: KEY });
  }, 90_000);
  afterAll(async () => {
    await client?.close();
    if (server) {
      expect(await server.stop()).toBe(0);
      removeDir(server.dataDir);
    }
    await model?.stop();
  });

  it("stores what the model drafts, retires a value when the model gives the same subject and attribute a new one, and answers from it", async () => {
    const s = await runSuite(client, { conversations: [conversation] }, { timeoutMs: 120_000 });

    // the model was asked, in the protocol, once per consolidated batch at least
    expect(model.requests.length).toBeGreaterThanOrEqual(3);
    for (const r of model.requests) {
      expect(r.body.model).toBe('scripted-small');
      expect(r.body.response_format).toEqual({ type: 'json_object' });
      expect(r.body.messages?.[0].content).toContain('occupation'); // the attribute names it is asked to use
    }
    // current memory is the model's latest statement of each fact (dated by consolidation); the small talk
    // it called noise is not in it, and the earlier values are history (the "before" questions reach them)
    expect(s.units.sort()).toEqual([
      'barista-to-developer: I drink green tea in the mornings now, I gave up coffee.',
      'barista-to-developer: I work as a junior developer at Finch Labs since this week (week of 2025-03-31).',
      'barista-to-developer: We moved to York last weekend (weekend of 2025-08-16).',
    ]);
    expect(s.filler_units).toBe(0);
    // each old value was retired by the new one of the same attribute, and the context says which holds
    expect(s.stale_units).toEqual([]);
    expect(s.stale_left_current).toBe(0);
    expect(s.time_contexts_ok).toBe(s.time_contexts);
    expect(s.results.filter((r) => r.rank !== 1).map((r) => `${r.q} → ${r.top[0]}`)).toEqual([]);
  }, 240_000);
});
