/**
 * A partition made by fault-injecting proxies on every link: the leader is cut off from the other two
 * (packets swallowed). The minority refuses writes with 503, the majority elects and keeps serving,
 * and after healing every node holds the same events. An import whose node is cut off midway answers
 * what it stored, and importing the same file again finishes it.
 */
import { randomUUID } from 'node:crypto';
import { api, API_KEY, listEvents, newStream, TestCluster, waitFor, writeEvent } from '../helpers/cluster';

jest.setTimeout(60_000);

describe('network partition through fault proxies', () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await TestCluster.start({ nodes: 3, proxies: true });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  const cut = (a: number, b: number, mode: 'blackhole' | 'drop' | 'pass') => {
    cluster.proxies.get(`${a}>${b}`)!.setMode(mode);
    cluster.proxies.get(`${b}>${a}`)!.setMode(mode);
  };

  it('the minority refuses writes, the majority serves, all converge after healing', async () => {
    const isolated = await cluster.leader(0);
    const majority = cluster.live().map((n) => n.id).filter((id) => id !== isolated);
    const stream = newStream();
    expect(await writeEvent(() => cluster.node(majority[0]).url, 'erin', stream, 'before')).not.toBeNull();
    for (const id of majority) cut(isolated, id, 'blackhole');

    const fresh = await cluster.leader(0, majority, 15_000);
    expect(majority).toContain(fresh);
    // The majority serves writes through either of its nodes.
    expect(await writeEvent(() => cluster.node(majority[1]).url, 'erin', stream, 'during (majority)')).not.toBeNull();
    // The minority cannot commit: 503 no_leader with Retry-After, never a 200.
    const r = await api(cluster.node(isolated).url, 'POST', `/v1/users/erin/streams/${stream}/events`, { content: 'during (minority)' }, {}, 15_000);
    expect(r.status).toBe(503);
    expect(r.body.code).toBe('no_leader');
    expect(r.headers.get('retry-after')).not.toBeNull();
    await waitFor('the isolated node gives up leadership', async () => (await cluster.status(isolated))[0].role !== 'leader', 10_000);
    // strict: no leader known right now; the balancer's check: out of the pool once the grace (the
    // forward timeout, a leader known within it) has passed without a leader
    await waitFor('the isolated node fails the strict check', async () => (await api(cluster.node(isolated).url, 'GET', '/readyz?strict=true')).status === 503, 10_000);
    await waitFor('the isolated node leaves the balancer pool', async () => (await api(cluster.node(isolated).url, 'GET', '/readyz')).status === 503, 10_000);

    for (const id of majority) cut(isolated, id, 'pass');
    await cluster.leader(0, cluster.live().map((n) => n.id), 20_000);
    expect(await writeEvent(() => cluster.node(isolated).url, 'erin', stream, 'after')).not.toBeNull();
    for (const node of cluster.live()) {
      const contents = await waitFor(`node ${node.id} converged`, async () => {
        const list = (await listEvents(node.url, 'erin', stream)).map((e) => e.content);
        return list.length === 3 ? list : undefined;
      }, 20_000);
      expect(contents).toEqual(['before', 'during (majority)', 'after']);
    }
  });

  it('an import cut off after its first chunk answers where it stopped and what it stored; the same file again finishes it', async () => {
    // import.chunk_records is 500 (the default): lines 2-501 are the first chunk, 502-504 the second
    const user = `imp-${randomUUID().slice(0, 8)}`;
    const stream = newStream();
    const line = (i: number) => JSON.stringify({
      kind: 'event', event_id: randomUUID(), user_id: user, stream_id: stream, content: `imported ${i}`, content_type: 'text',
      valid_time: '2026-02-01T00:00:00.000Z', transaction_time: '2026-02-01T00:00:00.000Z', consolidation: { state: 'consolidated' },
    }) + '\n';
    const header = JSON.stringify({ kind: 'header', format: 'strata-export', version: 1 }) + '\n';
    const first = header + Array.from({ length: 500 }, (_, i) => line(i)).join('');
    const rest = Array.from({ length: 3 }, (_, i) => line(500 + i)).join('');

    const importing = await cluster.leader(0);
    const others = cluster.live().map((n) => n.id).filter((id) => id !== importing);
    const before = (await cluster.status(importing))[0];
    // the body is sent in two parts: the import reads (and stores) the first chunk before the rest exists
    let send!: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>({ start: (c) => void (send = c) });
    send.enqueue(new TextEncoder().encode(first));
    const answer = fetch(`${cluster.node(importing).url}/v1/import`, {
      method: 'POST', headers: { 'x-api-key': API_KEY, 'content-type': 'application/x-ndjson' }, body, duplex: 'half',
    } as RequestInit & { duplex: 'half' });
    await waitFor('the first chunk stored and replicated', async () => (await listEvents(cluster.node(others[0]).url, user, stream)).length === 500, 30_000);
    // The import runs where the request arrived when that node led shard 0 then (else it is forwarded):
    // still the leader in the same term, so it led throughout.
    const during = (await cluster.status(importing))[0];
    expect([during.role, during.term]).toEqual(['leader', before.term]);
    for (const id of others) cut(importing, id, 'drop');
    send.enqueue(new TextEncoder().encode(rest));
    send.close();

    const res = await answer;
    const reply = await res.json() as { error: string; code: string; details?: { path: string; message: string }[] };
    expect(res.headers.get('x-strata-forwarded-by')).toBeNull();
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).not.toBeNull();
    // what is true of the request: 500 records were stored, so it is not answered "not stored"
    expect(res.headers.get('x-strata-not-stored')).toBeNull();
    expect(reply.code).toBe('no_leader');
    expect(reply.error).toMatch(/^The import stopped at line 504: the chunk of lines 502-504 \(3 records, shard 0\) /);
    expect(reply.error).toContain('Every line before line 502 is stored: 500 records imported (500 events).');
    expect(reply.error).toContain('Importing the same file again is safe: records already stored are skipped.');
    expect(reply.details).toEqual([{ path: '/line/502', message: 'the first line not stored' }]);

    for (const id of others) cut(importing, id, 'pass');
    const leader = await cluster.leader(0, cluster.live().map((n) => n.id), 20_000);
    const again = await fetch(`${cluster.node(leader).url}/v1/import`, { method: 'POST', headers: { 'x-api-key': API_KEY, 'content-type': 'application/x-ndjson' }, body: first + rest });
    const done = await again.json() as { counts: { events: number }; skipped: { events: number } };
    expect(again.status).toBe(200);
    // The first chunk is skipped. The second was not committed while the node was cut off, but its entry
    // may be in the node's log (proposed before it stepped down: the answer said its outcome was
    // unknown), and that node may win the next election once healed and commit it: then it is skipped too.
    expect(done.skipped.events).toBeGreaterThanOrEqual(500);
    expect(done.counts.events + done.skipped.events).toBe(503);
    for (const node of cluster.live()) {
      await waitFor(`node ${node.id} holds the whole file`, async () => (await listEvents(node.url, user, stream)).length === 503, 20_000);
    }
  });
});
