/** `POST /v1/users/:user_id/streams/:stream_id/retrieve` (CONTRACT.md §3): route → RetrievalService.retrieve. */
import type { RouteSpec } from '../http/route';
import { retrievedUnitView, type RetrievalService } from '../indexes/retrieval-service';

export function retrieveRoutes(retrieval: RetrievalService): RouteSpec[] {
  return [
    {
      method: 'post', path: '/v1/users/:user_id/streams/:stream_id/retrieve', tag: 'retrieval', auth: 'read', body: 'Retrieve', writes: false,
      summary: "Hybrid retrieval (vector + BM25 + graph + images, fused and reranked) over the user's memory and, with org_id, the org's knowledge.",
      handler: async ({ params, body }) => {
        const answer = await retrieval.retrieve(params.user_id, params.stream_id, body);
        return {
          stream_id: params.stream_id,
          query: answer.query,
          results: answer.results.map((r) => ({ unit: retrievedUnitView(r.unit), score: r.score })),
          query_time_ms: answer.query_time_ms,
        };
      },
    },
  ];
}
