/**
 * The byte budget of the per-user derived indexes on a real node (issue 11, item 4; docs/security.md
 * "Memory bounds"), observed through /metrics: retrievals for users without memory create no cache
 * entry; under a budget too small for two users, users retrieved in turn evict each other and still get
 * the same answers. Memory figures come from scripts/bench-index-memory.ts, not from here.
 */
import { StrataClient } from '@strata/client';
import { removeDir, runServerExpectingExit, startServer, type ServerProcess } from '../helpers/server-process';

const KEY = 'index-memory-admin-key';
const STREAM = '3c2b1a09-f8e7-4d6c-8b5a-493827160504';
const USERS = ['ivy', 'jon', 'kai', 'lou'];

describe('per-user index cache budget', () => {
  let server: ServerProcess;
  let client: StrataClient;

  const gauges = async () => {
    const res = await client.raw<string>('GET', '/metrics', { auth: false });
    const read = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(String(res.body))?.[1]);
    return {
      bytes: read('strata_index_cache_bytes'), entries: read('strata_index_cache_entries'),
      evictions: read('strata_index_cache_evictions'), builds: read('strata_index_cache_builds'),
    };
  };
  const ask = async (user: string) =>
    (await client.retrieve(user, STREAM, { query: 'what about the lantern and the orchard?', limit: 10 })).results.map((r) => ({ id: r.unit.id, score: r.score }));

  beforeAll(async () => {
    server = await startServer({
      env: {
        STRATA_API_KEY: KEY, STRATA__EMBEDDING__PROVIDER: 'hashing', STRATA__CONSOLIDATION__INTERVAL_MS: '50',
        // no reinforcement: a retrieval changes no importance, so answers of two rounds are comparable
        STRATA__MEMORY__REINFORCE_TOP: '0', STRATA__MEMORY__INDEX_CACHE_BYTES: '1',
      },
    });
    client = new StrataClient({ baseUrl: server.url, apiKey: KEY });
    for (const user of USERS) {
      await client.ingestBatch(user, STREAM, [
        { content: `${user} hung a paper lantern in the orchard.` },
        { content: `${user} keeps the orchard ladder in the shed.` },
      ]);
    }
    expect((await client.waitUntilReady(30_000, 50)).pending).toBe(0);
  });
  afterAll(async () => {
    await client.close();
    expect(await server.stop()).toBe(0);
    removeDir(server.dataDir);
  });

  it('creates no entry for users without memory', async () => {
    for (let i = 0; i < 200; i++) {
      expect((await client.retrieve(`ghost-${i}`, STREAM, { query: 'anything at all' })).results).toEqual([]);
    }
    expect(await gauges()).toEqual({ bytes: 0, entries: 0, evictions: 0, builds: 0 }); // nothing built, not only nothing kept
  });

  it('evicts beyond the budget and answers evicted users as before', async () => {
    const first: { id: string; score: number }[][] = [];
    for (const user of USERS) first.push(await ask(user));
    expect(first.every((results) => results.length > 0)).toBe(true);
    const afterFirst = await gauges();
    expect(afterFirst.entries).toBe(1); // the budget holds less than one user: only the last one used stays
    expect(afterFirst.bytes).toBeGreaterThan(0);
    expect(afterFirst.evictions).toBe(USERS.length - 1);
    const second = [];
    for (const user of USERS) second.push(await ask(user));
    // the same units in the same order; scores equal but for importance decay over the milliseconds between rounds
    expect(second.map((results) => results.map((r) => r.id))).toEqual(first.map((results) => results.map((r) => r.id)));
    second.flat().forEach((r, i) => expect(r.score).toBeCloseTo(first.flat()[i].score, 6));
    expect(await gauges()).toMatchObject({ evictions: 2 * USERS.length - 1, builds: 2 * USERS.length });
  });

  it('refuses a budget that is not a non-negative integer, naming the key', async () => {
    const { code, output } = await runServerExpectingExit({ STRATA_DATA_DIR: server.dataDir + '-bad', STRATA__MEMORY__INDEX_CACHE_BYTES: '-1' });
    removeDir(server.dataDir + '-bad');
    expect(code).not.toBe(0);
    expect(output).toContain('memory.index_cache_bytes');
  });
});
