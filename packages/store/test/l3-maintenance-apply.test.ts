import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  StateDb, StateMachine, edgesOfUnit, getEvent, getSemanticPlan, getTask, getUnit, getUnitVector, isApplyFailure, l3SourceOfEvent,
  listGoals, listTasks, listUserEdges, orgUnitsOf, pendingOfUser, unitsBySubjectAttribute,
  type Command, type ConsolidateCommand, type Edge, type Goal, type IngestCommand, type L3PlanAnswer, type L3Task, type MemoryDeleteAnswer,
  type MemoryUnit, type ProposedEvent, type SemanticExecuteAnswer, type SemanticExecuteCommand, type SemanticPlanRecord, type TaskStatusAnswer,
} from '../src';

const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-01T01:00:00.000Z';
const T2 = '2026-01-01T02:00:00.000Z';
const LATER = '2026-01-02T00:00:00.000Z';

function event(user: string, stream: string, id: string, extra: Partial<ProposedEvent> = {}): ProposedEvent {
  return {
    event_id: id, user_id: user, stream_id: stream, content: `content ${id}`, content_type: 'text', org_id: null, agent_id: null, role: null,
    level: null, parent_id: null, task_status: null, task_progress: null, valid_time: T0, transaction_time: T0, metadata: null, assets: [], ...extra,
  };
}

function ingest(user: string, stream: string, ids: string[]): IngestCommand {
  return { type: 'events.ingest', user_id: user, stream_id: stream, at: T0, idempotency: null, events: ids.map((id) => event(user, stream, id)), assets: [] };
}

function unit(user: string, id: string, extra: Partial<MemoryUnit> = {}): MemoryUnit {
  return {
    id, user_id: user, stream_id: 's1', org_id: null, agent_id: null, level: 1, memory_type: 'factual', content: `unit ${id}`, keywords: [id],
    speaker: 'user', valid_time: T0, transaction_time: T1, references: [], assets: [], importance: 0.5, subject: null, attribute: null,
    retired_at: null, retired_reason: null, superseded_by: null, ...extra,
  };
}

const edge = (user: string, id: string, source: string, target: string): Edge =>
  ({ edge_id: id, user_id: user, source_id: source, target_id: target, relation: 'RelatedTo', weight: 0.5, created_at: T1 });

/** Units (with vectors and edges) written through consolidation of the given pending events. */
async function withUnits(node: Node, user: string, units: MemoryUnit[], edges: Edge[] = []): Promise<void> {
  const ids = units.map((u) => `ev-${u.id}`);
  await node.run(ingest(user, 's1', ids));
  const pending = await pendingOfUser(node.db, user, 100);
  const consumed = pending.filter((p) => ids.includes(p.event_id)).map((p) => ({ seq: p.seq, event_id: p.event_id }));
  const cmd: ConsolidateCommand = {
    type: 'memory.consolidate', user_id: user, at: T1, consumed, embedder_id: 'e', method: 'offline',
    units: units.map((u) => ({ unit: { ...u, references: [`ev-${u.id}`] }, vector: [1, 0, 0] })), reinforced: [], retired: [], edges, dropped: [],
  };
  expect(await node.run(cmd)).toMatchObject({ applied: true });
}

const goal = (user: string, id: string, extra: Partial<Goal> = {}): Goal =>
  ({ id, user_id: user, stream_id: 's1', content: `goal ${id}`, status: 'pending', progress: 0, source_event_id: `ev-${id}`, transaction_time: T1, ...extra });

function task(user: string, id: string, parent: string | null, extra: Partial<L3Task> = {}): L3Task {
  return {
    task_id: id, user_id: user, org_id: null, agent_id: null, stream_id: 's1', parent_id: parent, title: `task ${id}`, description: '',
    status: 'pending', status_reason: null, progress: 0, dependencies: [], context_refs: [], created_at: T1, updated_at: T1, result_summary: null, ...extra,
  };
}

interface Node { db: StateDb; sm: StateMachine; run(command: Command): Promise<unknown>; close(): Promise<void> }

/** A state machine fed directly, one command after the other (these tests are about apply, not the log). */
async function openNode(dir: string): Promise<Node> {
  const db = await StateDb.open(join(dir, 'state'));
  const sm = await StateMachine.open(db);
  return { db, sm, run: (command) => sm.apply(sm.appliedIndex() + 1, command), close: () => db.close() };
}

async function dump(db: StateDb): Promise<[string, unknown][]> {
  const out: [string, unknown][] = [];
  for await (const [k, v] of db.level.iterator()) if (!k.includes('applied_')) out.push([k, v]);
  return out;
}

describe('apply of L3, edges, deletes and semantic plans', () => {
  let dir: string;
  let node: Node;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-l3-'));
    node = await openNode(dir);
  });
  afterEach(async () => {
    await node.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('l3.plan writes goals, tasks and the event each came from; a replanned event is stale and writes nothing', async () => {
    const plan: Command = {
      type: 'l3.plan', user_id: 'u', at: T1, planner: 'offline', updates: [],
      events: [{ event_id: 'e1', goals: [goal('u', 'g1')], tasks: [task('u', 't1', 'g1'), task('u', 't2', 'g1', { dependencies: ['t1'] })] }],
    };
    expect(await node.run(plan)).toEqual({ applied: true, stale: null, goals_created: 1, tasks_created: 2, updated: 0 });
    expect((await listGoals(node.db, 'u')).map((g) => g.id)).toEqual(['g1']);
    expect((await listTasks(node.db, 'u')).map((t) => t.task_id)).toEqual(['t1', 't2']);
    expect(await l3SourceOfEvent(node.db, 'u', 'e1')).toEqual({ kind: 'goal', id: 'g1' });
    const before = await dump(node.db);
    const again = { ...plan, events: [{ event_id: 'e1', goals: [goal('u', 'g9')], tasks: [] }] } as Command;
    expect(await node.run(again)).toMatchObject({ applied: false, stale: 'event e1 was planned already' });
    expect(await dump(node.db)).toEqual(before);
    expect(await node.db.counter('tasks')).toBe(2);
  });

  it('l3.plan updates an existing goal only from the version it read', async () => {
    await node.run({ type: 'l3.plan', user_id: 'u', at: T1, planner: 'offline', updates: [], events: [{ event_id: 'e1', goals: [goal('u', 'g1')], tasks: [] }] });
    const child = task('u', 't1', 'g1', { progress: 0.5, status: 'in_progress' });
    const ok = await node.run({
      type: 'l3.plan', user_id: 'u', at: T2, planner: 'offline',
      events: [{ event_id: 'e2', goals: [], tasks: [child] }],
      updates: [{ kind: 'goal', before: goal('u', 'g1'), after: goal('u', 'g1', { progress: 0.5 }) }],
    }) as L3PlanAnswer;
    expect(ok).toMatchObject({ applied: true, tasks_created: 1, updated: 1 });
    expect((await listGoals(node.db, 'u'))[0].progress).toBe(0.5);
    const stale = await node.run({
      type: 'l3.plan', user_id: 'u', at: T2, planner: 'offline', events: [{ event_id: 'e3', goals: [], tasks: [task('u', 't3', 'g1')] }],
      updates: [{ kind: 'goal', before: goal('u', 'g1'), after: goal('u', 'g1', { progress: 0.25 }) }],
    }) as L3PlanAnswer;
    expect(stale).toMatchObject({ applied: false, stale: 'goal g1 changed since it was read' });
    expect(await getTask(node.db, 'u', 't3')).toBeUndefined();
  });

  it('l3.task_status writes the task and its parent and sediments the outcome through the ingest path', async () => {
    await node.run({ type: 'l3.plan', user_id: 'u', at: T1, planner: 'offline', updates: [], events: [{ event_id: 'e1', goals: [goal('u', 'g1')], tasks: [task('u', 't1', 'g1'), task('u', 't2', 'g1')] }] });
    const done = task('u', 't1', 'g1', { status: 'completed', progress: 1, updated_at: T2, result_summary: 'booked' });
    const outcome = event('u', 's1', 'out-1', { content: "Task 'task t1' completed: booked", transaction_time: T2, valid_time: T2 });
    const answer = await node.run({
      type: 'l3.task_status', user_id: 'u', at: T2, task_id: 't1', sediment: outcome,
      updates: [{ kind: 'task', before: task('u', 't1', 'g1'), after: done }, { kind: 'goal', before: goal('u', 'g1'), after: goal('u', 'g1', { progress: 0.5 }) }],
    }) as TaskStatusAnswer;
    expect(answer).toEqual({ applied: true, stale: null, task: done, sediment_event_id: 'out-1' });
    expect((await getTask(node.db, 'u', 't1'))?.status).toBe('completed');
    expect((await listGoals(node.db, 'u'))[0].progress).toBe(0.5);
    expect((await getEvent(node.db, 'u', 'out-1'))?.content).toBe("Task 'task t1' completed: booked");
    expect((await pendingOfUser(node.db, 'u', 10)).map((p) => p.event_id)).toEqual(['out-1']);
    expect(await node.db.counter('pending')).toBe(1);

    // The same update again, from the old version: stale, nothing written (no second outcome).
    const again = await node.run({
      type: 'l3.task_status', user_id: 'u', at: T2, task_id: 't1', sediment: { ...outcome, event_id: 'out-2' },
      updates: [{ kind: 'task', before: task('u', 't1', 'g1'), after: done }],
    }) as TaskStatusAnswer;
    expect(again).toMatchObject({ applied: false, stale: 'task t1 changed since it was read', sediment_event_id: null });
    expect(await getEvent(node.db, 'u', 'out-2')).toBeUndefined();

    const missing = await node.run({ type: 'l3.task_status', user_id: 'u', at: T2, task_id: 'nope', sediment: null, updates: [{ kind: 'task', before: task('u', 'nope', null), after: task('u', 'nope', null) }] });
    expect(isApplyFailure(missing) && missing.error.status).toBe(404);
  });

  it('graph.add_edge joins two units of the user, else 404 and nothing written', async () => {
    await withUnits(node, 'u', [unit('u', 'a'), unit('u', 'b')]);
    await withUnits(node, 'v', [unit('v', 'x')]);
    expect(await node.run({ type: 'graph.add_edge', user_id: 'u', edge: edge('u', 'ed1', 'a', 'b') })).toEqual({ edge_id: 'ed1' });
    expect((await edgesOfUnit(node.db, 'u', 'b')).map((e) => [e.edge_id, e.other_id, e.out])).toEqual([['ed1', 'a', false]]);
    const other = await node.run({ type: 'graph.add_edge', user_id: 'u', edge: edge('u', 'ed2', 'a', 'x') });
    expect(isApplyFailure(other) && other.error).toMatchObject({ status: 404, code: 'not_found' });
    expect(await listUserEdges(node.db, 'u')).toHaveLength(1);
    expect(await node.db.counter('edges')).toBe(1);
  });

  it('memory.delete removes a unit from every sublevel, with its edges both ways and (cascade) its events', async () => {
    await withUnits(node, 'u', [
      unit('u', 'a', { subject: 'user', attribute: 'residence', org_id: 'acme' }), unit('u', 'b'), unit('u', 'c'),
    ], [edge('u', 'ab', 'a', 'b'), edge('u', 'ca', 'c', 'a'), edge('u', 'bc', 'b', 'c')]);
    expect(await orgUnitsOf(node.db, 'acme')).toHaveLength(1);
    const refused = await node.run({ type: 'memory.delete', user_id: 'u', at: T2, unit_ids: ['a', 'ghost'], event_ids: [], require_units: true });
    expect(isApplyFailure(refused) && refused.error.status).toBe(404);
    expect(await getUnit(node.db, 'u', 'a')).toBeDefined();

    const answer = await node.run({ type: 'memory.delete', user_id: 'u', at: T2, unit_ids: ['a'], event_ids: ['ev-a'], require_units: true }) as MemoryDeleteAnswer;
    expect(answer).toEqual({ deleted_unit_ids: ['a'], deleted_event_ids: ['ev-a'], deleted_edge_ids: ['ab', 'ca'] });
    expect(await getUnit(node.db, 'u', 'a')).toBeUndefined();
    expect(await getUnitVector(node.db, 'u', 'a')).toBeUndefined();
    expect(await unitsBySubjectAttribute(node.db, 'u', 'user', 'residence')).toEqual([]);
    expect(await orgUnitsOf(node.db, 'acme')).toEqual([]);
    expect((await listUserEdges(node.db, 'u')).map((e) => e.edge_id)).toEqual(['bc']);
    expect((await edgesOfUnit(node.db, 'u', 'b')).map((e) => e.edge_id)).toEqual(['bc']);
    expect((await edgesOfUnit(node.db, 'u', 'c')).map((e) => e.edge_id)).toEqual(['bc']);
    expect(await edgesOfUnit(node.db, 'u', 'a')).toEqual([]);
    expect(await getEvent(node.db, 'u', 'ev-a')).toBeUndefined();
    expect({ units: await node.db.counter('units'), edges: await node.db.counter('edges'), events: await node.db.counter('events') }).toEqual({ units: 2, edges: 1, events: 2 });
  });

  it('semantic plans: stored at preview, executed once, 403 for another user, 404 when expired; expired plans are pruned', async () => {
    await withUnits(node, 'u', [unit('u', 'a', { subject: 'user', attribute: 'residence' }), unit('u', 'b')]);
    const record = (id: string, user = 'u', at = T1): SemanticPlanRecord =>
      ({ plan_id: id, user_id: user, org_id: null, created_at: at, expires_at: new Date(Date.parse(at) + 15 * 60_000).toISOString(), plan: { kind: 'forget' } });
    await node.run({ type: 'semantic.plan', at: T1, record: record('p1') });
    await node.run({ type: 'semantic.plan', at: T1, record: record('p-old') });
    const execute = (planId: string, user = 'u', at = T1): SemanticExecuteCommand => ({
      type: 'semantic.execute', user_id: user, at, plan_id: planId, embedder_id: 'e', create: null, edges: [], delete_unit_ids: [], delete_event_ids: [],
      retire: [{ unit_id: 'a', retired_at: at, retired_reason: 'forgotten', superseded_by: null }],
    });
    const foreign = await node.run(execute('p1', 'v'));
    expect(isApplyFailure(foreign) && foreign.error.status).toBe(403);
    const ok = await node.run(execute('p1')) as SemanticExecuteAnswer;
    expect(ok).toMatchObject({ retired_unit_ids: ['a'], deleted_unit_ids: [], created_unit_ids: [] });
    expect(await getUnit(node.db, 'u', 'a')).toMatchObject({ retired_at: T1, retired_reason: 'forgotten' });
    const twice = await node.run(execute('p1'));
    expect(isApplyFailure(twice) && twice.error.status).toBe(404);
    const expired = await node.run(execute('p-old', 'u', LATER));
    expect(isApplyFailure(expired) && expired.error.status).toBe(404);
    // A preview made later prunes what expired before it.
    expect(await node.run({ type: 'semantic.plan', at: LATER, record: record('p2', 'u', LATER) })).toEqual({ plan_id: 'p2', pruned: 1 });
    expect(await getSemanticPlan(node.db, 'p-old')).toBeUndefined();

    // Hard forgetting deletes the unit and its source event.
    await node.run({ type: 'semantic.plan', at: LATER, record: record('p3', 'u', LATER) });
    const hard = await node.run({ ...execute('p3', 'u', LATER), retire: [], delete_unit_ids: ['b'], delete_event_ids: ['ev-b'] }) as SemanticExecuteAnswer;
    expect(hard).toMatchObject({ deleted_unit_ids: ['b'], deleted_event_ids: ['ev-b'] });
    expect(await getUnit(node.db, 'u', 'b')).toBeUndefined();
  });

  it('semantic.execute never leaves an edge to a unit the same command deletes', async () => {
    await withUnits(node, 'u', [unit('u', 'a'), unit('u', 'b'), unit('u', 'c')]);
    const at = T1;
    await node.run({ type: 'semantic.plan', at, record: { plan_id: 'p', user_id: 'u', org_id: null, created_at: at, expires_at: LATER, plan: { kind: 'forget' } } });
    const answer = await node.run({
      type: 'semantic.execute', user_id: 'u', at, plan_id: 'p', embedder_id: 'e', create: null, retire: [],
      edges: [edge('u', 'ab', 'a', 'b'), edge('u', 'bc', 'b', 'c')], delete_unit_ids: ['a'], delete_event_ids: [],
    }) as SemanticExecuteAnswer;
    expect(answer).toMatchObject({ deleted_unit_ids: ['a'], edges: 1 });
    expect((await listUserEdges(node.db, 'u')).map((e) => e.edge_id)).toEqual(['bc']);
    expect(await edgesOfUnit(node.db, 'u', 'b')).toHaveLength(1);
    expect(await node.db.counter('edges')).toBe(1);
  });

  it('replays to the same state on another replica', async () => {
    const commands: Command[] = [];
    node.sm.onApplied((_index, command) => commands.push(command));
    await withUnits(node, 'u', [unit('u', 'a'), unit('u', 'b')], [edge('u', 'ab', 'a', 'b')]);
    await node.run({ type: 'l3.plan', user_id: 'u', at: T1, planner: 'offline', updates: [], events: [{ event_id: 'e1', goals: [goal('u', 'g1')], tasks: [task('u', 't1', 'g1')] }] });
    await node.run({ type: 'memory.delete', user_id: 'u', at: T2, unit_ids: ['a'], event_ids: [], require_units: true });
    const other = mkdtempSync(join(tmpdir(), 'strata-l3-replica-'));
    const replica = await openNode(other);
    try {
      for (const c of commands) await replica.run(c);
      expect(await dump(replica.db)).toEqual(await dump(node.db));
    } finally {
      await replica.close();
      rmSync(other, { recursive: true, force: true });
    }
  });
});
