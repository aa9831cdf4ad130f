/**
 * `POST /v1/users/:user_id/graph/edges` (CONTRACT §5) and, as an extension, `GET` on the same path (the
 * user's edges, for drawing the graph): adapters of operations/memories.ts addEdge and listEdges.
 */
import { RELATIONS, type Relation } from '@strata/store';
import { callerOf, pageParams, type RouteSpec } from '../http/route';
import { addEdge, listEdges } from '../operations/memories';
import { snakeCase } from '../schemas';
import type { Services } from '../services';
import { queryPage } from '../validation';

/** The contract's relation names and their snake_case spellings (the schema's enum is the same list). */
const BY_NAME = new Map<string, Relation>([...RELATIONS.map((r) => [r, r] as const), ...RELATIONS.map((r) => [snakeCase(r), r] as const)]);

function parseRelation(name: string): Relation | undefined {
  return BY_NAME.get(name);
}

export function edgeRoutes(services: Services): RouteSpec[] {
  return [
    {
      method: 'post', path: '/v1/users/:user_id/graph/edges', tag: 'graph', auth: 'write', body: 'Edge', scope: 'operation',
      summary: "Link two of the user's memory units (both must exist: 404 otherwise); weight in [0, 1], default 1.",
      handler: async (ctx) => addEdge(services, callerOf(ctx), {
        user_id: ctx.params.user_id, source_id: ctx.body.source_id, target_id: ctx.body.target_id,
        relation: parseRelation(ctx.body.relation)!, weight: ctx.body.weight,
      }),
    },
    {
      method: 'get', path: '/v1/users/:user_id/graph/edges', tag: 'graph', auth: 'read', scope: 'operation',
      summary: "Extension: the user's edges (made by clients and by consolidation) in edge_id order, paged by cursor.",
      queryParams: pageParams(1000, 10000),
      handler: async (ctx) => listEdges(services, callerOf(ctx), { user_id: ctx.params.user_id, ...queryPage(ctx.query, 1000, 10000) }),
    },
  ];
}
