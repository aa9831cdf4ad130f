/**
 * A user's stored memory as it is, without ranking (CONTRACT §2, extensions): the units consolidation
 * made, the events it kept no memory of, and client-made graph edges between units (§5).
 */
import { randomUUID } from 'node:crypto';
import { badRequest, getUnit, listDropped, listUnits, notFound, settle, type Relation } from '@strata/store';
import type { Principal } from '../auth/principal';
import type { Services } from '../services';
import { unitView } from './views';

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
