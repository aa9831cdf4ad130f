/**
 * `POST /v1/cluster/shard-reads`: between nodes only, the reads of some shard groups for a question
 * about all of them (cluster/shard-reads.ts). Signed with the cluster secret like the placement
 * loop's requests (routes/cluster.ts): anything else is refused with 401 before the body is looked at.
 */
import { unauthenticated } from '@strata/store';
import { PEER_SIG_HEADER, type PeerSigner } from '../cluster/peer-auth';
import { SHARD_READS_PATH, type ShardReads } from '../cluster/shard-reads';
import type { RouteSpec } from '../http/route';

export function shardReadRoutes(deps: { reads: ShardReads; peers: Pick<PeerSigner, 'verify'> }): RouteSpec[] {
  return [
    {
      method: 'post', path: SHARD_READS_PATH, tag: 'cluster', auth: 'public', writes: false,
      summary: "Between nodes: a named read of some shard groups this node holds (another node's cross-shard operation; signed with the cluster secret).",
      handler: async (ctx) => {
        const signed = typeof ctx.req.headers[PEER_SIG_HEADER] === 'string'
          && deps.peers.verify(ctx.req.method, ctx.req.originalUrl, ctx.req.body, ctx.req.headers) !== null;
        if (!signed) throw unauthenticated('This route serves the nodes of the cluster only: a request signed with the cluster secret.');
        return deps.reads.answer(ctx.req.body);
      },
    },
  ];
}
