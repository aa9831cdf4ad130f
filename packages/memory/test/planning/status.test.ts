import { applyStatusUpdate, completionText, parseTaskStatus, PlanningError, transitionError, tryParseTaskStatus } from '../../src/planning';
import { NOW, task } from './fixtures';

const LATER = '2025-03-01T11:00:00.000Z';

describe('parseTaskStatus', () => {
  it.each([
    ['pending', 'pending'], ['PENDING', 'pending'], ['InProgress', 'in_progress'], ['in-progress', 'in_progress'],
    ['in_progress', 'in_progress'], ['IN_PROGRESS', 'in_progress'], ['in progress', 'in_progress'],
    ['Blocked', 'blocked'], ['Completed', 'completed'], ['done', 'completed'], ['failed', 'failed'],
    ['Cancelled', 'cancelled'], ['canceled', 'cancelled'],
  ])('%s -> %s', (input, status) => {
    expect(parseTaskStatus(input)).toEqual({ status, reason: null });
  });

  it('reads the reason of the object form', () => {
    expect(parseTaskStatus({ Blocked: 'waiting for the landlord' })).toEqual({ status: 'blocked', reason: 'waiting for the landlord' });
    expect(parseTaskStatus({ failed: ' bank said no ' })).toEqual({ status: 'failed', reason: 'bank said no' });
    expect(parseTaskStatus({ InProgress: null })).toEqual({ status: 'in_progress', reason: null });
  });

  it('rejects bad input with an actionable validation error', () => {
    for (const bad of ['finished-ish', '', 3, null, [], { Blocked: 1 }, { Blocked: 'a', Failed: 'b' }, { Nope: 'x' }]) {
      let caught: unknown;
      try {
        parseTaskStatus(bad);
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(PlanningError);
      const err = caught as PlanningError;
      expect(err.code).toBe('validation_failed');
      expect(err.status).toBe(400);
      expect(err.message).toContain('pending, in_progress, blocked, completed, failed, cancelled');
      expect(err.details?.[0].path).toBe('/status');
    }
    expect(tryParseTaskStatus('whatever')).toBeNull();
  });
});

describe('transitions', () => {
  it('refuses to leave a terminal state without reopen', () => {
    expect(transitionError('completed', 'in_progress', false)).toMatch(/reopen/);
    expect(transitionError('cancelled', 'pending', false)).toMatch(/cancelled/);
    expect(transitionError('completed', 'in_progress', true)).toBeNull();
    expect(transitionError('failed', 'pending', false)).toBeNull();
    expect(transitionError('blocked', 'completed', false)).toBeNull();
    expect(transitionError('completed', 'completed', false)).toBeNull();
  });

  it('throws invalid_transition (409) from completed and cancelled', () => {
    const done = task({ status: 'completed', progress: 1 });
    expect(() => applyStatusUpdate(done, { status: 'in_progress' }, LATER)).toThrow(expect.objectContaining({ code: 'invalid_transition', status: 409 }));
    const cancelled = task({ status: 'cancelled' });
    expect(() => applyStatusUpdate(cancelled, { status: 'completed' }, LATER)).toThrow(expect.objectContaining({ code: 'invalid_transition' }));
  });

  it('reopens with reopen: true, keeping progress and summary unless sent', () => {
    const done = task({ status: 'completed', progress: 1, result_summary: 'ok' });
    const r = applyStatusUpdate(done, { status: 'InProgress', reopen: true }, LATER);
    expect(r).toEqual({ task: { ...done, status: 'in_progress', updated_at: LATER }, changed: true, completedNow: false });
    const again = applyStatusUpdate(r.task, { status: 'completed', result_summary: 'better' }, LATER);
    expect(again.completedNow).toBe(true);
    expect(again.sedimentText).toBe("Task 'Do it' completed: better");
  });

  it('treats a repeated terminal status as an idempotent no-op', () => {
    const done = task({ status: 'completed', progress: 1, result_summary: 'ok' });
    const r = applyStatusUpdate(done, { status: 'completed', result_summary: 'changed?' }, LATER);
    expect(r).toEqual({ task: done, changed: false, completedNow: false });
  });

  it('allows failed -> pending (retry) and clears the old reason', () => {
    const failed = task({ status: 'failed', status_reason: 'timeout' });
    const r = applyStatusUpdate(failed, { status: 'pending' }, LATER);
    expect(r.task.status).toBe('pending');
    expect(r.task.status_reason).toBeNull();
  });
});

describe('applyStatusUpdate', () => {
  it('completes once: progress 1, sediment text with the summary', () => {
    const t = task({ title: 'Find an apartment', status: 'in_progress', progress: 0.4 });
    const r = applyStatusUpdate(t, { status: 'completed', progress: 0.2, result_summary: ' Signed a lease in Mitte ' }, LATER);
    expect(r.completedNow).toBe(true);
    expect(r.task).toEqual({ ...t, status: 'completed', progress: 1, result_summary: 'Signed a lease in Mitte', updated_at: LATER });
    expect(r.sedimentText).toBe("Task 'Find an apartment' completed: Signed a lease in Mitte");
  });

  it('has a sediment text without a summary', () => {
    expect(completionText('Find an apartment', null)).toBe("Task 'Find an apartment' completed.");
    expect(completionText('X', '   ')).toBe("Task 'X' completed.");
    const r = applyStatusUpdate(task({ title: 'Pay rent' }), { status: 'Completed' }, LATER);
    expect(r.sedimentText).toBe("Task 'Pay rent' completed.");
  });

  it('stores the reason of a blocked status and keeps it on a same-status progress update', () => {
    const t = task({ status: 'in_progress' });
    const blocked = applyStatusUpdate(t, { status: { Blocked: 'no landlord reply' }, progress: 0.5 }, LATER).task;
    expect(blocked).toMatchObject({ status: 'blocked', status_reason: 'no landlord reply', progress: 0.5, updated_at: LATER, created_at: NOW });
    const again = applyStatusUpdate(blocked, { status: 'blocked', progress: 0.6 }, LATER).task;
    expect(again.status_reason).toBe('no landlord reply');
    expect(again.progress).toBe(0.6);
    expect(applyStatusUpdate(blocked, { status: 'in_progress' }, LATER).task.status_reason).toBeNull();
  });

  it('validates progress and result_summary', () => {
    for (const progress of [-0.1, 1.5, Number.NaN]) {
      expect(() => applyStatusUpdate(task(), { status: 'pending', progress }, LATER)).toThrow(expect.objectContaining({ code: 'validation_failed', details: [expect.objectContaining({ path: '/progress' })] }));
    }
    expect(() => applyStatusUpdate(task(), { status: 'pending', result_summary: 5 as unknown as string }, LATER)).toThrow(expect.objectContaining({ details: [expect.objectContaining({ path: '/result_summary' })] }));
  });

  it('does not mutate its input', () => {
    const t = task();
    const copy = structuredClone(t);
    applyStatusUpdate(t, { status: 'completed', result_summary: 'x' }, LATER);
    expect(t).toEqual(copy);
  });
});
