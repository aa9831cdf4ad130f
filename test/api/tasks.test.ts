/**
 * Goals and tasks over real HTTP (CONTRACT §8): where they come from (level 3, parent_id by id or by
 * event id, hints), trees per stream and per user, the ready list, and every case of the status route.
 */
import { StrataClient, type GoalTreeView, type L3TaskView } from '@strata/client';
import { removeDir, startServer, type ServerProcess } from '../helpers/server-process';

const KEY = 'tasks-test-admin-key';
const A = '3c9d1f0e-7a2b-4c5d-8e6f-0a1b2c3d4e5f';
const B = '9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b';
const USER = 'omar';

describe('goals and tasks', () => {
  let server: ServerProcess;
  let client: StrataClient;
  let goalEvent: string;
  let taskEvent: string;
  let tree: GoalTreeView[];

  const put = (taskId: string, body: unknown, user = USER) =>
    client.raw<L3TaskView & { code?: string; error?: string }>('PUT', `/v1/users/${user}/tasks/${taskId}/status`, { body });
  const allTasks = (nodes: GoalTreeView['tasks']): L3TaskView[] => nodes.flatMap((n) => [n.task, ...allTasks(n.children)]);

  beforeAll(async () => {
    server = await startServer({ env: { STRATA_API_KEY: KEY, STRATA__CONSOLIDATION__INTERVAL_MS: '50', STRATA__EMBEDDING__PROVIDER: 'hashing' } });
    client = new StrataClient({ baseUrl: server.url, apiKey: KEY });
    goalEvent = (await client.ingest(USER, A, { content: 'Launch the new website', level: 3 })).event_id;
    // A client knows only the event id right after ingest: parent_id may name it.
    taskEvent = (await client.ingest(USER, A, { content: 'Write the landing page copy', parent_id: goalEvent, task_status: 'InProgress', task_progress: 0.5 })).event_id;
    await client.ingest(USER, A, { content: 'Pick a headline', parent_id: taskEvent, task_progress: 0.5 });
    await client.ingest(USER, A, { content: 'Set up hosting', parent_id: goalEvent.toUpperCase(), metadata: { depends_on: [taskEvent] } });
    await client.ingest(USER, A, { content: 'An orphan step', parent_id: 'no-such-parent' });
    await client.ingest(USER, B, { content: 'My goal is to learn Portuguese: 1. buy a textbook 2. find a tutor 3. take the A2 exam' });
    expect((await client.waitUntilReady(30_000, 50)).ready).toBe(true);
    tree = (await client.raw<GoalTreeView[]>('GET', `/v1/users/${USER}/tasks/tree?view=full`)).body;
  });
  afterAll(async () => {
    await client.close();
    expect(await server.stop()).toBe(0);
    removeDir(server.dataDir);
  });

  it('makes goals from level 3 events and text, tasks from parent_id (by event id too), newest goal first', () => {
    expect(tree.map((t) => t.goal.content)).toEqual(['Learn Portuguese', 'Launch the new website']);
    const site = tree[1];
    expect(site.goal).toMatchObject({ stream_id: A, status: 'pending' });
    expect(site.tasks.map((n) => n.task.title)).toEqual(['Write the landing page copy', 'Set up hosting']);
    const copy = site.tasks[0];
    expect(copy.task).toMatchObject({ status: 'in_progress', progress: 0.5, parent_id: site.goal.id, stream_id: A, context_refs: [taskEvent] });
    expect(copy.children.map((n) => n.task.title)).toEqual(['Pick a headline']);
    expect(site.tasks[1].task.dependencies).toEqual([copy.task.task_id]);
    // A parent's progress follows its children: the copy's is its subtask's, the goal's (0.5 + 0) / 2.
    expect(site.goal.progress).toBe(0.25);
    // A parent that names nothing makes nothing.
    expect(allTasks(tree.flatMap((t) => t.tasks)).map((t) => t.title)).not.toContain('An orphan step');
    expect(tree[0].tasks.map((n) => n.task.title)).toEqual(['Buy a textbook', 'Find a tutor', 'Take the A2 exam']);
  });

  it('serves a stream\'s goals only on the stream route', async () => {
    expect((await client.taskTree(USER, A)).map((t) => t.goal.content)).toEqual(['Launch the new website']);
    expect((await client.taskTree(USER, B)).map((t) => t.goal.content)).toEqual(['Learn Portuguese']);
    expect(await client.taskTree('nobody-here', A)).toEqual([]);
    expect((await client.raw('GET', `/v1/users/${USER}/streams/not-a-uuid/tasks/tree`)).status).toBe(400);
  });

  it('lists pending tasks whose dependencies are completed', async () => {
    const ready = (await client.readyTasks(USER)).map((t) => t.title);
    // "Set up hosting" waits for the copy; the Portuguese steps wait in order.
    expect(ready).toEqual(['Pick a headline', 'Buy a textbook']);
  });

  it('answers 404 for an unknown task and 400 for a bad status or progress', async () => {
    expect((await put('0b7c5d2e-1111-4222-8333-444455556666', { status: 'pending' })).body.code).toBe('not_found');
    expect((await put('not-a-task', { status: 'pending' })).status).toBe(404);
    const copy = tree[1].tasks[0].task;
    const bad = await put(copy.task_id, { status: 'sleeping' });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('validation_failed');
    expect((await put(copy.task_id, { status: 'pending', progress: 2 })).status).toBe(400);
    expect((await put(copy.task_id, {})).status).toBe(400);
    expect((await put(copy.task_id, { status: { Blocked: 'x', Failed: 'y' } })).status).toBe(400);
  });

  it('accepts the contract\'s status forms, with a reason', async () => {
    const headline = tree[1].tasks[0].children[0].task;
    const full = (body: unknown) => client.raw<L3TaskView>('PUT', `/v1/users/${USER}/tasks/${headline.task_id}/status?view=full`, { body });
    const blocked = (await full({ status: { Blocked: 'waiting for the brand name' } })).body;
    expect(blocked).toMatchObject({ status: 'blocked', status_reason: 'waiting for the brand name' });
    const going = (await full({ status: 'in-progress', progress: 0.3 })).body;
    expect(going).toMatchObject({ status: 'in_progress', status_reason: null, progress: 0.3 });
  });

  it('completes once: progress 1, parents rolled up, one outcome event; terminal states need reopen', async () => {
    const copy = tree[1].tasks[0].task;
    const done = await client.setTaskStatus(USER, copy.task_id, { status: 'COMPLETED', result_summary: 'Copy approved by marketing' });
    expect(done).toMatchObject({ status: 'completed', progress: 1, result_summary: 'Copy approved by marketing' });
    const site = (await client.taskTree(USER, A))[0];
    expect(site.goal.progress).toBe(0.5);
    const outcome = "Task 'Write the landing page copy' completed: Copy approved by marketing";
    const count = async () => (await client.allEvents(USER, A)).filter((e) => e.content === outcome).length;
    expect(await count()).toBe(1);
    // A retried completion is a no-op; leaving a final state needs reopen.
    expect((await put(copy.task_id, { status: 'completed', result_summary: 'again' })).body).toMatchObject({ status: 'completed', result_summary: 'Copy approved by marketing' });
    const refused = await put(copy.task_id, { status: 'pending' });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('invalid_transition');
    expect(await count()).toBe(1);
    expect((await client.readyTasks(USER)).map((t) => t.title)).toContain('Set up hosting');
    const reopened = await client.setTaskStatus(USER, copy.task_id, { status: 'in_progress', reopen: true });
    expect(reopened).toMatchObject({ status: 'in_progress', progress: 1 });
    const cancelled = await client.setTaskStatus(USER, copy.task_id, { status: 'cancelled' });
    expect(cancelled.status).toBe('cancelled');
    expect((await put(copy.task_id, { status: 'completed' })).status).toBe(409);
  });

  it('nothing completes by itself: a goal whose tasks are all done stays open until told', async () => {
    const [headline, hosting] = [tree[1].tasks[0].children[0].task, tree[1].tasks[1].task];
    // The task named by the event it came from.
    await client.setTaskStatus(USER, headline.task_id, { status: 'completed' });
    const hostingEvent = hosting.context_refs[0];
    expect((await client.setTaskStatus(USER, hostingEvent, { status: 'done' })).task_id).toBe(hosting.task_id);
    const site = (await client.taskTree(USER, A))[0];
    expect(site.goal.status).toBe('pending');
    expect(site.tasks.every((n) => ['completed', 'cancelled'].includes(n.task.status))).toBe(true);
  });

  it('needs the write role to change a status', async () => {
    const reader = await client.createApiKey({ role: 'read' });
    const readOnly = new StrataClient({ baseUrl: server.url, apiKey: reader.key });
    try {
      expect((await readOnly.raw('GET', `/v1/users/${USER}/tasks/ready`)).status).toBe(200);
      const res = await readOnly.raw('PUT', `/v1/users/${USER}/tasks/${tree[0].tasks[0].task.task_id}/status`, { body: { status: 'completed' } });
      expect(res.status).toBe(403);
    } finally {
      await readOnly.close();
    }
  });
  it('answers tasks with exactly the contract\'s keys, and stream_id and status_reason only with ?view=full', async () => {
    const CONTRACT_KEYS = ['agent_id', 'context_refs', 'created_at', 'dependencies', 'description', 'org_id', 'parent_id', 'progress',
      'result_summary', 'status', 'task_id', 'title', 'updated_at', 'user_id'];
    const FULL_KEYS = [...CONTRACT_KEYS, 'status_reason', 'stream_id'].sort();
    const GOAL_KEYS = ['content', 'id', 'progress', 'status', 'stream_id', 'transaction_time'];
    const tasksOf = (nodes: { task: object; children: unknown[] }[]): object[] =>
      nodes.flatMap((n) => [n.task, ...tasksOf(n.children as { task: object; children: unknown[] }[])]);
    const keysOf = (o: object) => Object.keys(o).sort();
    for (const [suffix, keys] of [['', CONTRACT_KEYS], ['?view=full', FULL_KEYS]] as const) {
      for (const path of [`/v1/users/${USER}/tasks/tree${suffix}`, `/v1/users/${USER}/streams/${A}/tasks/tree${suffix}`]) {
        const trees = (await client.raw<{ goal: object; tasks: { task: object; children: unknown[] }[] }[]>('GET', path)).body;
        expect(trees.length).toBeGreaterThan(0);
        for (const t of trees) {
          expect(keysOf(t)).toEqual(['goal', 'tasks']);
          expect(keysOf(t.goal)).toEqual(GOAL_KEYS);
          for (const task of tasksOf(t.tasks)) expect([path, keysOf(task)]).toEqual([path, keys]);
        }
      }
      const ready = (await client.raw<object[]>('GET', `/v1/users/${USER}/tasks/ready${suffix}`)).body;
      expect(ready.length).toBeGreaterThan(0);
      for (const task of ready) expect(keysOf(task)).toEqual(keys);
      const id = (ready[0] as { task_id: string }).task_id;
      const updated = await client.raw<object>('PUT', `/v1/users/${USER}/tasks/${id}/status${suffix}`, { body: { status: 'pending' } });
      expect(keysOf(updated.body)).toEqual(keys);
    }
    const bad = await client.raw<{ code: string }>('GET', `/v1/users/${USER}/tasks/ready?view=everything`);
    expect([bad.status, bad.body.code]).toEqual([400, 'validation_failed']);
  });
});
