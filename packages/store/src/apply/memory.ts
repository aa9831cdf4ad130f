import type { ApplyContext } from '../apply-context';
import type {
  ConsolidateAnswer, ConsolidateCommand, ConsolidateUsersAnswer, ConsolidateUsersCommand, ConsolidationFailedAnswer, ConsolidationFailedCommand, IngestAnswer, IngestCommand,
  InsightsAnswer, InsightsCommand,
} from '../commands';
import { storedVectorOf } from '../command-vectors';
import type { StateDb, StoredVector } from '../db';
import { failure, StrataError, type ApplyFailure } from '../errors';
import { eventSeq, join, prefixRange, SEP } from '../keys';
import { streamIndex } from '../range-split';
import type { Edge, MemoryUnit } from '../types';

/**
 * Apply of the memory pipeline's commands: L1 units from consolidation, failures, L2 insights. Every
 * decision was made by the proposer (the shard leader); apply only checks that the plan still fits the
 * state and writes it, so replicas that apply the same log hold the same memory.
 */

const invalid = (message: string): ApplyFailure => failure(new StrataError('invalid_command', message));

/** A free-text key part (a subject or attribute) cannot hold the separator. */
const keyPart = (s: string): string => s.split(SEP).join(' ');

export function unitKey(userId: string, unitId: string): string {
  return join(userId, unitId);
}

export function subjectKey(userId: string, subject: string, attribute: string, unitId: string): string {
  return join(userId, keyPart(subject), keyPart(attribute), unitId);
}

/** The `unit_by_subject` key range of one subject+attribute of a user. */
export function subjectRange(userId: string, subject: string, attribute: string): { gt: string; lt: string } {
  return prefixRange(userId, keyPart(subject), keyPart(attribute));
}

/**
 * Runs after `events.ingest`: the same pending entries under the user, so the consolidation worker can
 * take users in turn instead of in global arrival order (one busy user cannot starve the others).
 */
export async function indexPendingByUser(db: StateDb, ctx: ApplyContext, cmd: IngestCommand, answer: IngestAnswer): Promise<void> {
  if (answer.replayed) return;
  const numbered = await streamIndex(db, ctx); // as applyIngest numbered them
  cmd.events.forEach((event, position) => {
    const seq = eventSeq(numbered, position);
    ctx.put(db.pendingByUser, join(cmd.user_id, seq), {
      user_id: cmd.user_id, stream_id: cmd.stream_id, event_id: event.event_id, accepted_at: event.transaction_time,
    });
  });
}

/** The `org_units` key of a unit that carries an org_id (organization knowledge, CONTRACT §9). */
export function orgUnitKey(orgId: string, userId: string, unitId: string): string {
  return join(orgId, userId, unitId);
}

/** Writes a new unit and its indexes; `vector` is the stored record of its embedding (command-vectors.ts), null for none. */
export function writeUnit(db: StateDb, ctx: ApplyContext, unit: MemoryUnit, vector: StoredVector | null): void {
  ctx.put(db.units, unitKey(unit.user_id, unit.id), unit);
  if (vector) ctx.put(db.vectors, unitKey(unit.user_id, unit.id), vector);
  if (unit.subject && unit.attribute) ctx.put(db.unitBySubject, subjectKey(unit.user_id, unit.subject, unit.attribute, unit.id), unit.id);
  if (unit.org_id) ctx.put(db.orgUnits, orgUnitKey(unit.org_id, unit.user_id, unit.id), unit.id);
}

/** Writes an edge and both adjacency entries; false (nothing written) when an end is not a unit of the user or the id is taken. */
export async function writeEdge(db: StateDb, ctx: ApplyContext, userId: string, edge: Edge): Promise<boolean> {
  if (edge.user_id !== userId || edge.source_id === edge.target_id) return false;
  if ((await ctx.get(db.edges, join(userId, edge.edge_id))) !== undefined) return false;
  if ((await ctx.get(db.units, unitKey(userId, edge.source_id))) === undefined) return false;
  if ((await ctx.get(db.units, unitKey(userId, edge.target_id))) === undefined) return false;
  ctx.put(db.edges, join(userId, edge.edge_id), edge);
  ctx.put(db.adjacency, join(userId, edge.source_id, edge.edge_id), { other_id: edge.target_id, relation: edge.relation, out: true });
  ctx.put(db.adjacency, join(userId, edge.target_id, edge.edge_id), { other_id: edge.source_id, relation: edge.relation, out: false });
  return true;
}

export async function removeEdge(db: StateDb, ctx: ApplyContext, userId: string, edgeId: string): Promise<boolean> {
  const edge = await ctx.get(db.edges, join(userId, edgeId));
  if (!edge) return false;
  ctx.del(db.edges, join(userId, edgeId));
  ctx.del(db.adjacency, join(userId, edge.source_id, edgeId));
  ctx.del(db.adjacency, join(userId, edge.target_id, edgeId));
  return true;
}

/** A plan the proposer could not have made correctly: a bug, refused as a whole (deterministically). */
function checkNewUnits(cmd: { user_id: string }, units: { unit: MemoryUnit }[], level: 1 | 2): string | null {
  const ids = new Set<string>();
  for (const { unit } of units) {
    if (unit.user_id !== cmd.user_id) return `unit ${unit.id} belongs to user '${unit.user_id}', not '${cmd.user_id}'`;
    if (unit.level !== level) return `unit ${unit.id} has level ${unit.level}, expected ${level}`;
    if (ids.has(unit.id)) return `unit ${unit.id} is created twice`;
    ids.add(unit.id);
  }
  return null;
}

const STALE_ANSWER = (stale: string): ConsolidateAnswer => ({
  applied: false, stale, consumed: 0, units_created: 0, reinforced: 0, retired: 0, edges: 0, dropped: 0,
});

export async function applyConsolidate(db: StateDb, ctx: ApplyContext, cmd: ConsolidateCommand): Promise<ConsolidateAnswer | ApplyFailure> {
  const user = cmd.user_id;
  const problem = checkNewUnits(cmd, cmd.units, 1);
  if (problem) return invalid(`memory.consolidate: ${problem}`);
  if (new Set(cmd.consumed.map((c) => c.seq)).size !== cmd.consumed.length) return invalid('memory.consolidate: a pending entry is consumed twice');
  if (new Set(cmd.reinforced.map((r) => r.unit_id)).size !== cmd.reinforced.length) return invalid('memory.consolidate: a unit is reinforced twice');
  const vectors = cmd.units.map((u) => storedVectorOf(u, cmd.embedder_id));
  const bad = vectors.indexOf(undefined);
  if (bad >= 0) return invalid(`memory.consolidate: the vector of unit ${cmd.units[bad].unit.id} is not float32 in canonical base64`);

  // Every record the checks and edges below read, in one getMany per sublevel.
  await ctx.prefetch(db.pending, cmd.consumed.map((c) => c.seq));
  await ctx.prefetch(db.units, [
    ...cmd.units.map((u) => u.unit.id), ...cmd.reinforced.map((r) => r.unit_id), ...cmd.retired.map((r) => r.unit_id),
    ...cmd.edges.flatMap((e) => [e.source_id, e.target_id]),
  ].map((id) => unitKey(user, id)));
  await ctx.prefetch(db.edges, cmd.edges.map((e) => join(user, e.edge_id)));

  // All or nothing: a plan made from a state that no longer holds (a duplicate of an applied command among
  // them) writes nothing; its events still pending are planned again.
  const entries = [];
  for (const ref of cmd.consumed) {
    const entry = await ctx.get(db.pending, ref.seq);
    if (!entry || entry.event_id !== ref.event_id || entry.user_id !== user) return STALE_ANSWER(`event ${ref.event_id} is no longer pending`);
    entries.push({ ref, entry });
  }
  for (const { unit } of cmd.units) {
    if ((await ctx.get(db.units, unitKey(user, unit.id))) !== undefined) return invalid(`memory.consolidate: unit ${unit.id} exists already`);
  }
  const reinforcedUnits: MemoryUnit[] = [];
  for (const r of cmd.reinforced) {
    const unit = await ctx.get(db.units, unitKey(user, r.unit_id));
    if (!unit || unit.retired_at !== null) return STALE_ANSWER(`unit ${r.unit_id} to reinforce is no longer current`);
    reinforcedUnits.push(unit);
  }

  const newest = new Map<string, string>(); // stream → acceptance time of its newest consumed event
  for (const { ref, entry } of entries) {
    ctx.del(db.pending, ref.seq);
    ctx.del(db.pendingByUser, join(user, ref.seq));
    const before = newest.get(entry.stream_id);
    if (before === undefined || entry.accepted_at > before) newest.set(entry.stream_id, entry.accepted_at);
  }
  cmd.units.forEach(({ unit }, i) => writeUnit(db, ctx, unit, vectors[i] ?? null));
  cmd.reinforced.forEach((r, i) => {
    const unit = reinforcedUnits[i];
    const references = [...unit.references, ...r.add_references.filter((id) => !unit.references.includes(id))];
    const importance = Math.min(1, Math.max(0, r.importance));
    reinforcedUnits[i] = { ...unit, references, importance };
    ctx.put(db.units, unitKey(user, unit.id), reinforcedUnits[i]);
  });
  let retired = 0;
  for (const r of cmd.retired) {
    const unit = await ctx.get(db.units, unitKey(user, r.unit_id));
    // Already retired (forgotten, or superseded by another plan): the first retirement stands.
    if (!unit || unit.retired_at !== null) continue;
    ctx.put(db.units, unitKey(user, unit.id), { ...unit, retired_at: r.retired_at, retired_reason: r.reason, superseded_by: r.superseded_by });
    retired++;
  }
  let edges = 0;
  for (const edge of cmd.edges) if (await writeEdge(db, ctx, user, edge)) edges++;
  for (const d of cmd.dropped) ctx.put(db.dropped, join(user, d.event_id), { reason: d.reason, at: cmd.at });
  for (const [stream, at] of [...newest.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    const due = await ctx.get(db.reflectionDue, join(user, stream));
    ctx.put(db.reflectionDue, join(user, stream), { last_event_at: due && due.last_event_at > at ? due.last_event_at : at });
  }

  await ctx.increment(db.meta, 'pending', -entries.length);
  await ctx.increment(db.meta, 'units', cmd.units.length);
  if (cmd.dropped.length > 0) await ctx.increment(db.meta, 'dropped', cmd.dropped.length);
  if (edges > 0) await ctx.increment(db.meta, 'edges', edges);
  return {
    applied: true, stale: null, consumed: entries.length, units_created: cmd.units.length, reinforced: cmd.reinforced.length,
    retired, edges, dropped: cmd.dropped.length,
  };
}

/**
 * Several users' batches, each applied as its own `memory.consolidate` in the command's order. A batch
 * that is stale or refused returns before its first write (applyConsolidate checks everything first),
 * so it leaves nothing behind and the batches after it apply as they would alone.
 */
export async function applyConsolidateUsers(db: StateDb, ctx: ApplyContext, cmd: ConsolidateUsersCommand): Promise<ConsolidateUsersAnswer | ApplyFailure> {
  if (new Set(cmd.users.map((b) => b.user_id)).size !== cmd.users.length) return invalid('memory.consolidate_users: a user has two batches');
  const users: (ConsolidateAnswer | ApplyFailure)[] = [];
  for (const batch of cmd.users) users.push(await applyConsolidate(db, ctx, { ...batch, type: 'memory.consolidate', at: cmd.at }));
  return { users };
}

export async function applyConsolidationFailed(db: StateDb, ctx: ApplyContext, cmd: ConsolidationFailedCommand): Promise<ConsolidationFailedAnswer> {
  let failed = 0;
  for (const ref of cmd.entries) {
    const entry = await ctx.get(db.pending, ref.seq);
    // Consolidated or failed meanwhile (a duplicate command): nothing left to move.
    if (!entry || entry.event_id !== ref.event_id || entry.user_id !== cmd.user_id) continue;
    ctx.del(db.pending, ref.seq);
    ctx.del(db.pendingByUser, join(cmd.user_id, ref.seq));
    ctx.put(db.failed, ref.seq, {
      user_id: entry.user_id, stream_id: entry.stream_id, event_id: entry.event_id, error: cmd.error, attempts: cmd.attempts, at: cmd.at,
    });
    failed++;
  }
  if (failed > 0) {
    await ctx.increment(db.meta, 'pending', -failed);
    await ctx.increment(db.meta, 'failed', failed);
  }
  return { failed };
}

export async function applyInsights(db: StateDb, ctx: ApplyContext, cmd: InsightsCommand): Promise<InsightsAnswer | ApplyFailure> {
  const user = cmd.user_id;
  const problem = checkNewUnits(cmd, cmd.create, 2);
  if (problem) return invalid(`memory.insights: ${problem}`);
  // Vectors as float32 base64 or, in logs written before, JSON numbers (command-vectors.ts): the same records.
  const created = cmd.create.map((c) => storedVectorOf(c, cmd.embedder_id));
  const badCreate = created.indexOf(undefined);
  if (badCreate >= 0) return invalid(`memory.insights: the vector of unit ${cmd.create[badCreate].unit.id} is not float32 in canonical base64`);
  const changed = cmd.update.map((u) => storedVectorOf(u, cmd.embedder_id));
  const badUpdate = changed.indexOf(undefined);
  if (badUpdate >= 0) return invalid(`memory.insights: the vector of unit ${cmd.update[badUpdate].unit_id} is not float32 in canonical base64`);
  for (const { unit } of cmd.create) {
    if ((await ctx.get(db.units, unitKey(user, unit.id))) !== undefined) return invalid(`memory.insights: unit ${unit.id} exists already`);
  }
  cmd.create.forEach(({ unit }, i) => writeUnit(db, ctx, unit, created[i] ?? null));
  let updated = 0;
  for (const [i, u] of cmd.update.entries()) {
    const unit = await ctx.get(db.units, unitKey(user, u.unit_id));
    // Deleted or forgotten since it was planned: the update has nothing to change.
    if (!unit || unit.level !== 2 || unit.retired_at !== null) continue;
    ctx.put(db.units, unitKey(user, unit.id), {
      ...unit, content: u.content, keywords: u.keywords, references: u.references, importance: Math.min(1, Math.max(0, u.importance)),
      valid_time: u.valid_time, memory_type: u.memory_type ?? unit.memory_type,
    });
    const vector = changed[i];
    if (vector) ctx.put(db.vectors, unitKey(user, unit.id), vector);
    updated++;
  }
  let removed = 0;
  for (const id of cmd.removed_edges) if (await removeEdge(db, ctx, user, id)) removed++;
  let edges = 0;
  for (const edge of cmd.edges) if (await writeEdge(db, ctx, user, edge)) edges++;
  for (const r of cmd.reflected) {
    const key = join(user, r.stream_id);
    const due = await ctx.get(db.reflectionDue, key);
    // Events consolidated after the reflection was planned keep the stream due.
    if (due && due.last_event_at <= r.through) ctx.del(db.reflectionDue, key);
  }
  if (cmd.create.length > 0) await ctx.increment(db.meta, 'units', cmd.create.length);
  if (edges - removed !== 0) await ctx.increment(db.meta, 'edges', edges - removed);
  return { created: cmd.create.length, updated, edges, removed_edges: removed };
}
