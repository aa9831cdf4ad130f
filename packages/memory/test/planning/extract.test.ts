import type { Goal, L3Task } from '@strata/store';
import type { ChatMessage, Llm } from '../../src/providers/types';
import {
  applyStatusUpdate, buildTaskTrees, extractTextPlanWithLlm, parseLlmPlan, planFromEvent, planFromEventWithLlm,
  readyTasks, recomputeAncestors, type ParentRef,
} from '../../src/planning';
import { event, goal, idCounter, NOW, task } from './fixtures';

const noParent = (): ParentRef | null => null;

/** A fake Llm that replies with the given texts in turn (or rejects) and records what it was asked. */
class FakeLlm implements Llm {
  readonly id = 'fake';
  readonly calls: ChatMessage[][] = [];
  constructor(private readonly replies: (string | Error)[]) {}
  async complete(messages: ChatMessage[]): Promise<string> {
    this.calls.push(messages);
    const r = this.replies.shift();
    if (r === undefined || r instanceof Error) throw r ?? new Error('no reply');
    return r;
  }
}

describe('planFromEvent: the Berlin plan, end to end', () => {
  const ev = event({ event_id: 'ev-berlin', content: 'My goal is to move to Berlin. 1. Find an apartment 2. Register the address 3. Open a bank account' });
  const plan = planFromEvent(ev, { newId: idCounter(), now: NOW, resolveParent: noParent });

  it('makes one goal and three chained tasks', () => {
    expect(plan.source).toBe('text');
    expect(plan.unresolved_parent_id).toBeNull();
    expect(plan.goals).toEqual([{
      id: 'id-1', user_id: 'u1', stream_id: 's1', content: 'Move to Berlin', status: 'pending', progress: 0,
      source_event_id: 'ev-berlin', transaction_time: NOW,
    }]);
    expect(plan.tasks.map((t) => [t.task_id, t.title, t.parent_id, t.dependencies, t.created_at])).toEqual([
      ['id-2', 'Find an apartment', 'id-1', [], '2025-03-01T10:00:00.001Z'],
      ['id-3', 'Register the address', 'id-1', ['id-2'], '2025-03-01T10:00:00.002Z'],
      ['id-4', 'Open a bank account', 'id-1', ['id-3'], '2025-03-01T10:00:00.003Z'],
    ]);
    expect(plan.tasks[0]).toMatchObject({ user_id: 'u1', stream_id: 's1', status: 'pending', progress: 0, context_refs: ['ev-berlin'], result_summary: null });
  });

  it('has only the first task ready; completing it readies the second and sediments', () => {
    let tasks: L3Task[] = plan.tasks;
    let goals: Goal[] = plan.goals;
    expect(readyTasks(tasks).map((t) => t.title)).toEqual(['Find an apartment']);
    const later = '2025-03-05T09:00:00.000Z';
    const r = applyStatusUpdate(tasks[0], { status: 'Completed', result_summary: 'Found a flat in Kreuzberg' }, later);
    expect(r.completedNow).toBe(true);
    expect(r.sedimentText).toBe("Task 'Find an apartment' completed: Found a flat in Kreuzberg");
    const progress = recomputeAncestors(r.task, tasks, goals, later);
    tasks = tasks.map((t) => (t.task_id === r.task.task_id ? r.task : t));
    goals = goals.map((g) => progress.goals.find((p) => p.id === g.id) ?? g);
    expect(goals[0]).toMatchObject({ progress: 0.3333, status: 'pending' });
    expect(readyTasks(tasks).map((t) => t.title)).toEqual(['Register the address']);
    const tree = buildTaskTrees(goals, tasks);
    expect(tree[0].tasks.map((n) => [n.task.title, n.task.status])).toEqual([
      ['Find an apartment', 'completed'], ['Register the address', 'pending'], ['Open a bank account', 'pending'],
    ]);
  });
});

describe('planFromEvent: level 3 and parent_id events', () => {
  it('makes a goal of a level-3 event, with its first line as content when no statement', () => {
    const p = planFromEvent(event({ level: 3, content: 'Learn Spanish\nbefore the summer' }), { newId: idCounter(), now: NOW, resolveParent: noParent });
    expect(p.source).toBe('goal_event');
    expect(p.goals.map((g) => g.content)).toEqual(['Learn Spanish']);
    expect(p.tasks).toEqual([]);
  });

  it('makes a task under a goal named by its id or by its source event id', () => {
    const g = goal({ id: 'g-42', source_event_id: 'ev-goal' });
    const resolve = (id: string): ParentRef | null => (id === 'g-42' || id === 'ev-goal' ? { kind: 'goal', goal: g } : null);
    for (const parentId of ['g-42', 'ev-goal']) {
      const p = planFromEvent(event({ event_id: 'ev-t', parent_id: parentId, content: 'Book the flights.', task_status: 'InProgress', task_progress: 0.25, agent_id: 'agent-7' }), { newId: idCounter('t'), now: NOW, resolveParent: resolve });
      expect(p.source).toBe('task_event');
      expect(p.tasks).toEqual([{
        task_id: 't-1', user_id: 'u1', org_id: null, agent_id: 'agent-7', stream_id: 's1', parent_id: 'g-42',
        title: 'Book the flights', description: 'Book the flights.', status: 'in_progress', status_reason: null,
        progress: 0.25, dependencies: [], context_refs: ['ev-t'], created_at: NOW, updated_at: NOW, result_summary: null,
      }]);
    }
  });

  it('reads the status hint forms, clamps progress, and defaults unreadable hints to pending', () => {
    const g = goal();
    const resolve = (): ParentRef => ({ kind: 'goal', goal: g });
    const mk = (task_status: string | null, task_progress: number | null): L3Task => planFromEvent(
      event({ parent_id: 'g1', content: 'x', task_status, task_progress }), { newId: idCounter(), now: NOW, resolveParent: resolve }).tasks[0];
    expect(mk('completed', 0.2)).toMatchObject({ status: 'completed', progress: 1 });
    expect(mk('in-progress', 7)).toMatchObject({ status: 'in_progress', progress: 1 });
    expect(mk('sort of done', null)).toMatchObject({ status: 'pending', progress: 0 });
  });

  it('puts steps of a task event under that task, and resolves explicit dependencies', () => {
    const parent = task({ task_id: 'tp', parent_id: 'g1' });
    const other = task({ task_id: 'tx', parent_id: 'g1' });
    const resolve = (id: string): ParentRef | null => (id === 'tp' ? { kind: 'task', task: parent } : id === 'ev-x' ? { kind: 'task', task: other } : null);
    const p = planFromEvent(event({ parent_id: 'tp', content: 'Prepare documents: 1. Passport photos 2. Visa form', metadata: { depends_on: ['ev-x', 'nope', 3] } }), { newId: idCounter(), now: NOW, resolveParent: resolve });
    expect(p.tasks.map((t) => [t.task_id, t.title, t.parent_id, t.dependencies])).toEqual([
      ['id-1', 'Prepare documents', 'tp', ['tx']],
      ['id-2', 'Passport photos', 'id-1', []],
      ['id-3', 'Visa form', 'id-1', ['id-2']],
    ]);
  });

  it('reports an unresolved parent and creates nothing', () => {
    const p = planFromEvent(event({ parent_id: 'ghost', content: 'Do the thing' }), { newId: idCounter(), now: NOW, resolveParent: noParent });
    expect(p).toEqual({ goals: [], tasks: [], unresolved_parent_id: 'ghost', source: 'none' });
  });

  it('ignores non-text events, plain chat, and weak goal statements without steps', () => {
    const ctx = { newId: idCounter(), now: NOW, resolveParent: noParent };
    expect(planFromEvent(event({ content_type: 'image', level: 3, content: 'https://x/y.png' }), ctx).source).toBe('none');
    expect(planFromEvent(event({ content: 'I want to eat pizza tonight.' }), ctx).goals).toEqual([]);
    expect(planFromEvent(event({ content: 'Groceries: 1. milk 2. eggs' }), ctx).tasks).toEqual([]);
    expect(planFromEvent(event({ content: 'My goal is to read 20 books this year.' }), ctx).goals.map((g) => g.content)).toEqual(['Read 20 books this year']);
  });
});

describe('LLM planner', () => {
  const text = 'I should sort out the move somehow, flat first and then the paperwork.';

  it('uses a well-formed JSON reply (fenced, 1-based depends_on, missing key = previous step)', async () => {
    const llm = new FakeLlm(['Sure!\n```json\n{"goal": "Move house", "steps": [{"title": "Find a flat", "depends_on": []}, {"title": "1. Do the paperwork."}, {"title": "Party", "depends_on": [1, 2, 9, 3]}]}\n```']);
    const r = await extractTextPlanWithLlm(llm, text);
    expect(r.source).toBe('llm');
    expect(r.plan).toEqual({ goal: 'Move house', goal_explicit: true, steps: [
      { title: 'Find a flat', description: 'Find a flat', depends_on: [] },
      { title: 'Do the paperwork', description: '1. Do the paperwork.', depends_on: [0] },
      { title: 'Party', description: 'Party', depends_on: [0, 1] },
    ] });
    expect(llm.calls[0][0].role).toBe('system');
    expect(llm.calls[0][1]).toEqual({ role: 'user', content: text });
  });

  it.each([
    ['not json at all'], ['{"goal": 3, "steps": []}'], ['{"goal": "x", "steps": {"title": "a"}}'],
    ['{"goal": "x", "steps": [{"title": ""}]}'], ['{"goal": "x", "steps": [{"title": "a", "depends_on": "1"}]}'], ['[1, 2]'],
  ])('falls back offline on a malformed reply: %s', async (reply) => {
    expect(parseLlmPlan(reply)).toBeUndefined();
    const r = await extractTextPlanWithLlm(new FakeLlm([reply]), 'Goal: tidy up. 1. Desk 2. Shelf');
    expect(r.source).toBe('offline');
    expect(r.plan?.steps.map((s) => s.title)).toEqual(['Desk', 'Shelf']);
  });

  it('falls back offline when the LLM rejects, and accepts an explicit "no plan"', async () => {
    expect((await extractTextPlanWithLlm(new FakeLlm([new Error('timeout')]), 'Goal: a. 1. b 2. c')).source).toBe('offline');
    expect(parseLlmPlan('{"goal": null, "steps": []}')).toBeNull();
    expect(parseLlmPlan('{"steps": [{"title": "a", "depends_on": [2]}, {"title": "b", "depends_on": [1]}]}')?.steps.map((s) => s.depends_on)).toEqual([[1], []]);
  });

  it('plans an event with the LLM only when it may hold a plan', async () => {
    const llm = new FakeLlm(['{"goal": "Move house", "steps": [{"title": "Find a flat", "depends_on": []}, {"title": "Do the paperwork", "depends_on": [1]}]}']);
    const chat = await planFromEventWithLlm(event({ content: 'Nice weather today.' }), { newId: idCounter(), now: NOW, resolveParent: noParent, llm });
    expect(chat).toMatchObject({ source: 'none', planner: 'offline' });
    expect(llm.calls).toHaveLength(0);
    const p = await planFromEventWithLlm(event({ level: 3, content: text }), { newId: idCounter(), now: NOW, resolveParent: noParent, llm });
    expect(p.planner).toBe('llm');
    expect(p.goals.map((g) => g.content)).toEqual(['Move house']);
    expect(p.tasks.map((t) => [t.title, t.dependencies])).toEqual([['Find a flat', []], ['Do the paperwork', ['id-2']]]);
  });
});
