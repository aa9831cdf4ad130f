/** The answer shapes of records the operations return (CONTRACT.md): one place, used by every surface. */
import type { RawHit, ScoreSignals } from '@strata/memory/retrieval';
import type { GoalTree, TaskNode } from '@strata/memory/planning';
import type { Edge, EventRecord, L3Task, MemoryUnit } from '@strata/store';

/**
 * The contract's unit view (CONTRACT.md §3), plus when and by what a unit stopped being current, and its
 * stored importance (0..1: content signals, raised by consolidation repeats and retrieval; retrieval
 * ranks by it decayed over time, see packages/memory/src/retrieval/decay.ts).
 */
export function unitView(u: MemoryUnit) {
  return { ...retrievedUnitView(u), retired_at: u.retired_at, superseded_by: u.superseded_by, importance: u.importance };
}

/** A retrieved unit (or a level-0 raw hit of a pending event) as the contract shows it (§3), nothing more. */
export function retrievedUnitView(u: MemoryUnit | RawHit) {
  return {
    id: u.id, memory_type: u.memory_type, content: u.content, keywords: u.keywords, level: u.level, stream_id: u.stream_id,
    valid_time: u.valid_time, transaction_time: u.transaction_time, references: u.references, assets: u.assets,
  };
}

/** An L0 event as the event listing answers it (CONTRACT.md §2). */
export function eventView(e: EventRecord) {
  return {
    event_id: e.event_id, content: e.content, content_type: e.content_type, org_id: e.org_id, agent_id: e.agent_id, role: e.role,
    level: e.level, parent_id: e.parent_id, task_status: e.task_status, task_progress: e.task_progress, valid_time: e.valid_time,
    transaction_time: e.transaction_time, metadata: e.metadata, assets: e.assets,
  };
}

/**
 * How much of a task a reply shows: `contract`, exactly the keys of CONTRACT §8 (published clients
 * build the record from them and fail on any other), or `full` (`?view=full`), which adds `stream_id`
 * and `status_reason`.
 */
export type TaskViewKind = 'contract' | 'full';

export function taskView(t: L3Task, kind: TaskViewKind = 'contract') {
  const view = {
    task_id: t.task_id, user_id: t.user_id, org_id: t.org_id, agent_id: t.agent_id, parent_id: t.parent_id, title: t.title,
    description: t.description, status: t.status, progress: t.progress, dependencies: t.dependencies, context_refs: t.context_refs,
    created_at: t.created_at, updated_at: t.updated_at, result_summary: t.result_summary,
  };
  return kind === 'full' ? { ...view, stream_id: t.stream_id, status_reason: t.status_reason } : view;
}

function taskNodeView(node: TaskNode, kind: TaskViewKind): { task: ReturnType<typeof taskView>; children: unknown[] } {
  return { task: taskView(node.task, kind), children: node.children.map((c) => taskNodeView(c, kind)) };
}

/** Goal trees with each task in the chosen view (the goal view is the contract's already). */
export function goalTreesView(trees: readonly GoalTree[], kind: TaskViewKind = 'contract') {
  return trees.map((t) => ({ goal: t.goal, tasks: t.tasks.map((n) => taskNodeView(n, kind)) }));
}

/** A graph edge as the edge listing and the unit detail answer it (CONTRACT §2, §5). */
export function edgeView(e: Edge) {
  return { edge_id: e.edge_id, source_id: e.source_id, target_id: e.target_id, relation: e.relation, weight: e.weight, created_at: e.created_at };
}

/**
 * Why a result ranked where it did (retrieve `explain: true`, an extension): its 1-based rank in each
 * list it came from (vector, text, own, context, facet, graph, image), the fused score before
 * reranking, the recency and importance signals, the boosts applied, and for a graph neighbour the
 * seed it was reached from.
 */
export function whyView(s: ScoreSignals) {
  return {
    lists: s.ranks, fused: round(s.fused), recency: round(s.recency), importance: round(s.importance), boosts: s.boosts,
    ...(s.graph ? { graph: { from: s.graph.from, hops: s.graph.hops, strength: round(s.graph.strength) } } : {}),
  };
}

const round = (x: number) => Math.round(x * 10000) / 10000;
