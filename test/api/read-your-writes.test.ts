/**
 * Read-your-writes (CONTRACT §3 `include_pending`): what was just said is found before consolidation has
 * run, as a level-0 raw hit of its event, and gives way to the units made from it once consolidated
 * (never both). The node first runs without consolidation, then restarts on the same data with it.
 */
import { randomUUID } from 'node:crypto';
import { StrataClient, type RetrieveResponse } from '@strata/client';
import { removeDir, startServer, tempDir, type ServerProcess } from '../helpers/server-process';

const KEY = 'ryw-test-admin-key';
const STREAM = randomUUID();
const OTHER_STREAM = randomUUID();

describe('read-your-writes: pending events are searched raw', () => {
  const dataDir = tempDir();
  let server: ServerProcess | null = null;
  let client: StrataClient;
  let allergy: string;
  let job: string;

  const start = async (consolidation: boolean) => {
    server = await startServer({
      dataDir,
      env: {
        STRATA_API_KEY: KEY, STRATA__EMBEDDING__PROVIDER: 'hashing',
        STRATA__CONSOLIDATION__ENABLED: String(consolidation), STRATA__CONSOLIDATION__INTERVAL_MS: '50',
      },
    });
    client = new StrataClient({ baseUrl: server.url, apiKey: KEY });
  };
  const stop = async () => {
    await client.close();
    expect(await server!.stop()).toBe(0);
    server = null;
  };
  const retrieve = (query: string, extra: Record<string, unknown> = {}, stream = STREAM) =>
    client.raw<RetrieveResponse>('POST', `/v1/users/maya/streams/${stream}/retrieve`, { body: { query, ...extra } });

  beforeAll(async () => {
    await start(false);
    allergy = (await client.ingest('maya', STREAM, { content: 'Maya is allergic to peanuts.' })).event_id;
    job = (await client.ingest('maya', OTHER_STREAM, { content: 'Maya works as a nurse in Porto.' })).event_id;
    await client.ingest('maya', STREAM, { content: 'https://example.com/photo.png', content_type: 'image' });
  });
  afterAll(async () => {
    if (server) await stop();
    removeDir(dataDir);
  });

  it('finds an event the moment it is acknowledged, as a level-0 hit of that event', async () => {
    const res = await retrieve('What is Maya allergic to?');
    expect(res.status).toBe(200);
    const top = res.body.results[0];
    expect(top.unit).toMatchObject({ id: allergy, level: 0, memory_type: 'factual', content: 'Maya is allergic to peanuts.', references: [allergy], stream_id: STREAM });
    expect(top.score).toBeGreaterThan(0);
    expect(top.score).toBeLessThanOrEqual(1);
  });

  it('follows the request: include_pending false, stream scope, as_of, and context rendering', async () => {
    expect((await retrieve('What is Maya allergic to?', { include_pending: false })).body.results).toEqual([]);
    const inStream = (await retrieve('Where does Maya work?', { scope: 'stream' })).body.results.map((r) => r.unit.id);
    expect(inStream).not.toContain(job);
    expect((await retrieve('Where does Maya work?')).body.results.map((r) => r.unit.id)).toContain(job);
    const before = (await retrieve('What is Maya allergic to?', { as_of: '2000-01-01T00:00:00Z' })).body.results;
    expect(before).toEqual([]);
    const context = await client.raw<{ context: string; hits: { id: string; level: number }[] }>('POST', '/v1/memory/context', { body: { user_id: 'maya', query: 'What is Maya allergic to?' } });
    expect(context.body.context).toContain('peanuts');
    expect(context.body.hits.find((h) => h.id === allergy)).toMatchObject({ level: 0 });
  });

  it('answers with the consolidated units instead, once consolidation has run (never both)', async () => {
    await stop();
    await start(true);
    expect((await client.waitUntilReady(30_000, 50)).ready).toBe(true);
    const results = (await retrieve('What is Maya allergic to?', { limit: 20 })).body.results;
    expect(results.every((r) => r.unit.level >= 1)).toBe(true);
    expect(results.map((r) => r.unit.id)).not.toContain(allergy);
    expect(results.some((r) => r.unit.references.includes(allergy) && r.unit.content.includes('peanuts'))).toBe(true);
  });
});
