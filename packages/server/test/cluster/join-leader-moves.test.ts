/**
 * A join asked of the leader of shard 0 that loses the leadership while the new node catches up
 * (RaftGroup.addNode waits for it as a learner, then promotes it) is asked again of the new leader. It
 * answered 500 `internal`: the wait threw Raft's plain NotLeaderError, which ClusterService.onLeader did
 * not take for "not the leader" (seen in test/cluster/elastic.test.ts as an "unhandled error" line).
 */
import { NotLeaderError } from '@strata/raft';
import { ClusterService } from '../../src/cluster/membership';
import type { ClusterRuntime } from '../../src/cluster/runtime';
import type { Forwarder } from '../../src/cluster/forward';
import type { GroupRouting } from '../../src/cluster/placement/routing';
import type { PlacementDirectory } from '../../src/cluster/placement/directory';
import type { PeerSigner } from '../../src/cluster/peer-auth';

test('a join whose leader lost the leadership during the catch-up goes to the new leader', async () => {
  const forwarded: string[] = [];
  let asked = 0;
  const rt = {
    config: { cluster: { secret: null, peer_clock_skew_s: 30, forward_timeout_ms: 5000, node_id: 1, replication_factor: 3 } },
    logs: new Map([[0, {
      group: {
        status: () => ({ members: [{ id: 1, url: 'http://node-1.test', voter: true }] }),
        addNode: async () => {
          throw new NotLeaderError(2, 'http://node-2.test'); // the catch-up wait found this node no longer leading
        },
      },
      applier: { clusterMeta: () => ({ removed: [] }) },
    }]]),
  };
  const fwd = {
    leaderOf: async () => (asked++ === 0 ? 'self' : { id: 2, url: 'http://node-2.test' }),
    call: async (url: string, _method: string, path: string) => {
      forwarded.push(url + path);
      return { status: 200, body: { status: 'joined', node_id: 4, role: 'voter', shards: [{ shard_id: 0, status: 'joined' }] }, headers: {} };
    },
  };
  const service = new ClusterService(rt as unknown as ClusterRuntime, fwd as unknown as Forwarder, {} as GroupRouting, {} as PlacementDirectory, {} as PeerSigner);
  expect(await service.join({ node_id: 4, address: 'http://node-4.test' }, {}, null)).toEqual({ status: 'joined', node_id: 4, role: 'voter', shards: [{ shard_id: 0, status: 'joined' }] });
  expect(forwarded).toEqual(['http://node-2.test/v1/cluster/join?shard_id=0']);
});
