/**
 * `POST /v1/users/:user_id/graph/edges` (CONTRACT §5): one client-made edge between two of the user's
 * memory units, proposed as `graph.add_edge` (apply checks both ends again: the answer is the log's).
 */
import { randomUUID } from 'node:crypto';
import { badRequest, getUnit, notFound, RELATIONS, settle, type Relation } from '@strata/store';
import type { RouteSpec } from '../http/route';
import { snakeCase } from '../schemas';
import type { Services } from '../services';

/** The contract's relation names and their snake_case spellings (the schema's enum is the same list). */
const BY_NAME = new Map<string, Relation>([...RELATIONS.map((r) => [r, r] as const), ...RELATIONS.map((r) => [snakeCase(r), r] as const)]);

export function parseRelation(name: string): Relation | undefined {
  return BY_NAME.get(name);
}

export function edgeRoutes(services: Services): RouteSpec[] {
  return [
    {
      method: 'post', path: '/v1/users/:user_id/graph/edges', tag: 'graph', auth: 'write', body: 'Edge',
      summary: "Link two of the user's memory units (both must exist: 404 otherwise); weight in [0, 1], default 1.",
      handler: async ({ params, body }) => {
        const userId = params.user_id;
        const b = body;
        const relation = parseRelation(b.relation)!;
        const source = b.source_id.toLowerCase();
        const target = b.target_id.toLowerCase();
        if (source === target) throw badRequest('validation_failed', 'source_id and target_id must name two different units.', [{ path: '/target_id', message: 'must differ from source_id' }]);
        const shard = services.shards.forUser(userId);
        for (const [path, id] of [['source_id', source], ['target_id', target]] as const) {
          if (!(await getUnit(shard.db, userId, id))) throw notFound(`User '${userId}' has no memory unit '${id}' (${path}).`);
        }
        const answer = settle(await shard.log.propose({
          type: 'graph.add_edge', user_id: userId,
          edge: { edge_id: randomUUID(), user_id: userId, source_id: source, target_id: target, relation, weight: b.weight ?? 1, created_at: new Date().toISOString() },
        }));
        return { status: 'accepted', edge_id: answer.edge_id };
      },
    },
  ];
}
