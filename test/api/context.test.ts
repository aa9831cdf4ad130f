/**
 * POST /v1/memory/context over real HTTP (CONTRACT.md §4): strategies by budget, the budget always
 * kept (counted with the real BPE tokenizer), well-formed XML, the X-Memory-Budget header, the user
 * scope of the credentials, and bad input. Memory is proposed through the node's log (seed-memory.ts)
 * so the units, their levels and their lengths are known.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { getEncoding } from 'js-tiktoken';
import { StrataClient, type ContextResponse } from '@strata/client';
import { loadConfig, StrataNode } from '@strata/server';
import { removeDir, tempDir } from '../helpers/server-process';
import { seedMemory, unit } from '../helpers/seed-memory';

const KEY = 'context-test-admin-key';
const USER = 'olga';
const STREAM = '55555555-5555-4555-8555-555555555555';
const enc = getEncoding('cl100k_base');
const tokens = (s: string) => enc.encode(s).length;

describe('POST /v1/memory/context', () => {
  let dataDir: string;
  let node: StrataNode;
  let client: StrataClient;
  const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

  beforeAll(async () => {
    dataDir = tempDir();
    node = await StrataNode.start(loadConfig({
      env: {
        STRATA_API_KEY: KEY, STRATA__EMBEDDING__PROVIDER: 'hashing', STRATA__CONSOLIDATION__ENABLED: 'false', STRATA_PORT: '0',
        STRATA_HOST: '127.0.0.1', STRATA__LOG__LEVEL: 'silent', STRATA_DATA_DIR: dataDir,
      },
    }));
    client = new StrataClient({ baseUrl: node.url, apiKey: KEY });
    const u = (n: number, content: string, extra: Partial<Parameters<typeof unit>[0]> = {}) =>
      unit({ id: id(n), user_id: USER, stream_id: STREAM, content, keywords: ['garden', `topic${n}`], ...extra });
    // Garden memory of varied lengths, with characters XML must escape, an insight, a procedure of an agent.
    const long = 'The vegetable garden has raised beds of tomatoes, beans, zucchini & chard; ' + 'we water them at dawn <before the heat>. '.repeat(12);
    const units = [
      ...Array.from({ length: 14 }, (_, i) => u(i + 1, `Garden note ${i}: the ${['roses', 'tulips', 'apple tree', 'herbs', 'compost'][i % 5]} need "care" & attention in week ${i}.`)),
      u(20, long),
      u(21, 'Garden insight: most garden work happens on weekend mornings.', { level: 2 }),
      u(22, 'To prune the garden roses, cut above an outward bud, then remove dead wood.', { memory_type: 'procedural', agent_id: 'gardener' }),
      u(23, 'The community garden shares tools with the whole street.', { org_id: 'allotment' }),
    ];
    await seedMemory((user, command) => node.services.shards.forUser(user).log.propose(command), [{ user_id: USER, units }]);
  });
  afterAll(async () => {
    await client?.close();
    await node?.stop();
    removeDir(dataDir);
  });

  const context = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    client.raw<ContextResponse & { code?: string; details?: { path: string }[] }>('POST', '/v1/memory/context', { body: { user_id: USER, query: 'garden', ...body }, headers });

  const checkBudget = (r: ContextResponse) => {
    expect(r.used_token_estimate).toBe(tokens(r.context));
    expect(r.used_token_estimate).toBeLessThanOrEqual(r.token_budget);
    expect(r.included_count).toBe(r.hits.length);
    expect(r.included_count).toBeLessThanOrEqual(r.matched_count);
  };

  it('answers every field of the contract', async () => {
    const res = await context({ stream_id: STREAM });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual([
      'context', 'format', 'hits', 'included_count', 'matched_count', 'query', 'query_time_ms', 'strategy', 'token_budget', 'truncated', 'used_token_estimate',
    ]);
    expect(res.body).toMatchObject({ query: 'garden', format: 'text', strategy: 'detailed_l1_first', token_budget: 800, matched_count: 12 });
    expect(res.body.query_time_ms).toBeGreaterThan(0);
    checkBudget(res.body);
    for (const h of res.body.hits) {
      expect(Object.keys(h).sort()).toEqual(['domain', 'id', 'level', 'memory_type', 'score']);
      expect(h.score).toBeGreaterThanOrEqual(0);
      expect(h.score).toBeLessThanOrEqual(1);
    }
    // text lines: `- [L1 factual user 2025-06-14 current] <content>`: when it happened, and whether it still holds
    for (const line of res.body.context.split('\n')) expect(line).toMatch(/^- \[L[123] (factual|procedural) (user|org|agent) \d{4}-\d{2}-\d{2} (current|earlier|superseded)\] \S/);
  });

  it('matches the retrieve route: the same units, limit 12 by default', async () => {
    const ctx = await context({ stream_id: STREAM, limit: 20, token_budget: 8192 });
    const ret = await client.retrieve(USER, STREAM, { query: 'garden', limit: 20 });
    expect(ctx.body.matched_count).toBe(ret.results.length);
    expect(ctx.body.truncated).toBe(false);
    expect(new Set(ctx.body.hits.map((h) => h.id))).toEqual(new Set(ret.results.map((r) => r.unit.id)));
    expect((await context({})).body.matched_count).toBe(12);
    expect((await context({ limit: 3 })).body.matched_count).toBe(3);
  });

  it('picks the strategy by budget and keeps every budget, clamped to [64, 8192]', async () => {
    const expected: Array<[number, string, number]> = [
      [10, 'dense_l2_l3', 64], [64, 'dense_l2_l3', 64], [100, 'dense_l2_l3', 100], [160, 'dense_l2_l3', 160], [161, 'adaptive_compact', 161],
      [300, 'adaptive_compact', 300], [480, 'adaptive_compact', 480], [481, 'detailed_l1_first', 481], [2000, 'detailed_l1_first', 2000],
      [100_000, 'detailed_l1_first', 8192],
    ];
    for (const [asked, strategy, budget] of expected) {
      for (const format of ['text', 'xml']) {
        const res = await context({ token_budget: asked, format, limit: 20 });
        expect([asked, format, res.status, res.body.strategy, res.body.token_budget]).toEqual([asked, format, 200, strategy, budget]);
        checkBudget(res.body);
      }
    }
    // the small budgets cannot hold everything: they say so
    const small = (await context({ token_budget: 100, limit: 20 })).body;
    expect(small.truncated).toBe(true);
    expect(small.included_count).toBeLessThan(small.matched_count);
    // the dense strategy puts insights first
    expect(small.hits[0].level).toBe(2);
  });

  it('renders well-formed, escaped XML at every budget', async () => {
    const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' });
    for (const budget of [64, 90, 150, 200, 333, 480, 700, 1500, 8192]) {
      const res = await context({ token_budget: budget, format: 'xml', limit: 20, org_id: 'allotment', agent_id: 'gardener' });
      expect(res.status).toBe(200);
      checkBudget(res.body);
      expect(XMLValidator.validate(res.body.context)).toBe(true);
      const doc = parser.parse(res.body.context);
      expect(doc.memory_context.strategy).toBe(res.body.strategy);
      const memories = [doc.memory_context.memory ?? []].flat();
      expect(memories.length).toBe(res.body.included_count);
    }
    const full = (await context({ token_budget: 8192, format: 'xml', limit: 20 })).body.context;
    expect(full).toContain('&amp;');
    expect(full).toContain('&lt;before the heat&gt;');
    expect(full).toContain('&quot;care&quot;');
  });

  it('shows the domain of org and agent memory', async () => {
    const res = await context({ query: 'garden tools prune roses', org_id: 'allotment', agent_id: 'gardener', limit: 20, token_budget: 4000 });
    const domains = new Map(res.body.hits.map((h) => [h.id, h.domain]));
    expect(domains.get(id(22))).toBe('agent');
    expect(domains.get(id(23))).toBe('org');
    expect(domains.get(id(1))).toBe('user');
  });

  it('takes the budget from X-Memory-Budget when the body has none', async () => {
    const header = await context({}, { 'x-memory-budget': '200' });
    expect([header.body.token_budget, header.body.strategy]).toEqual([200, 'adaptive_compact']);
    checkBudget(header.body);
    const both = await context({ token_budget: 1000 }, { 'x-memory-budget': '200' });
    expect([both.body.token_budget, both.body.strategy]).toEqual([1000, 'detailed_l1_first']);
    const viaClient = await client.context({ user_id: USER, query: 'garden' }, { budget: 120 });
    expect([viaClient.token_budget, viaClient.strategy]).toEqual([120, 'dense_l2_l3']);
    const bad = await context({}, { 'x-memory-budget': 'lots' });
    expect([bad.status, bad.body.code]).toEqual([400, 'validation_failed']);
  });

  it('checks the user scope of the credentials on body.user_id', async () => {
    const olgaKey = await client.createApiKey({ user_ids: [USER], role: 'read' });
    const otherKey = await client.createApiKey({ user_ids: ['somebody'], role: 'read' });
    const c = new StrataClient({ baseUrl: node.url, apiKey: olgaKey.key });
    try {
      expect((await c.raw('POST', '/v1/memory/context', { body: { user_id: USER, query: 'garden' } })).status).toBe(200);
      c.useApiKey(otherKey.key);
      const denied = await c.raw<{ code: string }>('POST', '/v1/memory/context', { body: { user_id: USER, query: 'garden' } });
      expect([denied.status, denied.body.code]).toEqual([403, 'forbidden']);
      expect((await c.raw('POST', '/v1/memory/context', { body: { user_id: USER, query: 'garden' }, auth: false })).status).toBe(401);
    } finally {
      await c.close();
    }
  });

  it('rejects bad input with the 400 envelope', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ user_id: undefined }, '/user_id'],
      [{ user_id: '' }, '/user_id'],
      [{ query: undefined }, '/query'],
      [{ query: '  ' }, '/query'],
      [{ format: 'html' }, '/format'],
      [{ token_budget: 'big' }, '/token_budget'],
      [{ limit: 0 }, '/limit'],
      [{ stream_id: 'nope' }, '/stream_id'],
      [{ scope: 'stream' }, '/scope'],
      [{ start_time: 'last week' }, '/start_time'],
      [{ as_of: '2026-02-30T00:00:00Z' }, '/as_of'],
    ];
    for (const [body, path] of cases) {
      const res = await context(body);
      expect({ body, status: res.status, code: res.body.code }).toEqual({ body, status: 400, code: 'validation_failed' });
      expect(res.body.details!.map((d) => d.path)).toContain(path);
    }
  });

  it('an unknown user has an empty context, not an error', async () => {
    const res = await client.context({ user_id: 'nobody-here', query: 'garden' });
    expect(res).toMatchObject({ matched_count: 0, included_count: 0, context: '', truncated: false, used_token_estimate: 0 });
  });
});
