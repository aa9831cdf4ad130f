/**
 * Routes to read a user's stored memory as it is (no ranking): the units consolidation made, one unit
 * with its history (CONTRACT §2), and the events it kept no memory of. For operators, the dashboard and
 * tests: with them, every accepted event can be traced to a unit (`references`) or to a reason it was
 * dropped. Adapters of operations/memories.ts.
 */
import { badRequest } from '@strata/store';
import { callerOf, pageParams, type RouteSpec } from '../http/route';
import { addFacts } from '../operations/facts';
import { getMemory, listDroppedEvents, listMemories } from '../operations/memories';
import type { Services } from '../services';
import { queryPage } from '../validation';

function invalidQuery(name: string, message: string) {
  return badRequest('validation_failed', `${name} ${message}.`, [{ path: `/${name}`, message }]);
}

function parseBool(name: string, value: unknown): boolean {
  if (value === undefined || value === '' || value === 'false') return false;
  if (value === 'true') return true;
  throw invalidQuery(name, 'must be true or false');
}

function parseLevel(value: unknown): 1 | 2 | undefined {
  if (value === undefined || value === '') return undefined;
  if (value === '1' || value === '2') return Number(value) as 1 | 2;
  throw invalidQuery('level', 'must be 1 or 2');
}

export function memoryRoutes(services: Services): RouteSpec[] {
  return [
    {
      method: 'post', path: '/v1/users/:user_id/facts', tag: 'memory', auth: 'write', body: 'Facts', scope: 'operation',
      summary: 'Bring your own extraction: each fact becomes an L1 unit at once (replicated, indexed before the answer), correcting the current unit of the same subject and attribute; atomic.',
      handler: (ctx) => addFacts(services, callerOf(ctx), { user_id: ctx.params.user_id, facts: ctx.body.facts }),
    },
    {
      method: 'get', path: '/v1/users/:user_id/memories', tag: 'memory', auth: 'read', scope: 'operation',
      summary: "Extension: the user's memory units (L1 and L2) in id order, paged by cursor; retired units only on request.",
      queryParams: [
        { name: 'include_retired', schema: { type: 'boolean', default: false }, description: 'also superseded and forgotten units' },
        { name: 'level', schema: { type: 'integer', enum: [1, 2] } },
        ...pageParams(100, 1000),
      ],
      handler: ({ params, query, principal }) => listMemories(services, callerOf({ principal }), {
        user_id: params.user_id, include_retired: parseBool('include_retired', query.include_retired), level: parseLevel(query.level),
        ...queryPage(query, 100, 1000),
      }),
    },
    {
      method: 'get', path: '/v1/users/:user_id/memories/:id', tag: 'memory', auth: 'read', scope: 'operation',
      summary: 'One unit (current or retired) with its versions (the superseded_by chain, oldest first), its edges and their other ends, and its source events.',
      handler: (ctx) => getMemory(services, callerOf(ctx), { user_id: ctx.params.user_id, id: ctx.params.id }),
    },
    {
      method: 'get', path: '/v1/users/:user_id/events/dropped', tag: 'memory', auth: 'read', scope: 'operation',
      summary: 'Extension: events consolidation kept no memory of (noise, small talk), each with the reason.',
      handler: (ctx) => listDroppedEvents(services, callerOf(ctx), { user_id: ctx.params.user_id }),
    },
  ];
}
