/** `POST /v1/users/:user_id/streams/:stream_id/retrieve` (CONTRACT.md §3): the adapter of operations/retrieval.ts. */
import { callerOf, type RouteSpec } from '../http/route';
import { retrieveMemory } from '../operations/retrieval';
import type { Services } from '../services';

export function retrieveRoutes(services: Services): RouteSpec[] {
  return [
    {
      method: 'post', path: '/v1/users/:user_id/streams/:stream_id/retrieve', tag: 'retrieval', auth: 'read', body: 'Retrieve', writes: false, scope: 'operation',
      summary: "Hybrid retrieval (vector + BM25 + graph + images, fused and reranked) over the user's memory and, with org_id, the org's knowledge.",
      handler: (ctx) => retrieveMemory(services, callerOf(ctx), { user_id: ctx.params.user_id, stream_id: ctx.params.stream_id, request: ctx.body }),
    },
  ];
}
