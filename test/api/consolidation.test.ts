import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StrataClient, type EventInput } from '@strata/client';
import { removeDir, runServerExpectingExit, startServer, tempDir, type ServerProcess } from '../helpers/server-process';

const KEY = 'consolidation-test-admin-key';
const STREAM = '5b1e7c2a-0d4f-4a8e-9c3b-6f2a1d0e9b77';

interface UnitView {
  id: string;
  memory_type: 'factual' | 'procedural';
  content: string;
  keywords: string[];
  level: 1 | 2;
  stream_id: string;
  valid_time: string;
  transaction_time: string;
  references: string[];
  assets: unknown[];
  retired_at: string | null;
  superseded_by: string | null;
}

/** A conversation crafted to exercise each decision of consolidation once. */
const CONVERSATION: EventInput[] = [
  { content: 'I live in Berlin.', valid_time: '2026-01-10T09:00:00.000Z' },
  { content: 'My favourite food is ramen.', valid_time: '2026-01-10T09:01:00.000Z' },
  { content: 'To deploy the app, first run the tests, then build the image, and finally push the release tag.', valid_time: '2026-01-10T09:02:00.000Z' },
  { content: 'Yesterday I met Tom at the climbing gym.', valid_time: '2026-02-15T18:00:00.000Z' },
  { content: '{"order": {"item": "fountain pen", "quantity": 2, "shop": "Papier Berlin"}}', content_type: 'json', valid_time: '2026-02-15T18:01:00.000Z' },
  { content: 'thanks!', valid_time: '2026-02-15T18:02:00.000Z' },
  { content: 'My favourite food is ramen.', valid_time: '2026-02-16T10:00:00.000Z' },
  { content: 'I moved to Lisbon.', valid_time: '2026-03-01T10:00:00.000Z' },
];

async function memories(client: StrataClient, user: string, query = 'include_retired=true&limit=1000'): Promise<UnitView[]> {
  const res = await client.raw<{ memories: UnitView[] }>('GET', `/v1/users/${user}/memories?${query}`);
  expect(res.status).toBe(200);
  return res.body.memories;
}

describe('consolidation over HTTP, default (local) embedder', () => {
  let server: ServerProcess;
  let client: StrataClient;
  let ids: string[];
  let units: UnitView[];

  beforeAll(async () => {
    // No embedding provider set: the default local embedder (prepared at install) is what runs here.
    server = await startServer({ env: { STRATA_API_KEY: KEY, STRATA__CONSOLIDATION__INTERVAL_MS: '50' } });
    client = new StrataClient({ baseUrl: server.url, apiKey: KEY });
    ids = [];
    // One request per turn, as a chat client would send them: consolidation may batch them any way.
    for (const event of CONVERSATION) ids.push((await client.ingest('maya', STREAM, event)).event_id);
    const status = await client.waitUntilReady(30_000, 50);
    expect(status).toMatchObject({ pending: 0, ready: true, failed: 0, oldest_pending_ms: null });
    // Insights are planned right after the backlog drains (the tick's summary line first): let that finish (bounded).
    const settled = () => server.output().lastIndexOf('"msg":"L2 planning done"') > server.output().lastIndexOf('"msg":"consolidation caught up"');
    for (let i = 0; i < 100 && !settled(); i++) await new Promise((r) => setTimeout(r, 50));
    units = (await memories(client, 'maya')).filter((u) => u.level === 1);
  });
  afterAll(async () => {
    await client.close();
    expect(await server.stop()).toBe(0);
    removeDir(server.dataDir);
  });

  const byContent = (text: string) => {
    const found = units.filter((u) => u.content === text);
    expect(found).toHaveLength(1);
    return found[0];
  };

  it('runs the local embedder', () => {
    expect(server.output()).toMatch(/"embedder":"sif-v1:[^"]+".*"msg":"providers ready"/);
  });

  it('makes exactly the expected L1 units', () => {
    expect(units.map((u) => u.content).sort()).toEqual([
      'I live in Berlin.',
      'I moved to Lisbon.',
      'My favourite food is ramen.',
      'To deploy the app, first run the tests, then build the image, and finally push the release tag.',
      'Yesterday (2026-02-14) I met Tom at the climbing gym.',
      'order.item: fountain pen; order.quantity: 2; order.shop: Papier Berlin',
    ]);
    for (const u of units) {
      expect(u).toMatchObject({ level: 1, stream_id: STREAM, assets: [] });
      expect(u.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(u.transaction_time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
  });

  it('retires the old fact when it is corrected, and points it at the new one', () => {
    const berlin = byContent('I live in Berlin.');
    const lisbon = byContent('I moved to Lisbon.');
    expect(berlin).toMatchObject({ superseded_by: lisbon.id, references: [ids[0]], valid_time: '2026-01-10T09:00:00.000Z' });
    expect(berlin.retired_at).not.toBeNull();
    expect(lisbon).toMatchObject({ retired_at: null, superseded_by: null, references: [ids[7]], memory_type: 'factual' });
    expect(lisbon.keywords).toEqual(expect.arrayContaining(['lisbon']));
  });

  it('keeps one unit for a repeated fact, referencing both events', () => {
    expect(byContent('My favourite food is ramen.')).toMatchObject({ references: [ids[1], ids[6]], retired_at: null, valid_time: '2026-01-10T09:01:00.000Z' });
  });

  it('classifies a how-to as procedural', () => {
    const procedure = byContent('To deploy the app, first run the tests, then build the image, and finally push the release tag.');
    expect(procedure).toMatchObject({ memory_type: 'procedural', references: [ids[2]] });
    expect(procedure.keywords).toEqual(expect.arrayContaining(['deploy', 'release tag']));
  });

  it('resolves a relative date against the event time', () => {
    expect(byContent('Yesterday (2026-02-14) I met Tom at the climbing gym.')).toMatchObject({
      valid_time: '2026-02-14T00:00:00.000Z', references: [ids[3]], memory_type: 'factual',
    });
  });

  it('flattens a JSON event into key paths', () => {
    const json = byContent('order.item: fountain pen; order.quantity: 2; order.shop: Papier Berlin');
    expect(json).toMatchObject({ references: [ids[4]], valid_time: '2026-02-15T18:01:00.000Z' });
    expect(json.keywords).toEqual(expect.arrayContaining(['fountain pen', 'papier berlin']));
  });

  it('drops the noise-only event with a reason, and accounts for every event exactly once', async () => {
    const res = await client.raw<{ dropped: { event_id: string; reason: string; dropped_at: string }[] }>('GET', '/v1/users/maya/events/dropped');
    expect(res.status).toBe(200);
    expect(res.body.dropped).toEqual([{ event_id: ids[5], reason: expect.stringMatching(/^noise/), dropped_at: expect.any(String) }]);
    const all = await memories(client, 'maya');
    const referenced = new Set(all.filter((u) => u.level === 1).flatMap((u) => u.references));
    const dropped = new Set(res.body.dropped.map((d) => d.event_id));
    const events = await client.allEvents('maya', STREAM);
    expect(events.map((e) => e.event_id)).toEqual(ids);
    expect(events.map((e) => [referenced.has(e.event_id), dropped.has(e.event_id)])).toEqual(ids.map((_, i) => [i !== 5, i === 5]));
    // Insights, if any formed, summarize this conversation only.
    for (const insight of all.filter((u) => u.level === 2)) expect(insight.references.every((r) => ids.includes(r))).toBe(true);
  });

  it('hides retired units unless asked, pages with a cursor, and validates its query', async () => {
    const current = (await memories(client, 'maya', 'level=1')).map((u) => u.content);
    expect(current).toHaveLength(5);
    expect(current).not.toContain('I live in Berlin.');
    const first = await client.raw<{ memories: UnitView[]; next_cursor: string }>('GET', '/v1/users/maya/memories?level=1&include_retired=true&limit=4');
    expect(first.body.memories).toHaveLength(4);
    const second = await client.raw<{ memories: UnitView[]; next_cursor: string | null }>('GET', `/v1/users/maya/memories?level=1&include_retired=true&limit=4&after=${first.body.next_cursor}`);
    expect(second.body.next_cursor).toBeNull();
    expect([...first.body.memories, ...second.body.memories].map((u) => u.id).sort()).toEqual(units.map((u) => u.id).sort());
    for (const q of ['limit=0', 'limit=abc', 'include_retired=yes', 'level=3']) {
      const bad = await client.raw('GET', `/v1/users/maya/memories?${q}`);
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({ code: 'validation_failed' });
    }
    expect(await memories(client, 'nobody')).toEqual([]);
  });

  it('requires credentials and the user scope to read memory', async () => {
    expect((await client.raw('GET', '/v1/users/maya/memories', { auth: false })).status).toBe(401);
    const scoped = await client.createApiKey({ role: 'read', user_ids: ['someone-else'] });
    const other = new StrataClient({ baseUrl: server.url, apiKey: scoped.key });
    expect((await other.raw('GET', '/v1/users/maya/memories')).status).toBe(403);
    await other.close();
  });

  it('exports memory and failure gauges', async () => {
    const res = await client.raw<string>('GET', '/metrics', { auth: false });
    const units = Number(/^strata_memory_units (\d+)$/m.exec(res.body)?.[1]);
    expect(units).toBe((await memories(client, 'maya')).length);
    expect(res.body).toMatch(/^strata_failed_events 0$/m);
    expect(res.body).toMatch(/^strata_pending_events 0$/m);
  });

  it('logs a summary once the backlog is consolidated, then plans insights', async () => {
    expect(server.output()).toMatch(/"msg":"L2 planning done"/);
    expect(server.output()).toMatch(/"events":\d+,"units":\d+,"dropped":\d+,"failed":0,"errors":0,"seconds":[\d.]+,"events_per_s":\d+,"msg":"consolidation caught up"/);
  });
});

describe('consolidation failures over HTTP', () => {
  let embeddings: Server;
  let server: ServerProcess;
  let client: StrataClient;

  beforeAll(async () => {
    // An embeddings endpoint that refuses every request (400 is not retried by the client): consolidation must give up, visibly.
    embeddings = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'model not found' } }));
      });
    });
    await new Promise<void>((resolve) => embeddings.listen(0, '127.0.0.1', resolve));
    const port = (embeddings.address() as AddressInfo).port;
    server = await startServer({
      env: {
        STRATA_API_KEY: KEY, STRATA__CONSOLIDATION__INTERVAL_MS: '50', STRATA__EMBEDDING__PROVIDER: 'openai',
        STRATA__EMBEDDING__BASE_URL: `http://127.0.0.1:${port}/v1`, STRATA__EMBEDDING__MODEL: 'absent-model', STRATA__EMBEDDING__DIMENSIONS: '8',
      },
    });
    client = new StrataClient({ baseUrl: server.url, apiKey: KEY });
  });
  afterAll(async () => {
    await client.close();
    await server.stop();
    removeDir(server.dataDir);
    await new Promise((resolve) => embeddings.close(resolve));
  });

  it('reports events it could not consolidate as failed after three attempts, and drains', async () => {
    const { event_ids: ids } = await client.ingestBatch('ivo', STREAM, [{ content: 'I live in Porto.' }, { content: 'thanks!' }]);
    const status = await client.waitUntilReady(20_000, 50);
    // The noise event needs no embedding and is dropped; the fact is given up on.
    expect(status).toMatchObject({ pending: 0, ready: true, failed: 1 });
    const dropped = await client.raw<{ dropped: { event_id: string }[] }>('GET', '/v1/users/ivo/events/dropped');
    expect(dropped.body.dropped.map((d) => d.event_id)).toEqual([ids[1]]);
    expect(server.output()).toMatch(/"msg":"consolidation gave up on events"/);
    expect(server.output()).toMatch(/model not found/);
  });
});

describe('consolidation across a restart', () => {
  it('leaves the backlog alone when disabled, and drains it after a restart with it enabled', async () => {
    const dataDir = tempDir();
    const env = { STRATA_API_KEY: KEY, STRATA__EMBEDDING__PROVIDER: 'hashing', STRATA__CONSOLIDATION__INTERVAL_MS: '50' };
    try {
      let server = await startServer({ dataDir, env: { ...env, STRATA__CONSOLIDATION__ENABLED: 'false' } });
      let client = new StrataClient({ baseUrl: server.url, apiKey: KEY });
      const { event_ids: ids } = await client.ingestBatch('rae', STREAM, [{ content: 'I live in Madrid.' }, { content: 'ok thanks' }, { content: 'I moved to Quito.' }]);
      expect(await client.pending()).toMatchObject({ pending: 3, ready: false, failed: 0 });
      await client.close();
      expect(await server.stop()).toBe(0);

      server = await startServer({ dataDir, env });
      client = new StrataClient({ baseUrl: server.url, apiKey: KEY });
      expect(await client.waitUntilReady(20_000, 50)).toMatchObject({ pending: 0, ready: true, failed: 0 });
      const units = await memories(client, 'rae', 'include_retired=true&level=1');
      expect(units.map((u) => [u.content, u.references, u.retired_at === null]).sort()).toEqual([
        ['I live in Madrid.', [ids[0]], false], ['I moved to Quito.', [ids[2]], true],
      ]);
      await client.close();
      expect(await server.stop()).toBe(0);
    } finally {
      removeDir(dataDir);
    }
  });
});

describe('embedding provider at start', () => {
  it('refuses to start when the local word vectors were never prepared, saying how to prepare them', async () => {
    const dir = tempDir();
    const empty = tempDir();
    try {
      const { code, output } = await runServerExpectingExit({ STRATA_DATA_DIR: dir, STRATA_EMBEDDINGS_DIR: empty });
      expect(code).not.toBe(0);
      expect(output).toMatch(/failed to start/);
      expect(output).toContain('scripts/prepare-embeddings.ts');
      expect(output).not.toMatch(/strata node serving/);
    } finally {
      removeDir(dir);
      removeDir(empty);
    }
  });

  it('refuses an OpenAI embedder without its model, naming the key', async () => {
    const dir = tempDir();
    try {
      const { code, output } = await runServerExpectingExit({
        STRATA_DATA_DIR: dir, STRATA__EMBEDDING__PROVIDER: 'openai', STRATA__EMBEDDING__BASE_URL: 'http://127.0.0.1:9/v1', STRATA__EMBEDDING__DIMENSIONS: '8',
      });
      expect(code).not.toBe(0);
      expect(output).toContain("'embedding.model' is required");
    } finally {
      removeDir(dir);
    }
  });
});
