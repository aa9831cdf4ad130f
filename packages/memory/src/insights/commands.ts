/**
 * The `memory.insights` commands of L2 planning, pure over state the caller has read: the community
 * insights of a user, and the reflection policy for a stream (when it counts as quiet, which unit is its
 * reflection, what to propose when there is nothing new). The server reads the store, decides which
 * streams to look at and proposes (server/src/workers/insights.ts); only the embedder is awaited here.
 */
import { commandVector, type Edge, type EventRecord, type InsightsCommand, type MemoryUnit } from '@strata/store';
import type { Embedder } from '../providers/types';
import { insightCommandUpdate, planInsights } from './plan-insights';
import { planReflection } from './reflection';

export interface InsightsContext {
  embedder: Embedder;
  /** RFC 3339 planning time */
  now: string;
  newId: () => string;
}

/** A user's stored vectors by unit id, each with the embedder that made it. */
export type StoredVectors = ReadonlyMap<string, { vector: Float32Array; embedder_id: string }>;

function emptyCommand(userId: string, ctx: InsightsContext): InsightsCommand {
  return { type: 'memory.insights', user_id: userId, at: ctx.now, embedder_id: ctx.embedder.id, create: [], update: [], edges: [], removed_edges: [], reflected: [] };
}

/** Community insights of one user; null when the communities match the stored insights already. */
export async function userInsightsCommand(
  userId: string, state: { units: MemoryUnit[]; edges: Edge[]; vectors: StoredVectors }, ctx: InsightsContext,
): Promise<InsightsCommand | null> {
  // Vectors of another model are not comparable with the embedder's: the planner embeds those units again.
  const vectors = new Map<string, Float32Array>();
  for (const [id, v] of state.vectors) if (v.embedder_id === ctx.embedder.id) vectors.set(id, v.vector);
  const plan = await planInsights({
    units: state.units, edges: state.edges, existingInsights: state.units.filter((u) => u.level === 2), now: ctx.now, newId: ctx.newId, embedder: ctx.embedder, vectors,
  });
  if (plan.create.length === 0 && plan.update.length === 0 && plan.edges.length === 0 && plan.removed_edges.length === 0) return null;
  return {
    ...emptyCommand(userId, ctx),
    create: plan.create.map(({ unit, vector }) => ({ unit, ...commandVector(vector) })),
    update: plan.update.map(insightCommandUpdate),
    edges: plan.edges,
    removed_edges: plan.removed_edges,
  };
}

/**
 * Whether a stream whose last event was accepted at `lastEventAt` has been quiet for `quietMinutes` at
 * `nowMs`. Measured on acceptance time, like `planReflection`.
 */
export function streamIsQuiet(lastEventAt: string, nowMs: number, quietMinutes: number): boolean {
  return !(nowMs - Date.parse(lastEventAt) < quietMinutes * 60_000);
}

/** The stream's reflection among the units with its subject and attribute: the current L2 one, smallest id first (deterministic if ever two). */
export function currentReflection(candidates: readonly MemoryUnit[]): MemoryUnit | null {
  return candidates.filter((u) => u.level === 2 && u.retired_at === null).sort((a, b) => (a.id < b.id ? -1 : 1))[0] ?? null;
}

export interface StreamReflectionState {
  /** All the stream's events. */
  events: EventRecord[];
  /** The user's units (those of the stream are used). */
  units: MemoryUnit[];
  /** The user's edges. */
  edges: Edge[];
  /** The user's units with the stream's reflection subject and attribute (`reflectionSubject`, `REFLECTION_ATTRIBUTE`). */
  candidates: MemoryUnit[];
}

/**
 * The reflection on a stream whose last consolidated event is `through`. Null while the stream is still
 * active (an event newer than the quiet period, perhaps still pending); otherwise always a command: when
 * there is nothing (new) to reflect on, it only clears the stream's "reflection due" mark.
 */
export async function streamReflectionCommand(
  userId: string, streamId: string, through: string, quietMinutes: number, state: StreamReflectionState, ctx: InsightsContext,
): Promise<InsightsCommand | null> {
  const existing = currentReflection(state.candidates);
  const last = state.events.reduce((m, e) => (e.transaction_time > m ? e.transaction_time : m), '');
  if (last !== '' && !streamIsQuiet(last, Date.parse(ctx.now), quietMinutes)) return null;
  const plan = await planReflection({
    streamId, units: state.units.filter((u) => u.stream_id === streamId), events: state.events, now: ctx.now, newId: ctx.newId, quietMinutes,
    existing, embedder: ctx.embedder, edges: state.edges,
  });
  const command = { ...emptyCommand(userId, ctx), reflected: [{ stream_id: streamId, through }] };
  if (!plan) return command;
  if (plan.create) command.create = [{ unit: plan.create.unit, ...commandVector(plan.create.vector) }];
  if (plan.update) {
    const { vector, ...update } = plan.update;
    command.update = [{ ...update, ...commandVector(vector) }];
  }
  command.edges = plan.edges;
  return command;
}
