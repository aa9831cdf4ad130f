/**
 * raft.auto_initialize = false: nodes wait (not ready) until an operator calls POST
 * /v1/cluster/initialize on one of them; the call is idempotent.
 */
import { api, TestCluster, waitFor, writeEvent, newStream } from '../helpers/cluster';

jest.setTimeout(60_000);

describe('manual initialization', () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await TestCluster.start({ nodes: 3, env: { STRATA__RAFT__AUTO_INITIALIZE: 'false' } });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('serves only after POST /v1/cluster/initialize, which is idempotent', async () => {
    for (const node of cluster.live()) {
      expect((await api(node.url, 'GET', '/readyz')).status).toBe(503);
      expect((await cluster.status(node.id))[0]).toMatchObject({ leader: null, members: [] });
    }
    const first = await api(cluster.node(2).url, 'POST', '/v1/cluster/initialize');
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ status: 'initialized', node_id: 2, shards: [{ shard_id: 0, status: 'initialized' }] });
    await cluster.leader(0);
    for (const node of cluster.live()) await waitFor(`node ${node.id} ready`, async () => (await api(node.url, 'GET', '/readyz')).status === 200);
    const again = await api(cluster.node(3).url, 'POST', '/v1/cluster/initialize');
    expect(again.body).toMatchObject({ status: 'already_initialized' });
    expect(await writeEvent(() => cluster.node(3).url, 'fay', newStream(), 'hello')).not.toBeNull();
  });
});
