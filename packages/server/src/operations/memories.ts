/**
 * A user's stored memory as it is, without ranking (CONTRACT §2, extensions): the units consolidation
 * made, the events it kept no memory of, and client-made graph edges between units (§5).
 */
import { randomUUID } from 'node:crypto';
import {
  allUnits, badRequest, edgesOfUnit, getEdge, getEvent, getUnit, listDropped, listEdgesPage, listUnits, notFound, settle,
  type Edge, type MemoryUnit, type Relation,
} from '@strata/store';
import type { Principal } from '../auth/principal';
import type { Services } from '../services';
import { edgeView, eventView, unitView } from './views';

export interface ListMemoriesInput {
  user_id: string;
  /** also superseded and forgotten units */
  include_retired: boolean;
  level?: 1 | 2;
  /** next_cursor of the previous page */
  after: string | null;
  limit: number;
}

/** The user's L1 and L2 units in id order, paged by cursor. */
export async function listMemories(services: Services, principal: Principal, input: ListMemoriesInput) {
  await services.scope.authorizeUser(principal, { user_id: input.user_id, write: false });
  const page = await listUnits(services.shards.forUser(input.user_id).db, input.user_id, {
    includeRetired: input.include_retired, level: input.level, after: input.after, limit: input.limit,
  });
  return { memories: page.units.map(unitView), next_cursor: page.next_cursor };
}

/**
 * Every version of the fact a unit states: the units linked to it by `superseded_by` (corrections by
 * consolidation, semantic updates), both ways and transitively, in transaction-time order, the unit
 * itself included. Each version's transaction_time and retired_at bound when it was current: the
 * `as_of` timeline of the fact.
 */
function versionChain(unit: MemoryUnit, units: MemoryUnit[]): MemoryUnit[] {
  const byId = new Map(units.map((u) => [u.id, u]));
  const replaced = new Map<string, MemoryUnit[]>(); // successor id → the units it superseded
  for (const u of units) {
    if (u.superseded_by) replaced.set(u.superseded_by, [...(replaced.get(u.superseded_by) ?? []), u]);
  }
  const seen = new Map<string, MemoryUnit>([[unit.id, unit]]);
  const queue = [unit];
  while (queue.length > 0) {
    const u = queue.pop()!;
    const next = u.superseded_by ? byId.get(u.superseded_by) : undefined;
    for (const v of [...(next ? [next] : []), ...(replaced.get(u.id) ?? [])]) {
      if (!seen.has(v.id)) {
        seen.set(v.id, v);
        queue.push(v);
      }
    }
  }
  const key = (u: MemoryUnit) => `${u.transaction_time} ${u.id}`; // RFC 3339 UTC times sort as strings
  return [...seen.values()].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/**
 * One unit (current or retired) with its versions, its edges (each end's unit in `neighbours`) and the
 * source events it was made from (CONTRACT §2): where a memory came from and how it changed. A
 * reference whose event is no longer stored (deleted with `cascade=events`) has no source event.
 */
export async function getMemory(services: Services, principal: Principal, input: { user_id: string; id: string }) {
  const userId = input.user_id;
  await services.scope.authorizeUser(principal, { user_id: userId, write: false });
  const db = services.shards.forUser(userId).db;
  const id = input.id.toLowerCase();
  const unit = await getUnit(db, userId, id);
  if (!unit) throw notFound(`User '${userId}' has no memory unit '${input.id}'.`);
  // Versions may be linked by a semantic update to a unit of another subject, so every unit is read once.
  const versions = versionChain(unit, await allUnits(db, userId));
  const edges = (await Promise.all((await edgesOfUnit(db, userId, id)).map((a) => getEdge(db, userId, a.edge_id))))
    .filter((e): e is Edge => e !== undefined);
  const neighbourIds = [...new Set(edges.map((e) => (e.source_id === id ? e.target_id : e.source_id)))];
  const neighbours = (await Promise.all(neighbourIds.map((n) => getUnit(db, userId, n)))).filter((u): u is MemoryUnit => u !== undefined);
  const events = (await Promise.all(unit.references.map((e) => getEvent(db, userId, e)))).filter((e) => e !== undefined);
  return {
    unit: unitView(unit),
    versions: versions.map(unitView),
    edges: edges.map(edgeView),
    neighbours: neighbours.map(unitView),
    source_events: events.map((e) => ({ ...eventView(e), stream_id: e.stream_id })),
  };
}

/** Extension: the user's graph edges (client-made and consolidation-made), in edge_id order, paged by cursor. */
export async function listEdges(services: Services, principal: Principal, input: { user_id: string; after: string | null; limit: number }) {
  await services.scope.authorizeUser(principal, { user_id: input.user_id, write: false });
  const page = await listEdgesPage(services.shards.forUser(input.user_id).db, input.user_id, input.after, input.limit);
  return { edges: page.edges.map(edgeView), next_cursor: page.next_cursor };
}

/** The events consolidation judged to be noise, each with the reason. */
export async function listDroppedEvents(services: Services, principal: Principal, input: { user_id: string }) {
  await services.scope.authorizeUser(principal, { user_id: input.user_id, write: false });
  const dropped = await listDropped(services.shards.forUser(input.user_id).db, input.user_id);
  return { dropped: dropped.map((d) => ({ event_id: d.event_id, reason: d.reason, dropped_at: d.at })) };
}

export interface AddEdgeInput {
  user_id: string;
  source_id: string;
  target_id: string;
  relation: Relation;
  /** in [0, 1]; default 1 */
  weight?: number | null;
}

/**
 * One client-made edge between two of the user's units, proposed as `graph.add_edge` (apply checks both
 * ends again: the answer is the log's).
 */
export async function addEdge(services: Services, principal: Principal, input: AddEdgeInput) {
  const userId = input.user_id;
  await services.scope.authorizeUser(principal, { user_id: userId, write: true });
  const source = input.source_id.toLowerCase();
  const target = input.target_id.toLowerCase();
  if (source === target) throw badRequest('validation_failed', 'source_id and target_id must name two different units.', [{ path: '/target_id', message: 'must differ from source_id' }]);
  const shard = services.shards.forUser(userId);
  for (const [path, id] of [['source_id', source], ['target_id', target]] as const) {
    if (!(await getUnit(shard.db, userId, id))) throw notFound(`User '${userId}' has no memory unit '${id}' (${path}).`);
  }
  const answer = settle(await shard.log.propose({
    type: 'graph.add_edge', user_id: userId,
    edge: { edge_id: randomUUID(), user_id: userId, source_id: source, target_id: target, relation: input.relation, weight: input.weight ?? 1, created_at: new Date().toISOString() },
  }));
  return { status: 'accepted' as const, edge_id: answer.edge_id };
}
