/**
 * MCP over streamable HTTP (CONTRACT §12), driven by the official SDK's own client against a real node:
 * the tool list, remember → recall, context within a budget, forget preview then confirm, tasks, the
 * user taken from a one-user key, and scope refusals as tool errors.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StrataClient } from '@strata/client';
import { callTool, connectMcp } from '../helpers/mcp-client';
import { removeDir, startServer, type ServerProcess } from '../helpers/server-process';

const KEY = 'mcp-test-admin-key';
const TOOLS = ['confirm_forget', 'forget', 'get_context', 'list_tasks', 'recall', 'remember', 'update_task_status'];

describe('MCP over streamable HTTP', () => {
  let server: ServerProcess;
  let admin: StrataClient;
  const clients: Client[] = [];

  async function connect(headers: Record<string, string>): Promise<Client> {
    const client = await connectMcp(server.url, headers);
    clients.push(client);
    return client;
  }
  const call = callTool;

  beforeAll(async () => {
    server = await startServer({ env: { STRATA_API_KEY: KEY, STRATA__CONSOLIDATION__INTERVAL_MS: '50', STRATA__EMBEDDING__PROVIDER: 'hashing' } });
    admin = new StrataClient({ baseUrl: server.url, apiKey: KEY });
  });
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await admin.close();
    expect(await server.stop()).toBe(0);
    removeDir(server.dataDir);
  });

  it('lists the seven tools, each with an input schema and a description', async () => {
    const client = await connect({ 'x-api-key': KEY });
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS);
    for (const t of tools) {
      expect(t.description!.length).toBeGreaterThan(40);
      expect(t.inputSchema.type).toBe('object');
    }
    expect(tools.find((t) => t.name === 'remember')!.inputSchema.required).toEqual(['content']);
  });

  it('remembers, then recalls and renders context for what was remembered', async () => {
    const client = await connect({ 'x-api-key': KEY, 'x-strata-user': 'dylan' });
    const remembered = await call(client, 'remember', { content: 'Dylan prefers concise summaries and hates long meetings.' });
    expect(remembered.isError).toBeFalsy();
    expect(remembered.structuredContent).toMatchObject({ status: 'accepted', user_id: 'dylan' });
    expect(JSON.parse(remembered.content[0].text)).toEqual(remembered.structuredContent);
    const eventId = remembered.structuredContent!.event_id as string;
    const streamId = remembered.structuredContent!.stream_id as string;
    // the event is stored in the session's stream, as REST lists it
    expect((await admin.allEvents('dylan', streamId)).map((e) => e.event_id)).toEqual([eventId]);
    // at once, before consolidation may have run: a raw hit of the event, or a unit made from it
    const atOnce = await call(client, 'recall', { query: 'What does Dylan prefer?' });
    const first = atOnce.structuredContent!.results as { unit: { references: string[] } }[];
    expect(first.some((r) => r.unit.references.includes(eventId))).toBe(true);
    await call(client, 'remember', { content: 'Dylan lives in Lisbon and works as a data engineer.' });
    expect((await admin.waitUntilReady(30_000, 50)).ready).toBe(true);

    const recalled = await call(client, 'recall', { query: 'What does Dylan prefer?' });
    expect(recalled.isError).toBeFalsy();
    const results = recalled.structuredContent!.results as { unit: { content: string; references: string[] }; score: number }[];
    expect(results.length).toBeGreaterThan(0);
    expect(results.some((r) => r.unit.references.includes(eventId))).toBe(true);

    const context = await call(client, 'get_context', { query: 'Where does Dylan live?', token_budget: 64 });
    expect(context.isError).toBeFalsy();
    expect(context.structuredContent!.used_token_estimate as number).toBeLessThanOrEqual(64);
    expect(context.structuredContent!.context).toContain('Lisbon');
  });

  it('forgets in two steps: the preview changes nothing, the confirmation retires the units', async () => {
    const client = await connect({ 'x-api-key': KEY });
    await call(client, 'remember', { user_id: 'maya', content: 'Maya is allergic to peanuts.' });
    await call(client, 'remember', { user_id: 'maya', content: 'Maya works as a nurse in Porto.' });
    expect((await admin.waitUntilReady(30_000, 50)).ready).toBe(true);
    const current = async () => (await admin.raw<{ memories: { id: string; content: string }[] }>('GET', '/v1/users/maya/memories')).body.memories;
    const before = await current();
    const preview = await call(client, 'forget', { user_id: 'maya', instruction: 'forget that Maya is allergic to peanuts' });
    expect(preview.isError).toBeFalsy();
    const planId = preview.structuredContent!.plan_id as string;
    const planned = (preview.structuredContent!.forget_preview as { memory_units: { id: string; content: string }[] }).memory_units;
    expect(planned.map((u) => u.content).join(' ')).toContain('peanuts');
    expect(await current()).toEqual(before);
    const done = await call(client, 'confirm_forget', { user_id: 'maya', plan_id: planId });
    expect(done.isError).toBeFalsy();
    expect(done.structuredContent).toMatchObject({ status: 'executed', plan_id: planId });
    const after = await current();
    expect(after.map((u) => u.content).join(' ')).not.toContain('peanuts');
    expect(after.map((u) => u.content).join(' ')).toContain('Porto');
    const again = await call(client, 'confirm_forget', { user_id: 'maya', plan_id: planId });
    expect([again.isError, again.structuredContent!.code]).toEqual([true, 'not_found']);
  });

  it('lists tasks and updates a status', async () => {
    const stream = randomUUID();
    const goal = (await admin.ingest('omar', stream, { content: 'Launch the new website', level: 3 })).event_id;
    await admin.ingest('omar', stream, { content: 'Write the landing page copy', parent_id: goal });
    expect((await admin.waitUntilReady(30_000, 50)).ready).toBe(true);
    const client = await connect({ 'x-api-key': KEY, 'x-strata-user': 'omar' });
    const trees = await call(client, 'list_tasks', {});
    const goals = trees.structuredContent!.goals as { goal: { content: string }; tasks: { task: { task_id: string } }[] }[];
    expect(goals[0].goal.content).toBe('Launch the new website');
    const taskId = goals[0].tasks[0].task.task_id;
    const ready = await call(client, 'list_tasks', { ready_only: true });
    expect((ready.structuredContent!.tasks as { task_id: string }[]).map((t) => t.task_id)).toContain(taskId);
    const updated = await call(client, 'update_task_status', { task_id: taskId, status: 'completed', result_summary: 'Copy written.' });
    expect([updated.isError, updated.content[0].text]).toEqual([undefined, JSON.stringify(updated.structuredContent)]);
    expect(updated.structuredContent).toMatchObject({ task_id: taskId, status: 'completed' });
    const rest = await admin.raw<{ task_id: string; status: string }[]>('GET', '/v1/users/omar/tasks/ready');
    expect(rest.body.map((t) => t.task_id)).not.toContain(taskId);
  });

  it('takes the user from a one-user key, and refuses out-of-scope users and roles as tool errors', async () => {
    const ana = (await admin.createApiKey({ user_ids: ['ana'], role: 'write' })).key;
    const reader = (await admin.createApiKey({ user_ids: ['ana'], role: 'read' })).key;
    const client = await connect({ 'x-api-key': ana });
    const mine = await call(client, 'remember', { content: 'Ana keeps bees on her roof.' });
    expect(mine.structuredContent).toMatchObject({ status: 'accepted', user_id: 'ana' });
    const other = await call(client, 'recall', { user_id: 'bob', query: 'bees' });
    expect([other.isError, other.structuredContent!.code]).toEqual([true, 'forbidden']);
    const readOnly = await connect({ 'x-api-key': reader });
    const refused = await call(readOnly, 'remember', { content: 'not stored' });
    expect([refused.isError, refused.structuredContent!.code]).toEqual([true, 'forbidden']);
    // an unscoped key and no session user: the tool says user_id is needed
    const anyone = await connect({ 'x-api-key': KEY });
    const missing = await call(anyone, 'recall', { query: 'bees' });
    expect([missing.isError, missing.structuredContent!.code]).toEqual([true, 'validation_failed']);
    expect(missing.content[0].text).toContain('user_id');
    // bad input is a tool error with the REST validation, not a crash
    const badTime = await call(anyone, 'recall', { user_id: 'ana', query: 'bees', as_of: 'yesterday' });
    expect([badTime.isError, badTime.structuredContent!.code]).toEqual([true, 'validation_failed']);
  });

  it('authenticates every request and keeps a session to the credentials that opened it', async () => {
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
    const post = (headers: Record<string, string>, body: unknown) => fetch(`${server.url}/mcp`, {
      method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body: JSON.stringify(body),
    });
    const anonymous = await post({}, init);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ code: 'unauthenticated' });
    const opened = await post({ 'x-api-key': KEY }, init);
    expect(opened.status).toBe(200);
    const sessionId = opened.headers.get('mcp-session-id')!;
    expect(sessionId).toBeTruthy();
    await opened.text();
    const other = (await admin.createApiKey({ role: 'admin' })).key;
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} };
    const stolen = await post({ 'x-api-key': other, 'mcp-session-id': sessionId }, list);
    expect(stolen.status).toBe(404);
    const noSession = await post({ 'x-api-key': KEY }, list);
    expect(noSession.status).toBe(400);
  });
});

/**
 * What the second red-team pass found in MCP (round 3): one key's sessions must not close another's,
 * and a browser page (any `Origin` not allowed) must not reach the tools (DNS rebinding).
 */
describe('MCP session bounds and request origins', () => {
  let server: ServerProcess;
  let admin: StrataClient;
  const ALLOWED = 'https://agent.example';
  const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
  const list = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} };
  const post = (headers: Record<string, string>, body: unknown) => fetch(`${server.url}/mcp`, {
    method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body: JSON.stringify(body),
  });
  /** Opens a session; answers its id. */
  const open = async (key: string, headers: Record<string, string> = {}) => {
    const res = await post({ 'x-api-key': key, ...headers }, init);
    await res.text();
    expect(res.status).toBe(200);
    return res.headers.get('mcp-session-id')!;
  };

  beforeAll(async () => {
    server = await startServer({
      env: {
        STRATA_API_KEY: KEY, STRATA__EMBEDDING__PROVIDER: 'hashing',
        STRATA__MCP__MAX_SESSIONS: '8', STRATA__MCP__MAX_SESSIONS_PER_KEY: '3', STRATA__MCP__ALLOWED_ORIGINS: ALLOWED,
      },
    });
    admin = new StrataClient({ baseUrl: server.url, apiKey: KEY });
  });
  afterAll(async () => {
    await admin?.close();
    if (server) {
      expect(await server.stop()).toBe(0);
      removeDir(server.dataDir);
    }
  });

  it("does not let a key opening sessions in a loop close another key's session", async () => {
    const victim = (await admin.createApiKey({ user_ids: ['vic'], role: 'write' })).key;
    const mallory = (await admin.createApiKey({ user_ids: ['mal'], role: 'read' })).key;
    const session = await open(victim);
    const theirs: string[] = [];
    for (let i = 0; i < 30; i++) theirs.push(await open(mallory));
    const still = await post({ 'x-api-key': victim, 'mcp-session-id': session }, list);
    expect(still.status).toBe(200);
    expect(await still.text()).toContain('remember');
    // mallory keeps its newest three; its older ones are gone
    const statuses = [];
    for (const id of theirs) statuses.push((await post({ 'x-api-key': mallory, 'mcp-session-id': id }, list).then(async (r) => (await r.text(), r.status))));
    expect(statuses).toEqual([...Array(27).fill(404), 200, 200, 200]);
  });

  it('refuses a request from an origin not allowed, before its credentials; accepts the allowed one and none', async () => {
    for (const origin of ['http://evil.example', 'null', `${ALLOWED}.evil.example`]) {
      const res = await post({ 'x-api-key': KEY, origin }, init);
      expect([origin, res.status]).toEqual([origin, 403]);
      expect(res.headers.get('mcp-session-id')).toBeNull();
      const anonymous = await post({ origin }, init);
      expect(anonymous.status).toBe(403);
    }
    await open(KEY, { origin: ALLOWED });
    await open(KEY);
  });
});
