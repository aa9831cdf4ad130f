/**
 * `POST /v1/memory/context` (CONTRACT.md §4): the adapter of operations/retrieval.ts. The user is named
 * in the body; the budget comes from the body, else from the X-Memory-Budget header.
 */
import { badRequest } from '@strata/store';
import { callerOf, type RouteContext, type RouteSpec } from '../http/route';
import { memoryContext } from '../operations/retrieval';
import type { Services } from '../services';

/** The X-Memory-Budget header's budget, or undefined when it is absent (read only when the body has none). */
function headerBudget(ctx: RouteContext): number | undefined {
  const header = ctx.req.headers['x-memory-budget'];
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === '') return undefined;
  if (!/^\s*-?\d+\s*$/.test(value)) {
    throw badRequest('validation_failed', 'The X-Memory-Budget header must be an integer number of tokens.', [{ path: 'header:x-memory-budget', message: 'must be an integer' }]);
  }
  return Number(value);
}

export function contextRoutes(services: Services): RouteSpec[] {
  return [
    {
      method: 'post', path: '/v1/memory/context', tag: 'retrieval', auth: 'read', body: 'Context', writes: false, scope: 'operation',
      summary: 'Retrieval rendered as prompt context (text or XML) within a BPE token budget; X-Memory-Budget header when the body has none.',
      handler: (ctx) => memoryContext(services, callerOf(ctx), {
        request: ctx.body, token_budget: ctx.body.token_budget == null ? headerBudget(ctx) : undefined,
      }),
    },
  ];
}
