/**
 * The invariants asserted inside apply: a state only an apply bug (or a broken log layer) could produce
 * throws an InvariantError (the state machine stops rather than writing on); a command the proposer
 * could not have made correctly is refused with `invalid_command` and writes nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvariantError } from '@strata/raft';
import { StateDb, StateMachine, isApplyFailure, type Command, type L3Task, type MemoryUnit } from '../../src';

const T1 = '2026-01-01T01:00:00.000Z';
const T2 = '2026-01-01T02:00:00.000Z';

const task = (id: string, extra: Partial<L3Task> = {}): L3Task => ({
  task_id: id, user_id: 'u', org_id: null, agent_id: null, stream_id: 's1', parent_id: null, title: `task ${id}`, description: '',
  status: 'pending', status_reason: null, progress: 0, dependencies: [], context_refs: [], created_at: T1, updated_at: T1, result_summary: null, ...extra,
});

const unit = (id: string): MemoryUnit => ({
  id, user_id: 'u', stream_id: 's1', org_id: null, agent_id: null, level: 1, memory_type: 'factual', content: id, keywords: [], speaker: null,
  valid_time: T1, transaction_time: T1, references: [], assets: [], importance: 0.5, subject: null, attribute: null, retired_at: null, retired_reason: null, superseded_by: null,
});

const outcome = (id: string) => ({
  event_id: id, user_id: 'u', stream_id: 's1', content: 'done', content_type: 'text' as const, org_id: null, agent_id: null, role: null, level: null,
  parent_id: null, task_status: null, task_progress: null, valid_time: T2, transaction_time: T2, metadata: null, assets: [],
});

describe('invariants asserted in apply', () => {
  let dir: string;
  let db: StateDb;
  let sm: StateMachine;
  const run = (command: Command, term = 0) => sm.apply(sm.appliedIndex() + 1, command, term);
  const plan: Command = { type: 'l3.plan', user_id: 'u', at: T1, planner: 'offline', updates: [], events: [{ event_id: 'e1', goals: [], tasks: [task('t1')] }] };

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-invariants-'));
    db = await StateDb.open(join(dir, 'state'));
    sm = await StateMachine.open(db);
  });
  afterEach(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('log terms never go back: an entry of a lower term than the applied one throws, and nothing moves', async () => {
    // entries without a command (a no-op of a new term) move the applied index and term too
    await sm.applyBatch([{ index: 1, term: 3, command: null }]);
    await expect(sm.applyBatch([{ index: 2, term: 2, command: null }])).rejects.toBeInstanceOf(InvariantError);
    await expect(run(plan, 2)).rejects.toBeInstanceOf(InvariantError);
    expect(sm.appliedIndex()).toBe(1);
    await run(plan, 3);
    expect(sm.appliedIndex()).toBe(2);
  });

  test('an outcome event without a transition into completed is refused and writes nothing', async () => {
    await run(plan);
    const blocked = task('t1', { status: 'blocked', updated_at: T2 });
    const answer = await run({ type: 'l3.task_status', user_id: 'u', at: T2, task_id: 't1', sediment: outcome('o1'), updates: [{ kind: 'task', before: task('t1'), after: blocked }] });
    expect(isApplyFailure(answer) && answer.error.code).toBe('invalid_command');
    expect(await db.tasks.get('u\x00t1')).toEqual(task('t1'));
    expect(await db.eventIds.get('u\x00o1')).toBeUndefined();
    // From completed to completed (reopen not involved) is no new completion either.
    const done = task('t1', { status: 'completed', progress: 1, updated_at: T2 });
    expect(await run({ type: 'l3.task_status', user_id: 'u', at: T2, task_id: 't1', sediment: outcome('o2'), updates: [{ kind: 'task', before: task('t1'), after: done }] })).toMatchObject({ applied: true });
    const again = await run({ type: 'l3.task_status', user_id: 'u', at: T2, task_id: 't1', sediment: outcome('o3'), updates: [{ kind: 'task', before: done, after: { ...done, result_summary: 'x' } }] });
    expect(isApplyFailure(again) && again.error.code).toBe('invalid_command');
  });

  test('a task stored under another id is an invariant violation, not a stale compare-and-set', async () => {
    await run(plan);
    await db.tasks.put('u\x00t1', task('t9')); // a write around apply, as a buggy handler would leave it
    await expect(run({ type: 'l3.task_status', user_id: 'u', at: T2, task_id: 't1', sediment: null, updates: [{ kind: 'task', before: task('t1'), after: task('t1', { status: 'blocked' }) }] }))
      .rejects.toBeInstanceOf(InvariantError);
  });

  test('deleting a unit stored under another key throws instead of leaving its indexes behind', async () => {
    await db.units.put('u\x00a', unit('b'));
    await expect(run({ type: 'memory.delete', user_id: 'u', at: T2, unit_ids: ['a'], event_ids: [], require_units: true })).rejects.toBeInstanceOf(InvariantError);
    expect(sm.appliedIndex()).toBe(0);
  });
});
