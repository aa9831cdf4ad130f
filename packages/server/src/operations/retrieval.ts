/**
 * Retrieval (CONTRACT §3) and its rendering as prompt context (§4): a principal and a validated request
 * in, the ranked units (or the rendered context) out. The scope check is made here, once, for every
 * surface (HTTP, MCP).
 */
import { renderContext } from '@strata/memory/context';
import type { Principal } from '../auth/principal';
import type { Body } from '../schemas';
import type { Services } from '../services';
import { checkIdentifier, checkUuid } from '../validation';
import { retrievedUnitView, whyView } from './views';

/** How many units a context is rendered from when the request does not say. */
export const DEFAULT_CONTEXT_LIMIT = 12;

export interface RetrieveInput {
  user_id: string;
  /** null: the user's memory over every stream */
  stream_id: string | null;
  request: Body<'Retrieve'>;
}

export async function retrieveMemory(services: Services, principal: Principal, input: RetrieveInput) {
  const { user_id, stream_id, request } = input;
  await services.scope.authorizeUser(principal, { user_id, org_ids: [request.org_id], write: false });
  const answer = await services.retrieval.retrieve(user_id, stream_id, request);
  return {
    stream_id,
    query: answer.query,
    results: answer.results.map((r) => ({ unit: retrievedUnitView(r.unit), score: r.score, ...(request.explain && r.signals ? { why: whyView(r.signals) } : {}) })),
    query_time_ms: answer.query_time_ms,
  };
}

export interface ContextInput {
  /** the context request; its `token_budget` wins over `token_budget` below */
  request: Body<'Context'>;
  /** a budget from elsewhere (the X-Memory-Budget header), or undefined: the renderer's default */
  token_budget?: number;
}

export async function memoryContext(services: Services, principal: Principal, input: ContextInput) {
  const { request } = input;
  const userId = checkIdentifier(request.user_id, '/user_id');
  const streamId = request.stream_id ? checkUuid(request.stream_id, '/stream_id') : null;
  await services.scope.authorizeUser(principal, { user_id: userId, org_ids: [request.org_id], write: false });
  const budget = request.token_budget ?? input.token_budget;
  const answer = await services.retrieval.retrieve(userId, streamId, { ...request, limit: request.limit ?? DEFAULT_CONTEXT_LIMIT });
  const rendered = renderContext(answer.results, { format: request.format ?? 'text', token_budget: budget });
  return {
    query: answer.query,
    format: rendered.format,
    strategy: rendered.strategy,
    token_budget: rendered.token_budget,
    used_token_estimate: rendered.used_token_estimate,
    matched_count: rendered.matched_count,
    included_count: rendered.included_count,
    truncated: rendered.truncated,
    context: rendered.context,
    hits: rendered.hits,
    query_time_ms: answer.query_time_ms,
  };
}
