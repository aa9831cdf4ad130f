/**
 * Retrieval reinforcement over real HTTP: the top unit of each retrieve/context answer gains importance
 * (batched per shard into `memory.reinforce` commands, applied a little later, so the test polls the
 * memory listing with a bound), units outside the top are untouched, and importance never passes 1.
 * The arithmetic is tested in decay.test.ts and the apply tests; pruning (off by default) in
 * packages/server/test/workers/pruning-worker.test.ts.
 */
import { StrataClient } from '@strata/client';
import { removeDir, startServer, type ServerProcess } from '../helpers/server-process';

const KEY = 'importance-test-admin-key';
const STREAM = '5c4b3a29-1807-4f6e-9d5c-4b3a29180765';

interface UnitView { id: string; content: string; importance: number }

describe('importance reinforced by retrieval', () => {
  let server: ServerProcess;
  let client: StrataClient;

  const units = async () => (await client.raw<{ memories: UnitView[] }>('GET', '/v1/users/iris/memories?limit=1000')).body.memories;
  const importanceOf = async (id: string) => (await units()).find((u) => u.id === id)!.importance;

  /** Polls the listing until the unit's importance passes `above` (bounded), and returns it. */
  async function importanceAbove(id: string, above: number): Promise<number> {
    for (let i = 0; i < 200; i++) {
      const now = await importanceOf(id);
      if (now > above) return now;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`importance of ${id} stayed at or below ${above}`);
  }

  beforeAll(async () => {
    server = await startServer({
      env: {
        STRATA_API_KEY: KEY, STRATA__CONSOLIDATION__INTERVAL_MS: '50',
        STRATA__MEMORY__REINFORCE_INTERVAL_MS: '50', STRATA__MEMORY__REINFORCE_TOP: '1', STRATA__MEMORY__REINFORCE_GAIN: '0.2',
      },
    });
    client = new StrataClient({ baseUrl: server.url, apiKey: KEY });
    for (const content of ['My sailing boat is called Albatross.', 'I play the cello in a quartet every Thursday.', 'My sister lives in Porto.']) {
      await client.ingest('iris', STREAM, { content });
    }
    expect((await client.waitUntilReady(30_000, 50)).ready).toBe(true);
  });
  afterAll(async () => {
    await client.close();
    expect(await server.stop()).toBe(0);
    removeDir(server.dataDir);
  });

  it('lists importance with each memory', async () => {
    const listed = await units();
    expect(listed.length).toBeGreaterThanOrEqual(3);
    for (const u of listed) {
      expect(typeof u.importance).toBe('number');
      expect(u.importance).toBeGreaterThan(0);
      expect(u.importance).toBeLessThanOrEqual(1);
    }
  });

  it('raises the importance of a unit retrieved repeatedly, and only of the top result', async () => {
    const boat = (await units()).find((u) => u.content.includes('Albatross'))!;
    const others = (await units()).filter((u) => u.id !== boat.id);
    const first = boat.importance;
    for (let i = 0; i < 3; i++) {
      const answer = await client.retrieve('iris', STREAM, { query: 'What is the name of my sailing boat?' });
      expect(answer.results[0].unit.id).toBe(boat.id);
    }
    const second = await importanceAbove(boat.id, first);
    expect(second).toBeLessThanOrEqual(1);
    // the context route reinforces too
    const context = await client.context({ user_id: 'iris', query: 'What is the name of my sailing boat?' });
    expect(context.hits.map((h) => h.id)).toContain(boat.id);
    const third = await importanceAbove(boat.id, second);
    // many retrievals later it is close to 1, never above
    for (let i = 0; i < 30; i++) await client.retrieve('iris', STREAM, { query: 'sailing boat Albatross' });
    const last = await importanceAbove(boat.id, third);
    expect(last).toBeLessThanOrEqual(1);
    expect(last).toBeGreaterThan(0.95);
    // units never in the top were not touched
    const after = await units();
    for (const o of others) expect(after.find((u) => u.id === o.id)!.importance).toBe(o.importance);
  });
});
