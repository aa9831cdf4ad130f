/** Organization knowledge (CONTRACT §9): the adapters of operations/org.ts. */
import { parseKnowledgeQuery } from '@strata/memory/org';
import { callerOf, type RouteSpec } from '../http/route';
import { listOrgKnowledge, orgKnowledgeItem, orgKnowledgeMetrics } from '../operations/org';
import type { Services } from '../services';

const QUERY_PARAMS = [
  { name: 'q', schema: { type: 'string' }, description: 'every term must occur in the content or keywords' },
  { name: 'contributor', schema: { type: 'string' }, description: 'a contributor user id' },
  { name: 'source_type', schema: { type: 'string' }, description: 'factual or procedural' },
  { name: 'sort', schema: { type: 'string', enum: ['published_desc', 'contributions_desc', 'topic_asc'], default: 'published_desc' } },
  { name: 'limit', schema: { type: 'integer', minimum: 1, default: 50 }, description: 'capped at 500' },
  { name: 'cursor', schema: { type: 'string' }, description: 'next_cursor of the previous page' },
];

export function orgRoutes(services: Services): RouteSpec[] {
  return [
    {
      method: 'get', path: '/v1/organizations/:org_id/knowledge', tag: 'organizations', auth: 'read', queryParams: QUERY_PARAMS, scope: 'operation',
      summary: "The organization's knowledge over all shards: filtered, sorted, paged by cursor, with a summary.",
      handler: (ctx) => listOrgKnowledge(services, callerOf(ctx), { org_id: ctx.params.org_id, query: parseKnowledgeQuery(ctx.query) }),
    },
    {
      method: 'get', path: '/v1/organizations/:org_id/knowledge/metrics', tag: 'organizations', auth: 'read', scope: 'operation',
      summary: "Counts of the organization's knowledge over all shards.",
      handler: (ctx) => orgKnowledgeMetrics(services, callerOf(ctx), { org_id: ctx.params.org_id }),
    },
    {
      method: 'get', path: '/v1/organizations/:org_id/knowledge/:id', tag: 'organizations', auth: 'read', scope: 'operation',
      summary: 'One knowledge item with its contributions (404 when absent or of another organization).',
      handler: (ctx) => orgKnowledgeItem(services, callerOf(ctx), { org_id: ctx.params.org_id, id: ctx.params.id }),
    },
  ];
}
