/**
 * Organization knowledge (CONTRACT §9), counted over every shard: each shard's replica gives its
 * records of the org (units that carry the org_id, any user), its page and its partial counts; the
 * answering node merges them with the org module's merge functions (the same result as one list over
 * all records). Only units that carry the org's id are read: never another org's, never private memory.
 */
import {
  knowledgeDetail, knowledgePartial, listKnowledgeShard, mergeKnowledgePages, mergePartials, metricsOf, orgKnowledgeFromUnits,
  type KnowledgeQuery, type OrgKnowledgeRecord,
} from '@strata/memory/org';
import { notFound, orgUnitsOf } from '@strata/store';
import type { Principal } from '../auth/principal';
import { authorizeOrg } from '../auth/scope';
import type { Services } from '../services';

/** The org's knowledge records of each shard (one list per shard, from its local replica). */
async function shardRecords(services: Services, orgId: string): Promise<OrgKnowledgeRecord[][]> {
  return Promise.all(services.shards.all().map(async (shard) => orgKnowledgeFromUnits(orgId, await orgUnitsOf(shard.db, orgId))));
}

/** The org's knowledge: filtered, sorted, paged by cursor, with a summary. */
export async function listOrgKnowledge(services: Services, principal: Principal, input: { org_id: string; query: KnowledgeQuery }) {
  authorizeOrg(principal, input.org_id);
  const perShard = await shardRecords(services, input.org_id);
  return mergeKnowledgePages(perShard.map((records) => listKnowledgeShard(records, input.query)), input.query);
}

export async function orgKnowledgeMetrics(services: Services, principal: Principal, input: { org_id: string }) {
  authorizeOrg(principal, input.org_id);
  const perShard = await shardRecords(services, input.org_id);
  return metricsOf(input.org_id, mergePartials(perShard.map((records) => knowledgePartial(records))));
}

/** One knowledge item with its contributions (404 when absent or of another organization). */
export async function orgKnowledgeItem(services: Services, principal: Principal, input: { org_id: string; id: string }) {
  authorizeOrg(principal, input.org_id);
  const id = input.id.toLowerCase();
  for (const records of await shardRecords(services, input.org_id)) {
    const found = records.find((r) => r.unit.id === id);
    if (found) return knowledgeDetail(found);
  }
  throw notFound(`Organization '${input.org_id}' has no knowledge item '${input.id}'.`);
}
