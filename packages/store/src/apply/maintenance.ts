import type { ApplyContext } from '../apply-context';
import type {
  EdgeAddAnswer, EdgeAddCommand, MemoryDeleteAnswer, MemoryDeleteCommand, SemanticExecuteAnswer, SemanticExecuteCommand,
  SemanticPlanAnswer, SemanticPlanCommand,
} from '../commands';
import type { StateDb } from '../db';
import { InvariantError } from '@strata/raft';
import { failure, forbidden, notFound, StrataError, type ApplyFailure } from '../errors';
import { afterPrefix, join, prefixRange, SEP } from '../keys';
import { RELATIONS } from '../types';
import { storedVectorOf } from '../command-vectors';
import { orgUnitKey, removeEdge, subjectKey, unitKey, writeEdge, writeUnit } from './memory';

/**
 * Apply of memory maintenance (CONTRACT §5, §7): edges added by clients, hard deletes, and semantic
 * forget/update plans (stored at preview, consumed at execution). Every failure returns before the
 * first write, so a refused command changes nothing.
 */

const invalid = (message: string): ApplyFailure => failure(new StrataError('invalid_command', message));

export async function applyEdgeAdd(db: StateDb, ctx: ApplyContext, cmd: EdgeAddCommand): Promise<EdgeAddAnswer | ApplyFailure> {
  const { edge } = cmd;
  const user = cmd.user_id;
  if (edge.user_id !== user) return invalid('graph.add_edge: the edge belongs to another user');
  if (!(RELATIONS as readonly string[]).includes(edge.relation)) return invalid(`graph.add_edge: unknown relation '${edge.relation}'`);
  if (!Number.isFinite(edge.weight) || edge.weight < 0 || edge.weight > 1) return invalid('graph.add_edge: weight must be in [0, 1]');
  if (edge.source_id === edge.target_id) return invalid('graph.add_edge: an edge joins two different units');
  for (const [end, id] of [['source_id', edge.source_id], ['target_id', edge.target_id]] as const) {
    if ((await ctx.get(db.units, unitKey(user, id))) === undefined) return failure(notFound(`User '${user}' has no memory unit '${id}' (${end}).`));
  }
  if (!(await writeEdge(db, ctx, user, edge))) return invalid(`graph.add_edge: edge ${edge.edge_id} exists already`);
  await ctx.increment(db.meta, 'edges', 1);
  return { edge_id: edge.edge_id };
}

/**
 * Removes a unit from every sublevel: record, vector, retrieval stats, subject and org indexes, and each edge touching it
 * (the edge record and both adjacency entries). False when the unit does not exist.
 */
export async function deleteUnit(db: StateDb, ctx: ApplyContext, userId: string, unitId: string, removedEdges: string[]): Promise<boolean> {
  const key = unitKey(userId, unitId);
  const unit = await ctx.get(db.units, key);
  if (!unit) return false;
  // The indexes below are found from the record: one stored under another key would leave them behind.
  if (unit.id !== unitId || unit.user_id !== userId) throw new InvariantError(`unit stored under ${userId}/${unitId} is ${unit.user_id}/${unit.id}`);
  ctx.del(db.units, key);
  ctx.del(db.vectors, key);
  ctx.del(db.unitStats, key);
  if (unit.subject && unit.attribute) ctx.del(db.unitBySubject, subjectKey(userId, unit.subject, unit.attribute, unitId));
  if (unit.org_id) ctx.del(db.orgUnits, orgUnitKey(unit.org_id, userId, unitId));
  // The adjacency range as committed; an edge already removed by this command (both ends deleted) is skipped by removeEdge.
  const prefix = join(userId, unitId) + SEP;
  const edgeIds: string[] = [];
  for await (const k of db.adjacency.keys(prefixRange(userId, unitId))) edgeIds.push(k.slice(prefix.length));
  for (const edgeId of edgeIds) if (await removeEdge(db, ctx, userId, edgeId)) removedEdges.push(edgeId);
  await ctx.increment(db.meta, 'units', -1);
  return true;
}

/** Removes an L0 event (record, id index, and its pending entry if it was not consolidated yet). False when absent. */
export async function deleteEvent(db: StateDb, ctx: ApplyContext, userId: string, eventId: string): Promise<boolean> {
  const idKey = join(userId, eventId);
  const at = await ctx.get(db.eventIds, idKey);
  if (!at) return false;
  ctx.del(db.events, join(userId, at.stream_id, at.seq));
  ctx.del(db.eventIds, idKey);
  ctx.del(db.dropped, idKey);
  const pending = await ctx.get(db.pending, at.seq);
  if (pending && pending.event_id === eventId) {
    ctx.del(db.pending, at.seq);
    ctx.del(db.pendingByUser, join(userId, at.seq));
    await ctx.increment(db.meta, 'pending', -1);
  }
  await ctx.increment(db.meta, 'events', -1);
  return true;
}

async function deleteAll(db: StateDb, ctx: ApplyContext, userId: string, unitIds: string[], eventIds: string[]): Promise<MemoryDeleteAnswer> {
  const answer: MemoryDeleteAnswer = { deleted_unit_ids: [], deleted_event_ids: [], deleted_edge_ids: [] };
  for (const id of new Set(unitIds)) if (await deleteUnit(db, ctx, userId, id, answer.deleted_edge_ids)) answer.deleted_unit_ids.push(id);
  for (const id of new Set(eventIds)) if (await deleteEvent(db, ctx, userId, id)) answer.deleted_event_ids.push(id);
  if (answer.deleted_edge_ids.length > 0) await ctx.increment(db.meta, 'edges', -answer.deleted_edge_ids.length);
  return answer;
}

export async function applyMemoryDelete(db: StateDb, ctx: ApplyContext, cmd: MemoryDeleteCommand): Promise<MemoryDeleteAnswer | ApplyFailure> {
  if (cmd.require_units) {
    for (const id of cmd.unit_ids) {
      if ((await ctx.get(db.units, unitKey(cmd.user_id, id))) === undefined) return failure(notFound(`User '${cmd.user_id}' has no memory unit '${id}'.`));
    }
  }
  return deleteAll(db, ctx, cmd.user_id, cmd.unit_ids, cmd.event_ids);
}

/** At most this many expired plans are pruned per preview (bounded work per command). */
const PRUNE_BATCH = 100;

export async function applySemanticPlan(db: StateDb, ctx: ApplyContext, cmd: SemanticPlanCommand): Promise<SemanticPlanAnswer | ApplyFailure> {
  const r = cmd.record;
  if ((await ctx.get(db.semanticPlans, r.plan_id)) !== undefined) return invalid(`semantic.plan: plan ${r.plan_id} exists already`);
  let pruned = 0;
  // Keys are expires_at \0 plan_id: every key below afterPrefix(at) has expired at the command's time.
  for await (const [key, planId] of db.planExpiry.iterator({ lt: afterPrefix(cmd.at), limit: PRUNE_BATCH })) {
    ctx.del(db.planExpiry, key);
    ctx.del(db.semanticPlans, planId);
    pruned++;
  }
  ctx.put(db.semanticPlans, r.plan_id, r);
  ctx.put(db.planExpiry, join(r.expires_at, r.plan_id), r.plan_id);
  return { plan_id: r.plan_id, pruned };
}

export async function applySemanticExecute(db: StateDb, ctx: ApplyContext, cmd: SemanticExecuteCommand): Promise<SemanticExecuteAnswer | ApplyFailure> {
  const user = cmd.user_id;
  const record = await ctx.get(db.semanticPlans, cmd.plan_id);
  // Executed (consumed) and expired plans are gone as far as a client can tell.
  if (!record || record.expires_at <= cmd.at) return failure(notFound(`No plan '${cmd.plan_id}' to execute (unknown, expired or executed already); make a new preview.`));
  if (record.user_id !== user) return failure(forbidden('This plan belongs to another user.'));
  const created = cmd.create;
  if (created) {
    if (created.unit.user_id !== user || created.unit.level !== 1) return invalid('semantic.execute: the new unit must be an L1 unit of the plan\'s user');
    if ((await ctx.get(db.units, unitKey(user, created.unit.id))) !== undefined) return invalid(`semantic.execute: unit ${created.unit.id} exists already`);
  }
  const createdVector = created ? storedVectorOf(created, cmd.embedder_id) : null;
  if (createdVector === undefined) return invalid('semantic.execute: the new unit\'s vector is not float32 in canonical base64');

  const retired: string[] = [];
  for (const r of cmd.retire) {
    const key = unitKey(user, r.unit_id);
    const unit = await ctx.get(db.units, key);
    if (!unit) continue;
    if (r.retired_reason === 'forgotten') {
      if (unit.retired_reason === 'forgotten') continue;
      // A superseded unit keeps when it stopped being current, so `as_of` history stays true.
      ctx.put(db.units, key, { ...unit, retired_at: unit.retired_at ?? r.retired_at, retired_reason: 'forgotten', superseded_by: unit.superseded_by ?? r.superseded_by });
    } else {
      if (unit.retired_at !== null) continue;
      ctx.put(db.units, key, { ...unit, retired_at: r.retired_at, retired_reason: 'superseded', superseded_by: r.superseded_by });
    }
    retired.push(unit.id);
  }
  if (created) {
    writeUnit(db, ctx, created.unit, createdVector);
    await ctx.increment(db.meta, 'units', 1);
  }
  // Deletes before new edges: deleteUnit finds a unit's edges in the committed adjacency, so an edge
  // written by this command to a unit it deletes would be left dangling; written after, writeEdge
  // refuses it (its end is gone). Found by the store simulator (packages/store/src/sim).
  const deleted = await deleteAll(db, ctx, user, cmd.delete_unit_ids, cmd.delete_event_ids);
  let edges = 0;
  for (const edge of cmd.edges) if (await writeEdge(db, ctx, user, edge)) edges++;
  if (edges > 0) await ctx.increment(db.meta, 'edges', edges);
  ctx.del(db.semanticPlans, record.plan_id);
  ctx.del(db.planExpiry, join(record.expires_at, record.plan_id));
  return { ...deleted, retired_unit_ids: retired, created_unit_ids: created ? [created.unit.id] : [], edges };
}
