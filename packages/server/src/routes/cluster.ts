import { badRequest, notFound, type StrataError } from '@strata/store';
import { requireRole } from '../auth/principal';
import { requireUnscoped } from '../auth/scope';
import type { AuthService } from '../auth/service';
import { JOIN_NONCE_HEADER, JOIN_SIG_HEADER, JOIN_TS_HEADER, parseDrop, parseJoin, parseMembers, parseStep, type ClusterService } from '../cluster/membership';
import { parseGroupId, parseRangeCommand, parseRangeMedian, parseRangeRead } from '../cluster/split/wire';
import { jsonDigest, PEER_SIG_HEADER, peerOnlyRoute } from '../cluster/peer-auth';
import type { RouteContext, RouteSpec } from '../http/route';

/** Credentials passed on when a cluster operation continues on a shard's leader (a join signature is single-use: the hop signs anew). */
function passHeaders(ctx: RouteContext): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ['authorization', 'x-api-key', 'x-request-id']) {
    const v = ctx.req.headers[name];
    if (typeof v === 'string') out[name] = v;
  }
  return out;
}

/** `?shard_id=N`: the part of an operation for one shard group (sent by another node to that shard's leader). */
const SHARD_PARAM = [{ name: 'shard_id', schema: { type: 'integer', minimum: 0 }, description: 'the part of the operation for this one shard group (sent by another node to that shard\'s leader)' }];

function onlyShard(ctx: RouteContext, shards: number[]): number | null {
  const raw = ctx.query.shard_id;
  if (raw === undefined) return null;
  const n = typeof raw === 'string' && /^[0-9]{1,6}$/.test(raw) ? Number(raw) : NaN;
  if (!shards.includes(n)) throw badRequest('validation_failed', 'shard_id names no shard of this cluster.', [{ path: '/shard_id', message: 'unknown shard' }]);
  return n;
}

function header(ctx: RouteContext, name: string): string {
  const v = ctx.req.headers[name];
  return typeof v === 'string' ? v : '';
}

/**
 * Cluster operations (CONTRACT.md §10), admin only, with unscoped credentials (the routes' default
 * scope `service`). Join also accepts a request signed with the cluster secret: that is how a node
 * started with STRATA_JOIN asks to be added.
 */
export function clusterRoutes(deps: { auth: AuthService; cluster: ClusterService; secret: string | null; shardIds: () => number[] }): RouteSpec[] {
  const { auth, cluster } = deps;
  const admin = async (ctx: RouteContext) => {
    const key = ctx.req.headers['x-api-key'];
    const principal = await auth.authenticate(ctx.req.headers.authorization, Array.isArray(key) ? key[0] : key);
    requireRole(principal, 'admin');
    requireUnscoped(principal, 'A cluster operation');
  };
  /** A request of another node of this cluster, signed with the cluster secret (the placement loop's). */
  const peer = (ctx: RouteContext, body: unknown): boolean =>
    header(ctx, PEER_SIG_HEADER) !== '' && cluster.peers.verify(ctx.req.method, ctx.req.originalUrl, body, ctx.req.headers) !== null;
  // the signature is judged from the headers before the body is read; the body must be the one signed
  const signed = peerOnlyRoute(cluster.peers);
  const groupId = (ctx: RouteContext): number => {
    const n = /^[0-9]{1,6}$/.test(ctx.params.group_id) ? Number(ctx.params.group_id) : NaN;
    if (!deps.shardIds().includes(n)) throw notFound(`No shard ${ctx.params.group_id} in this cluster.`);
    return n;
  };
  return [
    {
      method: 'post', path: '/v1/cluster/initialize', tag: 'cluster', auth: 'admin', writes: false,
      summary: 'Initialize shard 0 with the configured members and every other group on its initial voters (idempotent; for raft.auto_initialize = false).',
      handler: async () => cluster.initialize(),
    },
    {
      method: 'post', path: '/v1/cluster/join', tag: 'cluster', auth: 'public', writes: false, queryParams: SHARD_PARAM,
      summary: 'Add a node to the cluster: to shard 0 (learner, then voter once caught up), after which the placement moves replicas of the other groups to it. Admin credentials, or a join request signed with the cluster secret.',
      handler: async (ctx) => {
        // Credentials before the body: unauthenticated callers learn nothing about what a valid join
        // looks like. A signature covers the body's fields, so it can only be checked on a body that
        // parses; one that does not leaves the caller to be judged by its credentials (401 without).
        let signed = false;
        if (header(ctx, JOIN_SIG_HEADER) !== '') {
          try {
            const claimed = parseJoin(ctx.req.body);
            signed = cluster.joins.verify(claimed, { sig: header(ctx, JOIN_SIG_HEADER), ts: header(ctx, JOIN_TS_HEADER), nonce: header(ctx, JOIN_NONCE_HEADER) });
          } catch {
            signed = false;
          }
        }
        if (!signed) await admin(ctx);
        const input = parseJoin(ctx.req.body);
        return cluster.join(input, passHeaders(ctx), onlyShard(ctx, deps.shardIds()), signed);
      },
    },
    {
      method: 'delete', path: '/v1/cluster/nodes/:node_id', tag: 'cluster', auth: 'admin', writes: false, queryParams: SHARD_PARAM,
      summary: 'Remove a node from the cluster: from shard 0 (leadership handed over first when it leads), after which the placement drains its replicas of the other groups; 404 when not a member.',
      handler: async (ctx) => {
        const id = /^[0-9]{1,9}$/.test(ctx.params.node_id) ? Number(ctx.params.node_id) : NaN; // decimal only: not 0x2, 2e0
        if (!(id >= 1)) throw badRequest('invalid_id', 'node_id must be a positive integer.') as StrataError;
        return cluster.remove(id, passHeaders(ctx), onlyShard(ctx, deps.shardIds()));
      },
    },
    {
      method: 'post', path: '/v1/cluster/groups/:group_id/split', tag: 'cluster', auth: 'admin', body: 'SplitGroup', writes: true,
      summary: "Split a shard group's key range at a point (default: the median of its users' keys): the upper half becomes a new group, seeded from the group's records, then routed to it, then deleted from the group (docs/cluster.md \"Splitting a group\"). Runs on the leader of shard 0; answers once the split is recorded, and GET /v1/cluster/status shows its progress.",
      handler: async (ctx) => cluster.split(parseGroupId(ctx.params.group_id), ctx.body.point ?? null),
    },
    {
      method: 'post', path: '/v1/cluster/groups/:group_id/split/abort', tag: 'cluster', auth: 'admin', writes: true,
      summary: "Abort the split of a shard group in flight (not committed yet): its writes refused during the copy are taken again at once, and what was copied to the new group is deleted (docs/cluster.md \"Aborting\"). 404 when no split of the group is in flight, 409 once it is committed. Runs on the leader of shard 0.",
      handler: async (ctx) => cluster.abort(parseGroupId(ctx.params.group_id), 'split'),
    },
    {
      method: 'post', path: '/v1/cluster/groups/:group_id/merge', tag: 'cluster', auth: 'admin', body: 'MergeGroups', writes: true,
      summary: "Merge the shard group `with` (whose key range must be adjacent) into this one: its records are copied here, then its range is routed here, then its copy is deleted and its id retired (docs/cluster.md \"Merging two groups\"). Runs on the leader of shard 0; answers once the merge is recorded, and GET /v1/cluster/status shows its progress.",
      handler: async (ctx) => cluster.merge(parseGroupId(ctx.params.group_id), ctx.body.with),
    },
    {
      method: 'post', path: '/v1/cluster/groups/:group_id/merge/abort', tag: 'cluster', auth: 'admin', writes: true,
      summary: 'Abort the merge into this shard group in flight (not committed yet), as the split abort does. 404 when none is in flight, 409 once it is committed.',
      handler: async (ctx) => cluster.abort(parseGroupId(ctx.params.group_id), 'merge'),
    },
    {
      method: 'post', path: '/v1/cluster/groups/:group_id/range-median', tag: 'cluster', auth: 'public', writes: false, beforeBody: signed.beforeBody,
      summary: "Between nodes: the median key of the users this node's replica of the group holds in a key range (the default point of a split; signed with the cluster secret).",
      handler: async (ctx) => {
        signed.checkDigest(ctx.res, jsonDigest(ctx.req.body));
        const { base, range } = parseRangeMedian(ctx.req.body);
        return cluster.rangeMedian(groupId(ctx), base, range);
      },
    },
    {
      method: 'post', path: '/v1/cluster/groups/:group_id/range-command', tag: 'cluster', auth: 'public', writes: false, beforeBody: signed.beforeBody,
      summary: "Between nodes: propose one step of a split (range.fence, range.seed, range.drop) on this node's replica of the group, which leads it (the split driver's; signed with the cluster secret).",
      handler: async (ctx) => {
        signed.checkDigest(ctx.res, jsonDigest(ctx.req.body));
        return cluster.rangeCommand(groupId(ctx), parseRangeCommand(ctx.req.body));
      },
    },
    {
      method: 'post', path: '/v1/cluster/groups/:group_id/range-records', tag: 'cluster', auth: 'public', writes: false, beforeBody: signed.beforeBody,
      summary: "Between nodes: a chunk of the records of a range being split off the group, read from this node's replica once it applied the range's fence (the split driver's; signed with the cluster secret).",
      handler: async (ctx) => {
        signed.checkDigest(ctx.res, jsonDigest(ctx.req.body));
        const { fence, cursor } = parseRangeRead(ctx.req.body);
        return cluster.rangeRecords(groupId(ctx), fence, cursor);
      },
    },
    {
      method: 'get', path: '/v1/cluster/status', tag: 'cluster', auth: 'public',
      summary: "This node's view of every shard group (leader, term, role, indexes, members, whether it holds it) and the placement directory. Admin credentials, or a request signed by another node.",
      handler: async (ctx) => {
        if (!peer(ctx, undefined)) await admin(ctx);
        return cluster.status();
      },
    },
    {
      method: 'post', path: '/v1/cluster/groups/:group_id/initialize', tag: 'cluster', auth: 'public', writes: false, beforeBody: signed.beforeBody,
      summary: 'Between nodes: initialize one shard group with its initial voters (sent by the node that initializes the cluster; signed with the cluster secret).',
      handler: async (ctx) => {
        signed.checkDigest(ctx.res, jsonDigest(ctx.req.body));
        return cluster.initializeGroup(groupId(ctx), parseMembers(ctx.req.body));
      },
    },
    {
      method: 'post', path: '/v1/cluster/groups/:group_id/steps', tag: 'cluster', auth: 'public', writes: false, beforeBody: signed.beforeBody,
      summary: "Between nodes: one membership change of a shard group, on its leader (the placement loop's; signed with the cluster secret).",
      handler: async (ctx) => {
        signed.checkDigest(ctx.res, jsonDigest(ctx.req.body));
        return cluster.step(groupId(ctx), parseStep(ctx.req.body));
      },
    },
    {
      method: 'post', path: '/v1/cluster/groups/:group_id/drop', tag: 'cluster', auth: 'public', writes: false, beforeBody: signed.beforeBody,
      summary: "Between nodes: wipe this node's replica of a shard group it was removed from by the membership entry at `index`, if its own replica says it is no longer a member (the placement loop's; signed with the cluster secret).",
      handler: async (ctx) => {
        signed.checkDigest(ctx.res, jsonDigest(ctx.req.body));
        // not groupId(ctx): a group this node dropped is not open here, and is asked about (answered `dropped`)
        return cluster.drop(parseGroupId(ctx.params.group_id), parseDrop(ctx.req.body).index);
      },
    },
  ];
}
