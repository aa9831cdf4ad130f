/**
 * L2 planning over the store: community insights of a user's memory graph, and reflections on streams
 * that went quiet. Reads the state and hands it to memory's pure planners (`userInsightsCommand`,
 * `streamReflectionCommand` in packages/memory/src/insights/commands.ts), which return the
 * `memory.insights` command to propose, or null when there is nothing to change.
 */
import { REFLECTION_ATTRIBUTE, reflectionSubject, streamReflectionCommand, userInsightsCommand } from '@strata/memory/insights';
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

/** Community insights of one user; null when the communities match the stored insights already. */
export async function planUserInsights(userId: string, ctx: PlanContext): Promise<InsightsCommand | null> {
  const [units, edges, vectors] = await Promise.all([allUnits(ctx.db, userId), listUserEdges(ctx.db, userId), userVectors(ctx.db, userId)]);
  return userInsightsCommand(userId, { units, edges, vectors }, ctx);
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

/** The reflection on a stream whose last consolidated event is `through` (memory's `streamReflectionCommand` decides). */
export async function planStreamReflection(
  userId: string, streamId: string, through: string, quietMinutes: number, ctx: PlanContext,
): Promise<InsightsCommand | null> {
  const [events, units, edges, candidates] = await Promise.all([
    streamEvents(ctx.db, userId, streamId), allUnits(ctx.db, userId), listUserEdges(ctx.db, userId),
    unitsBySubjectAttribute(ctx.db, userId, reflectionSubject(streamId), REFLECTION_ATTRIBUTE),
  ]);
  return streamReflectionCommand(userId, streamId, through, quietMinutes, { events, units, edges, candidates }, ctx);
}
