import type { EventRecord, Goal } from '@strata/store';
import { planL3 } from '../../src/planning';

const NOW = '2026-03-01T10:00:00.000Z';

function event(id: string, content: string, extra: Partial<EventRecord> = {}): EventRecord {
  return {
    event_id: id, user_id: 'u', stream_id: 's', seq: '1', content, content_type: 'text', org_id: null, agent_id: null, role: null, level: null,
    parent_id: null, task_status: null, task_progress: null, valid_time: NOW, transaction_time: NOW, metadata: null, assets: [], ...extra,
  };
}

function ids() {
  let n = 0;
  return () => `id-${++n}`;
}

const empty = { goals: [], tasks: [], sources: new Map() };

describe('planL3 (pure)', () => {
  it('resolves a parent planned earlier in the same batch, by the event it came from', () => {
    const batch = planL3([
      event('e1', 'Renovate the kitchen', { level: 3 }),
      event('e2', 'Get three quotes', { parent_id: 'E1', task_status: 'in-progress', task_progress: 0.4 }),
    ], empty, { now: NOW, newId: ids() });
    expect(batch.events.map((e) => [e.event_id, e.goals.map((g) => g.content), e.tasks.map((t) => t.title)])).toEqual([
      ['e1', ['Renovate the kitchen'], []],
      ['e2', [], ['Get three quotes']],
    ]);
    const goal = batch.events[0].goals[0];
    expect(batch.events[1].tasks[0]).toMatchObject({ parent_id: goal.id, status: 'in_progress', progress: 0.4 });
    // The new goal carries its rolled-up progress itself; there is nothing existing to update.
    expect(goal.progress).toBe(0.4);
    expect(batch.updates).toEqual([]);
  });

  it('updates an existing goal with the version it was computed from, and skips planned events', () => {
    const goal: Goal = { id: 'g1', user_id: 'u', stream_id: 's', content: 'Ship v2', status: 'pending', progress: 0, source_event_id: 'e0', transaction_time: NOW };
    const batch = planL3([
      event('e0', 'Ship v2', { level: 3 }),
      event('e5', 'Write release notes', { parent_id: 'g1', task_status: 'completed' }),
    ], { goals: [goal], tasks: [], sources: new Map([['e0', { kind: 'goal' as const, id: 'g1' }]]) }, { now: NOW, newId: ids() });
    expect(batch.events.map((e) => e.event_id)).toEqual(['e5']);
    expect(batch.updates).toEqual([{ kind: 'goal', before: goal, after: { ...goal, progress: 1 } }]);
    expect(batch.updates[0].after.status).toBe('pending');
  });

  it('reports a parent that names nothing and makes nothing of it', () => {
    const batch = planL3([event('e9', 'Orphan', { parent_id: 'nope' }), event('e10', 'just chatting, nothing planned')], empty, { now: NOW, newId: ids() });
    expect(batch.events).toEqual([]);
    expect(batch.unresolved).toEqual([{ event_id: 'e9', parent_id: 'nope' }]);
  });

  it('uses a plan given for an event (the LLM\'s) instead of reading the text', () => {
    const batch = planL3([event('e1', 'whatever the text says')], empty, {
      now: NOW, newId: ids(),
      textPlans: new Map([['e1', { goal: 'Learn to sail', goal_explicit: true, steps: [{ title: 'Take a course', description: 'Take a course', depends_on: [] }] }]]),
    });
    expect(batch.events[0].goals[0].content).toBe('Learn to sail');
    expect(batch.events[0].tasks.map((t) => t.title)).toEqual(['Take a course']);
  });
});

describe('planL3 ordering', () => {
  it('stamps each event\'s records after the previous event\'s, so one batch keeps acceptance order', () => {
    const batch = planL3([event('a', 'Paint the fence', { level: 3 }), event('b', 'Plant a hedge', { level: 3 })], empty, { now: NOW, newId: ids() });
    const [first, second] = batch.events.map((e) => e.goals[0]);
    expect(first.transaction_time < second.transaction_time).toBe(true);
  });
});
