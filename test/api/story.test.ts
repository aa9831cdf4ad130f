/**
 * The story of issue 7 over real HTTP, as an agent would live it: a goal said in plain text becomes a
 * task tree; completing its first step makes the next one ready and leaves the outcome in the stream;
 * "Forget my old address" previews exactly the old address (never the one the user lives at now) and,
 * once executed, it leaves the user's memory and retrieval: a question about before finds it until
 * then, never after.
 */
import { StrataClient, type GoalTreeView } from '@strata/client';
import { removeDir, startServer, type ServerProcess } from '../helpers/server-process';

const KEY = 'story-test-admin-key';
const STREAM = '7a0f3c1e-5b2d-4c8e-9f1a-2d3b4c5e6f70';
const USER = 'lena';

interface UnitView { id: string; content: string; level: number; retired_at: string | null }

describe('story: a plan becomes tasks, completion sediments, forgetting an old address', () => {
  let server: ServerProcess;
  let client: StrataClient;

  const memories = async (query = 'limit=1000') =>
    (await client.raw<{ memories: UnitView[] }>('GET', `/v1/users/${USER}/memories?${query}`)).body.memories;

  /** Insights are planned right after the backlog drains: wait for that round to finish (bounded). */
  const l2Settled = async () => {
    const settled = () => server.output().lastIndexOf('"msg":"L2 planning done"') > server.output().lastIndexOf('"msg":"consolidation caught up"');
    for (let i = 0; i < 100 && !settled(); i++) await new Promise((r) => setTimeout(r, 50));
  };

  beforeAll(async () => {
    server = await startServer({ env: { STRATA_API_KEY: KEY, STRATA__CONSOLIDATION__INTERVAL_MS: '50' } });
    client = new StrataClient({ baseUrl: server.url, apiKey: KEY });
  });
  afterAll(async () => {
    await client.close();
    expect(await server.stop()).toBe(0);
    removeDir(server.dataDir);
  });

  let tree: GoalTreeView[];

  it('turns a goal with three ordered steps into a tree whose first step alone is ready', async () => {
    await client.ingest(USER, STREAM, {
      content: 'My goal is to move to Berlin. First I need to find an apartment, then sign up at a climbing gym, and finally open a bank account.',
    });
    expect((await client.waitUntilReady(30_000, 50)).ready).toBe(true);
    tree = await client.taskTree(USER, STREAM);
    expect(tree).toHaveLength(1);
    expect(tree[0].goal).toMatchObject({ content: 'Move to Berlin', status: 'pending', progress: 0, stream_id: STREAM });
    expect(tree[0].tasks.map((n) => n.task.title)).toEqual(['Find an apartment', 'Sign up at a climbing gym', 'Open a bank account']);
    const [first, second, third] = tree[0].tasks.map((n) => n.task);
    expect(second.dependencies).toEqual([first.task_id]);
    expect(third.dependencies).toEqual([second.task_id]);
    expect((await client.readyTasks(USER)).map((t) => t.task_id)).toEqual([first.task_id]);
    // The same tree over all the user's streams.
    expect(await client.taskTree(USER)).toEqual(tree);
  });

  it('completing the first step makes the second ready, rolls up progress and puts the outcome in the stream', async () => {
    const [first, second] = tree[0].tasks.map((n) => n.task);
    const done = await client.setTaskStatus(USER, first.task_id, { status: 'Completed', result_summary: 'Signed a lease in Kreuzberg' });
    expect(done).toMatchObject({ task_id: first.task_id, status: 'completed', progress: 1, result_summary: 'Signed a lease in Kreuzberg' });
    expect((await client.readyTasks(USER)).map((t) => t.task_id)).toEqual([second.task_id]);
    const after = await client.taskTree(USER, STREAM);
    expect(after[0].goal.progress).toBeCloseTo(1 / 3, 4);
    expect(after[0].goal.status).toBe('pending');
    const events = await client.allEvents(USER, STREAM);
    expect(events.map((e) => e.content)).toContain("Task 'Find an apartment' completed: Signed a lease in Kreuzberg");
    // The outcome is consolidated like any other event.
    expect((await client.waitUntilReady(30_000, 50)).ready).toBe(true);
    expect((await memories()).some((u) => u.content.includes('Signed a lease in Kreuzberg'))).toBe(true);
  });

  it('"Forget my old address" previews exactly the old address memories and, executed, removes them', async () => {
    await client.ingest(USER, STREAM, { content: 'I live at 12 Oak Street, Springfield.' });
    await client.ingest(USER, STREAM, { content: 'My favourite food is ramen.' });
    await client.ingest(USER, STREAM, { content: 'I moved to 5 Linden Avenue, Berlin.' });
    expect((await client.waitUntilReady(30_000, 50)).ready).toBe(true);
    await l2Settled();
    const before = await memories('include_retired=true&limit=1000');
    // The old address: the superseded L1 fact, and any insight that quotes it; the current one stays.
    const address = before.filter((u) => /Oak Street/.test(u.content)).map((u) => u.id).sort();
    expect(before.filter((u) => u.level === 1 && /Oak Street|Linden Avenue/.test(u.content))).toHaveLength(2);
    const linden = before.find((u) => u.level === 1 && /Linden Avenue/.test(u.content))!;

    const preview = await client.semanticPreview(USER, { instruction: 'Forget my old address' });
    expect(preview.kind).toBe('forget');
    expect(preview.forget_preview!.memory_units.map((u) => u.id).sort()).toEqual(address);
    // The preview changes nothing.
    expect(await memories('include_retired=true&limit=1000')).toEqual(before);

    // A question about before finds the superseded address until it is forgotten.
    const historyBefore = await client.retrieve(USER, STREAM, { query: 'Where did I live before? address street', limit: 20 });
    const executed = await client.semanticExecute(USER, { plan_id: preview.plan_id, confirm: true });
    expect(executed).toMatchObject({ status: 'executed', plan_id: preview.plan_id, kind: 'forget' });
    expect(executed.affected_unit_ids.sort()).toEqual(address);
    const current = (await memories()).map((u) => u.id);
    for (const id of address) expect(current).not.toContain(id);
    expect(current).toContain(linden.id);
    // The address the user lives at now is still what memory answers.
    const where = await client.retrieve(USER, STREAM, { query: 'Where do I live now?', limit: 5 });
    expect(where.results[0].unit.id).toBe(linden.id);

    const now = await client.retrieve(USER, STREAM, { query: 'Where did I live before? address street', limit: 20 });
    for (const id of address) expect(now.results.map((r) => r.unit.id)).not.toContain(id);
    expect(historyBefore.results.map((r) => r.unit.id).some((id) => address.includes(id))).toBe(true);
  });
});
