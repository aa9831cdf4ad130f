import { goalKey, taskKey } from './apply/l3';
import { subjectRange, unitKey } from './apply/memory';
import type { SemanticPlanRecord } from './commands';
import { decodeVector, readMany, type AdjacencyEntry, type UnitStats, type DroppedRecord, type FailedRecord, type L3Source, type PendingEntry, type StateDb } from './db';
import { afterPrefix, compareKeys, join, prefixRange, SEP } from './keys';
import type { Edge, EventRecord, Goal, L3Task, MemoryUnit } from './types';

export interface EventPage {
  events: EventRecord[];
  /** seq of the last event returned when more may follow, else null */
  next_cursor: string | null;
}

/** A stream's raw events in acceptance order, after a cursor (an event's seq). */
export async function listEvents(db: StateDb, userId: string, streamId: string, after: string | null, limit: number): Promise<EventPage> {
  const range = prefixRange(userId, streamId);
  const gt = after ? join(userId, streamId, after) : range.gt;
  const events: EventRecord[] = [];
  for await (const value of db.events.values({ gt, lt: range.lt, limit: limit + 1 })) events.push(value);
  const more = events.length > limit;
  if (more) events.pop();
  return { events, next_cursor: more ? events[events.length - 1].seq : null };
}

export async function getEvent(db: StateDb, userId: string, eventId: string): Promise<EventRecord | undefined> {
  const at = await db.eventIds.get(join(userId, eventId));
  return at ? db.events.get(join(userId, at.stream_id, at.seq)) : undefined;
}

/** `getEvent` for many ids of one user, in two reads (`readMany`); undefined where there is none. */
export async function getEvents(db: StateDb, userId: string, eventIds: readonly string[]): Promise<(EventRecord | undefined)[]> {
  if (eventIds.length === 0) return [];
  const ats = await readMany(db.eventIds, eventIds.map((id) => join(userId, id)));
  const found = ats.flatMap((at, i) => (at ? [i] : []));
  const events = await readMany(db.events, found.map((i) => join(userId, ats[i]!.stream_id, ats[i]!.seq)));
  const out: (EventRecord | undefined)[] = eventIds.map(() => undefined);
  found.forEach((i, j) => { out[i] = events[j]; });
  return out;
}

export interface PendingSummary {
  pending: number;
  failed: number;
  /** accepted_at of the oldest pending event, null when none */
  oldest_accepted_at: string | null;
}

export async function pendingSummary(db: StateDb): Promise<PendingSummary> {
  let oldest: string | null = null;
  for await (const entry of db.pending.values({ limit: 1 })) oldest = entry.accepted_at;
  const pending = await db.counter('pending');
  // The counter is read after the scan: an event consolidated in between leaves the scan's entry
  // behind, and "0 pending, oldest 65 ms ago" would contradict itself. None pending: no oldest.
  return { pending, failed: await db.counter('failed'), oldest_accepted_at: pending === 0 ? null : oldest };
}

// ---- memory (L1/L2 units, vectors, edges) and the consolidation backlog ----

export interface UnitPage {
  units: MemoryUnit[];
  /** id of the last unit returned when more may follow, else null */
  next_cursor: string | null;
}

export interface ListUnitsOptions {
  /** include superseded and forgotten units (default false) */
  includeRetired?: boolean;
  /** only this level */
  level?: 1 | 2;
  /** a unit id: start after it */
  after?: string | null;
  limit: number;
}

/** A user's units in id order, after a cursor, filtered by level and currency. */
export async function listUnits(db: StateDb, userId: string, options: ListUnitsOptions): Promise<UnitPage> {
  const range = prefixRange(userId);
  const gt = options.after ? join(userId, options.after) : range.gt;
  const units: MemoryUnit[] = [];
  for await (const unit of db.units.values({ gt, lt: range.lt })) {
    if (!options.includeRetired && unit.retired_at !== null) continue;
    if (options.level !== undefined && unit.level !== options.level) continue;
    units.push(unit);
    if (units.length > options.limit) break;
  }
  const more = units.length > options.limit;
  if (more) units.pop();
  return { units, next_cursor: more ? units[units.length - 1].id : null };
}

/** Every unit of a user (current and retired, L1 and L2), in id order. */
export async function allUnits(db: StateDb, userId: string): Promise<MemoryUnit[]> {
  const units: MemoryUnit[] = [];
  for await (const unit of db.units.values(prefixRange(userId))) units.push(unit);
  return units;
}

export async function getUnit(db: StateDb, userId: string, unitId: string): Promise<MemoryUnit | undefined> {
  return db.units.get(unitKey(userId, unitId));
}

export async function getUnitVector(db: StateDb, userId: string, unitId: string): Promise<Float32Array | undefined> {
  const stored = await db.vectors.get(unitKey(userId, unitId));
  return stored ? decodeVector(stored) : undefined;
}

/** Every stored vector of a user, by unit id, with the embedder that made it. */
export async function userVectors(db: StateDb, userId: string): Promise<Map<string, { vector: Float32Array; embedder_id: string }>> {
  const out = new Map<string, { vector: Float32Array; embedder_id: string }>();
  const prefix = userId + SEP;
  for await (const [key, stored] of db.vectors.iterator(prefixRange(userId))) {
    out.set(key.slice(prefix.length), { vector: decodeVector(stored), embedder_id: stored.embedder_id });
  }
  return out;
}

/** Units (current or not) that state a fact about this subject and attribute. */
export async function unitsBySubjectAttribute(db: StateDb, userId: string, subject: string, attribute: string): Promise<MemoryUnit[]> {
  const units: MemoryUnit[] = [];
  for await (const unitId of db.unitBySubject.values(subjectRange(userId, subject, attribute))) {
    const unit = await db.units.get(unitKey(userId, unitId));
    if (unit) units.push(unit);
  }
  return units;
}

/** A unit's retrieval stats (undefined: never reinforced by retrieval). */
export async function unitStatsOf(db: StateDb, userId: string, unitId: string): Promise<UnitStats | undefined> {
  return db.unitStats.get(unitKey(userId, unitId));
}

/** The retrieval stats of a user's units, by unit id. */
export async function userUnitStats(db: StateDb, userId: string): Promise<Map<string, UnitStats>> {
  const prefix = userId + SEP;
  const out = new Map<string, UnitStats>();
  for await (const [key, stats] of db.unitStats.iterator(prefixRange(userId))) out.set(key.slice(prefix.length), stats);
  return out;
}

export async function listUserEdges(db: StateDb, userId: string): Promise<Edge[]> {
  const edges: Edge[] = [];
  for await (const edge of db.edges.values(prefixRange(userId))) edges.push(edge);
  return edges;
}

export async function getEdge(db: StateDb, userId: string, edgeId: string): Promise<Edge | undefined> {
  return db.edges.get(join(userId, edgeId));
}

export interface EdgePage {
  edges: Edge[];
  /** edge_id of the last edge returned when more may follow, else null */
  next_cursor: string | null;
}

/** A user's edges in edge_id order, after a cursor (an edge_id). */
export async function listEdgesPage(db: StateDb, userId: string, after: string | null, limit: number): Promise<EdgePage> {
  const range = prefixRange(userId);
  const edges: Edge[] = [];
  for await (const edge of db.edges.values({ gt: after ? join(userId, after) : range.gt, lt: range.lt, limit: limit + 1 })) edges.push(edge);
  const more = edges.length > limit;
  if (more) edges.pop();
  return { edges, next_cursor: more ? edges[edges.length - 1].edge_id : null };
}

/** The edges touching a unit, from its adjacency range. */
export async function edgesOfUnit(db: StateDb, userId: string, unitId: string): Promise<(AdjacencyEntry & { edge_id: string })[]> {
  const prefix = join(userId, unitId) + SEP;
  const out: (AdjacencyEntry & { edge_id: string })[] = [];
  for await (const [key, entry] of db.adjacency.iterator(prefixRange(userId, unitId))) out.push({ ...entry, edge_id: key.slice(prefix.length) });
  return out;
}

export async function droppedEvent(db: StateDb, userId: string, eventId: string): Promise<DroppedRecord | undefined> {
  return db.dropped.get(join(userId, eventId));
}

export async function listDropped(db: StateDb, userId: string): Promise<(DroppedRecord & { event_id: string })[]> {
  const prefix = userId + SEP;
  const out: (DroppedRecord & { event_id: string })[] = [];
  for await (const [key, record] of db.dropped.iterator(prefixRange(userId))) out.push({ ...record, event_id: key.slice(prefix.length) });
  return out;
}

export async function listFailed(db: StateDb, limit: number): Promise<(FailedRecord & { seq: string })[]> {
  const out: (FailedRecord & { seq: string })[] = [];
  for await (const [seq, record] of db.failed.iterator({ limit })) out.push({ ...record, seq });
  return out;
}

export type PendingItem = PendingEntry & { seq: string };

/** A user's pending entries, oldest first. */
export async function pendingOfUser(db: StateDb, userId: string, limit: number): Promise<PendingItem[]> {
  const prefix = userId + SEP;
  const out: PendingItem[] = [];
  for await (const [key, entry] of db.pendingByUser.iterator({ ...prefixRange(userId), limit })) out.push({ ...entry, seq: key.slice(prefix.length) });
  return out;
}

/** The user's most recently accepted pending entries, newest first (what retrieval searches raw). */
export async function recentPendingOfUser(db: StateDb, userId: string, limit: number): Promise<PendingItem[]> {
  const prefix = userId + SEP;
  const out: PendingItem[] = [];
  for await (const [key, entry] of db.pendingByUser.iterator({ ...prefixRange(userId), limit, reverse: true })) out.push({ ...entry, seq: key.slice(prefix.length) });
  return out;
}

/**
 * Pending entries accepted before the per-user index existed (a data directory from an older build), oldest
 * first; empty once they are gone. Checked from the head of the backlog, so they are served before newer ones.
 */
export async function unindexedPending(db: StateDb, limit: number): Promise<PendingItem[]> {
  const out: PendingItem[] = [];
  for await (const [seq, entry] of db.pending.iterator({ limit })) {
    if ((await db.pendingByUser.get(join(entry.user_id, seq))) !== undefined) break;
    out.push({ ...entry, seq });
  }
  return out;
}

/** The first user with pending entries whose id sorts after `after` (null: the first of all), one seek. */
async function nextPendingUser(db: StateDb, after: string | null): Promise<string | null> {
  // Every key of user u (u + SEP + seq) sorts below afterPrefix(u), and every key of a later user above it.
  const range = after === null ? { limit: 1 } : { gte: afterPrefix(after), limit: 1 };
  for await (const key of db.pendingByUser.keys(range)) return key.slice(0, key.indexOf(SEP));
  return null;
}

/**
 * Up to `max` distinct users with pending entries, in round-robin order: those after `after` first, then
 * wrapping around to the start (so `after` itself comes last). One seek per user.
 */
export async function pendingUsersFrom(db: StateDb, after: string | null, max: number): Promise<string[]> {
  const users: string[] = [];
  let cursor = after;
  for (let wrapped = after === null; users.length < max;) {
    const user = await nextPendingUser(db, cursor);
    // compareKeys, not `>`: the keys come in byte order, which `>` on UTF-16 disagrees with (keys.ts)
    if (user === null || (wrapped && after !== null && compareKeys(user, after) > 0)) {
      if (wrapped) break;
      wrapped = true;
      cursor = null;
      continue;
    }
    if (users.includes(user)) break;
    users.push(user);
    cursor = user;
  }
  return users;
}

export interface DueReflection {
  user_id: string;
  stream_id: string;
  last_event_at: string;
}

/** Streams consolidated since their last reflection (in user, stream order). */
export async function reflectionsDue(db: StateDb, limit: number): Promise<DueReflection[]> {
  const out: DueReflection[] = [];
  for await (const [key, due] of db.reflectionDue.iterator({ limit })) {
    const [user_id, stream_id] = key.split(SEP);
    out.push({ user_id, stream_id, last_event_at: due.last_event_at });
  }
  return out;
}

// ---- L3 goals and tasks ----

export async function listGoals(db: StateDb, userId: string): Promise<Goal[]> {
  const out: Goal[] = [];
  for await (const goal of db.goals.values(prefixRange(userId))) out.push(goal);
  return out;
}

export async function listTasks(db: StateDb, userId: string): Promise<L3Task[]> {
  const out: L3Task[] = [];
  for await (const task of db.tasks.values(prefixRange(userId))) out.push(task);
  return out;
}

export async function getGoal(db: StateDb, userId: string, goalId: string): Promise<Goal | undefined> {
  return db.goals.get(goalKey(userId, goalId));
}

export async function getTask(db: StateDb, userId: string, taskId: string): Promise<L3Task | undefined> {
  return db.tasks.get(taskKey(userId, taskId));
}

/** Every event of a user already planned into L3, with the goal or task it gave. */
export async function l3Sources(db: StateDb, userId: string): Promise<Map<string, L3Source>> {
  const prefix = userId + SEP;
  const out = new Map<string, L3Source>();
  for await (const [key, source] of db.l3ByEvent.iterator(prefixRange(userId))) out.set(key.slice(prefix.length), source);
  return out;
}

export async function l3SourceOfEvent(db: StateDb, userId: string, eventId: string): Promise<L3Source | undefined> {
  return db.l3ByEvent.get(join(userId, eventId));
}

// ---- semantic plans, org knowledge, a user's events ----

export async function getSemanticPlan(db: StateDb, planId: string): Promise<SemanticPlanRecord | undefined> {
  return db.semanticPlans.get(planId);
}

/** The units of an organization stored on this shard (any user; current and retired). */
export async function orgUnitsOf(db: StateDb, orgId: string): Promise<MemoryUnit[]> {
  const out: MemoryUnit[] = [];
  for await (const key of db.orgUnits.keys(prefixRange(orgId))) {
    const [, userId, unitId] = key.split(SEP);
    const unit = await db.units.get(unitKey(userId, unitId));
    if (unit) out.push(unit);
  }
  return out;
}

export interface StreamSummary {
  stream_id: string;
  first_event_at: string;
  last_event_at: string;
}

/**
 * The streams a user has events in (stream_id order), after a cursor (a stream_id), at most `limit`: two
 * seeks per stream (its first and last event), never a walk over its events.
 */
export async function listUserStreams(db: StateDb, userId: string, after: string | null, limit: number): Promise<StreamSummary[]> {
  const out: StreamSummary[] = [];
  const range = prefixRange(userId);
  // every event key of stream s (user SEP s SEP seq) sorts below afterPrefix(user, s), the next stream's above it
  let from = after === null ? range.gt : afterPrefix(userId, after);
  while (out.length < limit) {
    let first: EventRecord | undefined;
    for await (const event of db.events.values({ gte: from, lt: range.lt, limit: 1 })) first = event;
    if (!first) break;
    let last = first;
    for await (const event of db.events.values({ ...prefixRange(userId, first.stream_id), reverse: true, limit: 1 })) last = event;
    out.push({ stream_id: first.stream_id, first_event_at: first.transaction_time, last_event_at: last.transaction_time });
    from = afterPrefix(userId, first.stream_id);
  }
  return out;
}

/** Up to `limit` events of a user over all streams (stream by stream, each in acceptance order). */
export async function userEvents(db: StateDb, userId: string, limit: number): Promise<EventRecord[]> {
  const out: EventRecord[] = [];
  for await (const event of db.events.values({ ...prefixRange(userId), limit })) out.push(event);
  return out;
}
