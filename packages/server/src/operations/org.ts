/**
 * Organization knowledge (CONTRACT §9), counted over every shard: each shard group's replica gives its
 * records of the org (units that carry the org_id, any user), its page and its partial counts, on a
 * node that holds the group (services.reads: here, or another node when this one does not); the
 * answering node merges them with the org module's merge functions (the same result as one list over
 * all records). Only units that carry the org's id are read: never another org's, never private memory.
 */
import { mergeKnowledgePages, mergePartials, metricsOf, type KnowledgeQuery } from '@strata/memory/org';
import { notFound } from '@strata/store';
import type { Principal } from '../auth/principal';
import { authorizeOrg } from '../auth/scope';
import type { Services } from '../services';
import { checkUuid } from '../validation';

/** The org's knowledge: filtered, sorted, paged by cursor, with a summary. */
export async function listOrgKnowledge(services: Services, principal: Principal, input: { org_id: string; query: KnowledgeQuery }) {
  authorizeOrg(principal, input.org_id);
  const pages = await services.reads.each('orgKnowledgePage', { org_id: input.org_id, query: input.query });
  return mergeKnowledgePages(pages, input.query);
}

export async function orgKnowledgeMetrics(services: Services, principal: Principal, input: { org_id: string }) {
  authorizeOrg(principal, input.org_id);
  const partials = await services.reads.each('orgKnowledgePartial', { org_id: input.org_id });
  return metricsOf(input.org_id, mergePartials(partials));
}

/** One knowledge item with its contributions (404 when absent or of another organization). */
export async function orgKnowledgeItem(services: Services, principal: Principal, input: { org_id: string; id: string }) {
  authorizeOrg(principal, input.org_id);
  const absent = () => notFound(`Organization '${input.org_id}' has no knowledge item '${input.id}'.`);
  let id: string;
  try {
    id = checkUuid(input.id, '/id'); // unit ids are UUIDs: anything else names no item (and is not sent to other nodes)
  } catch {
    throw absent();
  }
  const found = (await services.reads.each('orgKnowledgeItem', { org_id: input.org_id, id })).find((d) => d !== null);
  if (found) return found;
  throw absent();
}
