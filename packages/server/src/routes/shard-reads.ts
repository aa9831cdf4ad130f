/**
 * `POST /v1/cluster/shard-reads`: between nodes only, the reads of some shard groups for a question
 * about all of them (cluster/shard-reads.ts). Signed with the cluster secret like the placement
 * loop's requests (routes/cluster.ts): anything else is refused with 401 before the body is read.
 */
import { jsonDigest, peerOnlyRoute, type PeerSigner } from '../cluster/peer-auth';
import { SHARD_READS_PATH, type ShardReads } from '../cluster/shard-reads';
import type { RouteSpec } from '../http/route';

export function shardReadRoutes(deps: { reads: ShardReads; peers: Pick<PeerSigner, 'verifyHeaders'> }): RouteSpec[] {
  const signed = peerOnlyRoute(deps.peers);
  return [
    {
      method: 'post', path: SHARD_READS_PATH, tag: 'cluster', auth: 'public', writes: false, beforeBody: signed.beforeBody,
      summary: "Between nodes: a named read of some shard groups this node holds (another node's cross-shard operation; signed with the cluster secret).",
      handler: async (ctx) => {
        signed.checkDigest(ctx.res, jsonDigest(ctx.req.body));
        return deps.reads.answer(ctx.req.body);
      },
    },
  ];
}
