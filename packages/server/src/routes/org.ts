/**
 * Organization knowledge (CONTRACT §9), counted over every shard: each shard's replica gives its
 * records of the org (units that carry the org_id, any user), its page and its partial counts; the
 * answering node merges them with the org module's merge functions (the same result as one list over
 * all records). Only units that carry the org's id are read: never another org's, never private memory.
 */
import {
  knowledgeDetail, knowledgePartial, listKnowledgeShard, mergeKnowledgePages, mergePartials, metricsOf, orgKnowledgeFromUnits,
  parseKnowledgeQuery, type OrgKnowledgeRecord,
} from '@strata/memory/org';
import { notFound, orgUnitsOf } from '@strata/store';
import type { RouteSpec } from '../http/route';
import type { Services } from '../services';

/** The org's knowledge records of each shard (one list per shard, from its local replica). */
async function shardRecords(services: Services, orgId: string): Promise<OrgKnowledgeRecord[][]> {
  return Promise.all(services.shards.all().map(async (shard) => orgKnowledgeFromUnits(orgId, await orgUnitsOf(shard.db, orgId))));
}

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
      method: 'get', path: '/v1/organizations/:org_id/knowledge', tag: 'organizations', auth: 'read', queryParams: QUERY_PARAMS,
      summary: "The organization's knowledge over all shards: filtered, sorted, paged by cursor, with a summary.",
      handler: async ({ params, query }) => {
        const q = parseKnowledgeQuery(query);
        const perShard = await shardRecords(services, params.org_id);
        return mergeKnowledgePages(perShard.map((records) => listKnowledgeShard(records, q)), q);
      },
    },
    {
      method: 'get', path: '/v1/organizations/:org_id/knowledge/metrics', tag: 'organizations', auth: 'read',
      summary: "Counts of the organization's knowledge over all shards.",
      handler: async ({ params }) => {
        const perShard = await shardRecords(services, params.org_id);
        return metricsOf(params.org_id, mergePartials(perShard.map((records) => knowledgePartial(records))));
      },
    },
    {
      method: 'get', path: '/v1/organizations/:org_id/knowledge/:id', tag: 'organizations', auth: 'read',
      summary: 'One knowledge item with its contributions (404 when absent or of another organization).',
      handler: async ({ params }) => {
        const id = params.id.toLowerCase();
        for (const records of await shardRecords(services, params.org_id)) {
          const found = records.find((r) => r.unit.id === id);
          if (found) return knowledgeDetail(found);
        }
        throw notFound(`Organization '${params.org_id}' has no knowledge item '${params.id}'.`);
      },
    },
  ];
}
