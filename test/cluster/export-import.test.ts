/**
 * Import through a follower of a 3-node cluster: the request is forwarded to the leader with its
 * NDJSON body streamed on (not re-serialized), the records are replicated, and every node's export
 * then holds them. A malformed line's refusal comes back through the follower as the envelope.
 */
import { randomUUID } from 'node:crypto';
import { API_KEY, TestCluster, newStream, waitFor } from '../helpers/cluster';

jest.setTimeout(60_000);

const HEADER = { kind: 'header', format: 'strata-export', version: 1 };

describe('3-node cluster: export and import', () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await TestCluster.start({ nodes: 3, env: { STRATA__IMPORT__CHUNK_RECORDS: '2' } });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  const post = (url: string, body: string) => fetch(`${url}/v1/import`, { method: 'POST', headers: { 'x-api-key': API_KEY, 'content-type': 'application/x-ndjson' }, body });
  const exportOf = async (url: string, query = '') => (await (await fetch(`${url}/v1/users/ivy/export${query}`, { headers: { 'x-api-key': API_KEY } })).text())
    .split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>).slice(1);

  it('forwards an import from a follower to the leader and replicates what it wrote to every node', async () => {
    const leader = await cluster.leader(0);
    const follower = cluster.live().find((n) => n.id !== leader)!;
    const stream = newStream();
    const events = ['one', 'two', 'three', 'four', 'five'].map((content, i) => ({
      kind: 'event', event_id: randomUUID(), user_id: 'ivy', stream_id: stream, content, content_type: 'text',
      valid_time: `2026-01-0${i + 1}T00:00:00.000Z`, transaction_time: `2026-01-0${i + 1}T00:00:00.000Z`, consolidation: { state: 'consolidated' },
    }));
    const file = [HEADER, ...events, { kind: 'user', user_id: 'ivy', org_id: 'acme' }].map((l) => JSON.stringify(l)).join('\n') + '\n';
    const res = await post(follower.url, file);
    if (res.status !== 200) throw new Error(`import through the follower answered ${res.status}: ${await res.text()}`);
    expect(res.headers.get('x-strata-forwarded-by')).toBe(String(follower.id));
    expect(await res.json()).toMatchObject({ status: 'imported', counts: { events: 5, users: 1 } });
    // An acknowledged import is read back by a linearizable export on any node (a local export reads that
    // node's replica, which may not have applied the last chunk yet: the node that led when the test
    // began may have lost leadership meanwhile). Each replica's local export then catches up to it.
    const expected = await exportOf(follower.url, '?consistency=linearizable');
    expect(expected.map((l) => l.content ?? l.org_id)).toEqual(['one', 'two', 'three', 'four', 'five', 'acme']);
    for (const node of cluster.live()) {
      await waitFor(`the import on node ${node.id}`, async () => JSON.stringify(await exportOf(node.url)) === JSON.stringify(expected));
    }
  });

  it('answers a malformed line through the follower with the envelope naming it', async () => {
    const leader = await cluster.leader(0);
    const follower = cluster.live().find((n) => n.id !== leader)!;
    const res = await post(follower.url, `${JSON.stringify(HEADER)}\n{"kind":"event"\n`);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'invalid_json', details: [{ path: '/line/2' }] });
  });
});
