import { buildTaskTrees, readyTasks, unreachableTasks } from '../../src/planning';
import { goal, task } from './fixtures';

const T = (s: number): string => new Date(Date.UTC(2025, 0, 1, 0, 0, s)).toISOString();

describe('buildTaskTrees', () => {
  const g1 = goal({ id: 'g1', stream_id: 's1', transaction_time: T(1) });
  const g2 = goal({ id: 'g2', stream_id: 's2', transaction_time: T(5), content: 'newer' });
  const tasks = [
    task({ task_id: 'b', parent_id: 'g1', created_at: T(3) }),
    task({ task_id: 'a', parent_id: 'g1', created_at: T(2) }),
    task({ task_id: 'a2', parent_id: 'a', created_at: T(4) }),
    task({ task_id: 'a1', parent_id: 'a', created_at: T(4) }),
    task({ task_id: 'x', parent_id: 'g2', created_at: T(6), stream_id: 's1' }),
    task({ task_id: 'orphan', parent_id: 'gone', created_at: T(1) }),
    task({ task_id: 'cy1', parent_id: 'cy2' }),
    task({ task_id: 'cy2', parent_id: 'cy1' }),
  ];

  it('orders goals newest first and tasks by creation, nesting children', () => {
    const trees = buildTaskTrees([g1, g2], tasks);
    expect(trees.map((t) => t.goal.id)).toEqual(['g2', 'g1']);
    expect(trees[0]).toEqual({ goal: { id: 'g2', content: 'newer', status: 'pending', progress: 0, stream_id: 's2', transaction_time: T(5) }, tasks: [{ task: tasks[4], children: [] }] });
    const shape = (nodes: { task: { task_id: string }; children: unknown[] }[]): unknown => nodes.map((n) => [n.task.task_id, shape(n.children as never)]);
    expect(shape(trees[1].tasks)).toEqual([['a', [['a1', []], ['a2', []]]], ['b', []]]);
  });

  it('filters goals by stream and lists the unreachable tasks', () => {
    expect(buildTaskTrees([g1, g2], tasks, { stream_id: 's1' }).map((t) => t.goal.id)).toEqual(['g1']);
    expect(unreachableTasks([g1, g2], tasks).map((t) => t.task_id)).toEqual(['orphan', 'cy1', 'cy2']);
  });
});

describe('readyTasks', () => {
  it('lists pending tasks whose dependencies are completed; missing dependencies are ignored', () => {
    const tasks = [
      task({ task_id: '1', status: 'completed', created_at: T(1) }),
      task({ task_id: '2', dependencies: ['1'], created_at: T(2) }),
      task({ task_id: '3', dependencies: ['2'], created_at: T(3) }),
      task({ task_id: '4', dependencies: ['deleted'], created_at: T(4) }),
      task({ task_id: '5', dependencies: ['6'], created_at: T(5) }),
      task({ task_id: '6', status: 'cancelled', created_at: T(6) }),
      task({ task_id: '7', status: 'in_progress', created_at: T(7) }),
      task({ task_id: '0', created_at: T(0) }),
    ];
    expect(readyTasks(tasks).map((t) => t.task_id)).toEqual(['0', '2', '4']);
  });
});
