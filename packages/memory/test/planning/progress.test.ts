import { aggregateProgress, recomputeAncestors } from '../../src/planning';
import { goal, task } from './fixtures';

const LATER = '2025-03-02T00:00:00.000Z';

describe('aggregateProgress', () => {
  it('is the mean with completed = 1 and cancelled excluded', () => {
    expect(aggregateProgress([
      task({ status: 'completed', progress: 0.3 }), task({ status: 'in_progress', progress: 0.5 }),
      task({ status: 'pending', progress: 0 }), task({ status: 'cancelled', progress: 0.9 }),
    ])).toBe(0.5);
    expect(aggregateProgress([task({ progress: 1 / 3 })])).toBe(0.3333);
    expect(aggregateProgress([])).toBeNull();
    expect(aggregateProgress([task({ status: 'cancelled' })])).toBeNull();
  });
});

describe('recomputeAncestors', () => {
  it('walks task -> parent task -> goal without completing anything', () => {
    const g = goal({ id: 'g', progress: 0 });
    const parent = task({ task_id: 'p', parent_id: 'g', status: 'in_progress', progress: 0 });
    const sibling = task({ task_id: 'q', parent_id: 'g', status: 'pending', progress: 0 });
    const c1 = task({ task_id: 'c1', parent_id: 'p', status: 'completed', progress: 1 });
    const c2old = task({ task_id: 'c2', parent_id: 'p', status: 'in_progress', progress: 0.2 });
    const c2 = { ...c2old, status: 'completed' as const, progress: 1 };
    const r = recomputeAncestors(c2, [parent, sibling, c1, c2old], [g], LATER);
    expect(r.tasks).toEqual([{ ...parent, progress: 1, updated_at: LATER }]);
    expect(r.tasks[0].status).toBe('in_progress'); // nothing completes by itself
    expect(r.goals).toEqual([{ ...g, progress: 0.5 }]);
    expect(r.goals[0].status).toBe('pending');
  });

  it('reports nothing when progress does not change, and survives parent cycles', () => {
    const a = task({ task_id: 'a', parent_id: 'b', progress: 0 });
    const b = task({ task_id: 'b', parent_id: 'a', progress: 0 });
    expect(recomputeAncestors(a, [a, b], [], LATER)).toEqual({ tasks: [], goals: [] });
    const child = task({ task_id: 'c', parent_id: 'a', status: 'completed', progress: 1 });
    const r = recomputeAncestors(child, [a, b, child], [], LATER);
    expect(r.tasks.map((t) => [t.task_id, t.progress])).toEqual([['a', 0.5], ['b', 0.5]]); // a's children: b (0) and c (1)
  });

  it('leaves a completed parent at 1', () => {
    const parent = task({ task_id: 'p', parent_id: null, status: 'completed', progress: 1 });
    const child = task({ task_id: 'c', parent_id: 'p', status: 'in_progress', progress: 0.1 });
    expect(recomputeAncestors(child, [parent, child], [], LATER).tasks).toEqual([]);
  });
});
