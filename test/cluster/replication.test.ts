/**
 * Three real node processes: a write sent to a follower is forwarded to the leader, acknowledged once
 * committed, and then readable on every node; the status route and /readyz tell the truth.
 */
import { gzipSync } from 'node:zlib';
import { API_KEY, api, listEvents, newStream, TestCluster, waitFor, writeEvent } from '../helpers/cluster';

jest.setTimeout(60_000);

describe('3-node cluster: replication through a follower', () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await TestCluster.start({ nodes: 3 });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('elects one leader that every node knows, and every node is ready', async () => {
    const leader = await cluster.leader(0);
    for (const node of cluster.live()) {
      // A follower hears the leader's heartbeat before the membership entry reaches it: wait for both.
      const shards = await waitFor(`node ${node.id} replicated the membership`, async () => {
        const s = await cluster.status(node.id);
        return s[0].members.length === 3 ? s : undefined;
      });
      expect(shards).toHaveLength(1);
      expect(shards[0].leader).toBe(leader);
      expect(shards[0].members.map((m) => [m.node_id, m.voter])).toEqual([[1, true], [2, true], [3, true]]);
      await waitFor(`node ${node.id} ready`, async () => (await api(node.url, 'GET', '/readyz')).status === 200);
    }
  });

  it('forwards a write from a follower to the leader and replicates it to every node', async () => {
    const leader = await cluster.leader(0);
    const follower = cluster.live().find((n) => n.id !== leader)!;
    const stream = newStream();
    const r = await api(follower.url, 'POST', `/v1/users/alice/streams/${stream}/events`, { content: 'sent to a follower' });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-strata-forwarded-by')).toBe(String(follower.id));
    const id = (r.body as { event_id: string }).event_id;
    for (const node of cluster.live()) {
      const events = await waitFor(`event on node ${node.id}`, async () => {
        const list = await listEvents(node.url, 'alice', stream);
        return list.length === 1 ? list : undefined;
      });
      expect(events.map((e) => [e.event_id, e.content])).toEqual([[id, 'sent to a follower']]);
    }
  });

  it('forwards a gzipped JSON write from a follower (the body goes on decoded, without the client\'s encoding)', async () => {
    const leader = await cluster.leader(0);
    const follower = cluster.live().find((n) => n.id !== leader)!;
    const stream = newStream();
    const res = await fetch(`${follower.url}/v1/users/alice/streams/${stream}/events`, {
      method: 'POST',
      headers: { 'x-api-key': API_KEY, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(JSON.stringify({ content: 'sent gzipped to a follower' })),
    });
    expect([res.status, res.headers.get('x-strata-forwarded-by')]).toEqual([200, String(follower.id)]);
    const events = await waitFor('the gzipped event on the leader', async () => {
      const list = await listEvents(cluster.node(leader).url, 'alice', stream);
      return list.length === 1 ? list : undefined;
    });
    expect(events.map((e) => e.content)).toEqual(['sent gzipped to a follower']);
  });

  it('answers a replayed Idempotency-Key with the first answer on any node', async () => {
    const stream = newStream();
    const key = 'idem-' + stream;
    const answers = [];
    for (const node of cluster.live()) {
      const r = await api(node.url, 'POST', `/v1/users/bob/streams/${stream}/events`, { content: 'once' }, { 'idempotency-key': key });
      expect(r.status).toBe(200);
      answers.push((r.body as { event_id: string }).event_id);
    }
    expect(new Set(answers).size).toBe(1);
    const leader = await cluster.leader(0);
    expect(await listEvents(cluster.node(leader).url, 'bob', stream)).toHaveLength(1);
  });

  it('serves a linearizable read on a follower that reflects an acknowledged write', async () => {
    const leader = await cluster.leader(0);
    const follower = cluster.live().find((n) => n.id !== leader)!;
    const stream = newStream();
    expect(await writeEvent(() => cluster.node(leader).url, 'carol', stream, 'fresh')).not.toBeNull();
    const list = await listEvents(follower.url, 'carol', stream, '&consistency=linearizable');
    expect(list.map((e) => e.content)).toEqual(['fresh']);
  });

  it('refuses cluster operations without admin credentials', async () => {
    const r = await api(cluster.node(1).url, 'GET', '/v1/cluster/status', undefined, { 'x-api-key': 'wrong-key-123' });
    expect(r.status).toBe(401);
    const j = await api(cluster.node(1).url, 'POST', '/v1/cluster/join', { node_id: 9, address: 'http://127.0.0.1:1' }, { 'x-api-key': 'wrong-key-123' });
    expect(j.status).toBe(401);
    const bad = await api(cluster.node(1).url, 'POST', '/v1/cluster/join', { node_id: 'x' });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('validation_failed');
  });
});

describe('3-node cluster: consolidation results are replicated', () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await TestCluster.start({ nodes: 3, env: { STRATA__CONSOLIDATION__ENABLED: 'true', STRATA__CONSOLIDATION__INTERVAL_MS: '50' } });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('drains the pending backlog on every node and every node holds the same memory', async () => {
    const leader = await cluster.leader(0);
    const follower = cluster.live().find((n) => n.id !== leader)!;
    const stream = newStream();
    const events = ['I live in Porto.', 'My sister Ana is a doctor.', 'thanks!', 'I moved to Madrid last month.'];
    for (const content of events) {
      expect((await api(follower.url, 'POST', `/v1/users/rita/streams/${stream}/events`, { content, role: 'user' })).status).toBe(200);
    }
    const unitsOn: string[][] = [];
    for (const node of cluster.live()) {
      // The backlog is consolidated once, on the shard's leader; the result reaches every replica.
      await waitFor(`pending drained on node ${node.id}`, async () => {
        const p = await api(node.url, 'GET', '/v1/status/pending');
        return (p.body as { ready: boolean }).ready === true ? true : undefined;
      }, 30_000);
      const listed = await api(node.url, 'GET', '/v1/users/rita/memories?include_retired=true&limit=1000');
      expect(listed.status).toBe(200);
      const memories = (listed.body as { memories: { id: string; content: string; retired_at: string | null }[] }).memories;
      expect(memories.some((m) => m.content.includes('Madrid') && m.retired_at === null)).toBe(true);
      expect(memories.some((m) => m.content.includes('Porto') && m.retired_at !== null)).toBe(true);
      unitsOn.push(memories.map((m) => `${m.id}:${m.retired_at}`).sort());
    }
    expect(unitsOn[1]).toEqual(unitsOn[0]);
    expect(unitsOn[2]).toEqual(unitsOn[0]);
  });
});
