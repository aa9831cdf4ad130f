/**
 * L2 planning over the store: community insights of a user's memory graph, and reflections on streams
 * that went quiet. Reads the state, runs the pure planners (packages/memory/src/insights) and returns the
 * `memory.insights` command to propose, or null when there is nothing to change.
 */
import { REFLECTION_ATTRIBUTE, insightCommandUpdate, planInsights, planReflection, reflectionSubject } from '@strata/memory/insights';
import type { Embedder } from '@strata/memory';
import {
  allUnits, listEvents, listUserEdges, unitsBySubjectAttribute, userVectors, type EventRecord, type InsightsCommand, type StateDb,
} from '@strata/store';

export interface PlanContext {
  db: StateDb;
  embedder: Embedder;
  now: string;
  newId: () => string;
}

function emptyCommand(userId: string, ctx: PlanContext): InsightsCommand {
  return { type: 'memory.insights', user_id: userId, at: ctx.now, embedder_id: ctx.embedder.id, create: [], update: [], edges: [], removed_edges: [], reflected: [] };
}

/** Community insights of one user; null when the communities match the stored insights already. */
export async function planUserInsights(userId: string, ctx: PlanContext): Promise<InsightsCommand | null> {
  const [units, edges, stored] = await Promise.all([allUnits(ctx.db, userId), listUserEdges(ctx.db, userId), userVectors(ctx.db, userId)]);
  const vectors = new Map<string, Float32Array>();
  for (const [id, v] of stored) if (v.embedder_id === ctx.embedder.id) vectors.set(id, v.vector);
  const plan = await planInsights({
    units, edges, existingInsights: units.filter((u) => u.level === 2), now: ctx.now, newId: ctx.newId, embedder: ctx.embedder, vectors,
  });
  if (plan.create.length === 0 && plan.update.length === 0 && plan.edges.length === 0 && plan.removed_edges.length === 0) return null;
  return {
    ...emptyCommand(userId, ctx),
    create: plan.create,
    update: plan.update.map(insightCommandUpdate),
    edges: plan.edges,
    removed_edges: plan.removed_edges,
  };
}

async function streamEvents(db: StateDb, userId: string, streamId: string): Promise<EventRecord[]> {
  const events: EventRecord[] = [];
  let after: string | null = null;
  for (let page = 0; page < 10_000; page++) {
    const res = await listEvents(db, userId, streamId, after, 1000);
    events.push(...res.events);
    if (!res.next_cursor) break;
    after = res.next_cursor;
  }
  return events;
}

/**
 * The reflection on a stream whose last consolidated event is `through`. Always a command: when there is
 * nothing (new) to reflect on, it only clears the stream's "reflection due" mark.
 */
export async function planStreamReflection(
  userId: string, streamId: string, through: string, quietMinutes: number, ctx: PlanContext,
): Promise<InsightsCommand | null> {
  const [events, units, edges, candidates] = await Promise.all([
    streamEvents(ctx.db, userId, streamId), allUnits(ctx.db, userId), listUserEdges(ctx.db, userId),
    unitsBySubjectAttribute(ctx.db, userId, reflectionSubject(streamId), REFLECTION_ATTRIBUTE),
  ]);
  const existing = candidates.filter((u) => u.level === 2 && u.retired_at === null).sort((a, b) => (a.id < b.id ? -1 : 1))[0] ?? null;
  const last = events.reduce((m, e) => (e.transaction_time > m ? e.transaction_time : m), '');
  // Still active (an event newer than the quiet period, perhaps still pending): not yet.
  if (last !== '' && Date.parse(ctx.now) - Date.parse(last) < quietMinutes * 60_000) return null;
  const plan = await planReflection({
    streamId, units: units.filter((u) => u.stream_id === streamId), events, now: ctx.now, newId: ctx.newId, quietMinutes,
    existing, embedder: ctx.embedder, edges,
  });
  const command = { ...emptyCommand(userId, ctx), reflected: [{ stream_id: streamId, through }] };
  if (!plan) return command;
  if (plan.create) command.create = [plan.create];
  if (plan.update) command.update = [{ ...plan.update }];
  command.edges = plan.edges;
  return command;
}
