/**
 * `POST /v1/memory/context` (CONTRACT.md §4): retrieval, then rendering within a token budget
 * (`@strata/memory` context). The user is named in the body: the route declares scope `user`, and
 * auth/scope.ts reads body.user_id.
 */
import { renderContext } from '@strata/memory/context';
import { badRequest } from '@strata/store';
import type { RouteContext, RouteSpec } from '../http/route';
import type { RetrievalService } from '../indexes/retrieval-service';
import type { Body } from '../schemas';
import { checkIdentifier, checkUuid } from '../validation';

export const DEFAULT_CONTEXT_LIMIT = 12;

/** The budget: the body's, else the X-Memory-Budget header's, else undefined (the renderer's default). */
export function budgetOf(ctx: RouteContext, body: Body<'Context'>): number | undefined {
  if (body.token_budget !== null && body.token_budget !== undefined) return body.token_budget;
  const header = ctx.req.headers['x-memory-budget'];
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === '') return undefined;
  if (!/^\s*-?\d+\s*$/.test(value)) {
    throw badRequest('validation_failed', 'The X-Memory-Budget header must be an integer number of tokens.', [{ path: 'header:x-memory-budget', message: 'must be an integer' }]);
  }
  return Number(value);
}

export function contextRoutes(retrieval: RetrievalService): RouteSpec[] {
  return [
    {
      method: 'post', path: '/v1/memory/context', tag: 'retrieval', auth: 'read', body: 'Context', writes: false, scope: 'user',
      summary: 'Retrieval rendered as prompt context (text or XML) within a BPE token budget; X-Memory-Budget header when the body has none.',
      handler: async (ctx) => {
        const body = ctx.body;
        const userId = checkIdentifier(body.user_id, '/user_id');
        const streamId = body.stream_id ? checkUuid(body.stream_id, '/stream_id') : null;
        const budget = budgetOf(ctx, body);
        const answer = await retrieval.retrieve(userId, streamId, { ...body, limit: body.limit ?? DEFAULT_CONTEXT_LIMIT });
        const rendered = renderContext(answer.results, { format: body.format ?? 'text', token_budget: budget });
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
      },
    },
  ];
}
