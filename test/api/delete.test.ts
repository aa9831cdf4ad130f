/**
 * DELETE /v1/users/:user_id/memories/:id over real HTTP (CONTRACT §7): the unit is gone from the
 * memory listing (retired ones included) and from retrieval; `?cascade=events` also deletes its source
 * events; unknown units and other users' units are 404. Every sublevel is checked by the apply tests.
 */
import { StrataClient } from '@strata/client';
import { removeDir, startServer, type ServerProcess } from '../helpers/server-process';

const KEY = 'delete-test-admin-key';
const STREAM = '6b5a4c3d-2e1f-4a0b-9c8d-7e6f5a4b3c2d';

interface UnitView { id: string; content: string; references: string[] }

describe('hard delete', () => {
  let server: ServerProcess;
  let client: StrataClient;

  const units = async (user = 'rosa') =>
    (await client.raw<{ memories: UnitView[] }>('GET', `/v1/users/${user}/memories?include_retired=true&limit=1000`)).body.memories;
  const byContent = async (text: string) => (await units()).find((u) => u.content.includes(text))!;

  beforeAll(async () => {
    server = await startServer({ env: { STRATA_API_KEY: KEY, STRATA__CONSOLIDATION__INTERVAL_MS: '50' } });
    client = new StrataClient({ baseUrl: server.url, apiKey: KEY });
    for (const content of ['My cat is called Pixel.', 'I grow tomatoes on my balcony.', 'My bike is a green Dutch bicycle.']) {
      await client.ingest('rosa', STREAM, { content });
    }
    await client.ingest('tim', STREAM, { content: 'My dog is called Rex.' });
    expect((await client.waitUntilReady(30_000, 50)).ready).toBe(true);
  });
  afterAll(async () => {
    await client.close();
    expect(await server.stop()).toBe(0);
    removeDir(server.dataDir);
  });

  it('deletes a unit: gone from the listing and from retrieval, and a second delete is 404', async () => {
    const cat = await byContent('Pixel');
    const found = await client.retrieve('rosa', STREAM, { query: 'What is my cat called?' });
    expect(found.results.map((r) => r.unit.id)).toContain(cat.id);
    expect(await client.deleteMemory('rosa', cat.id.toUpperCase())).toEqual({ status: 'deleted', memory_id: cat.id, mode: 'hard' });
    expect((await units()).map((u) => u.id)).not.toContain(cat.id);
    const after = await client.retrieve('rosa', STREAM, { query: 'What is my cat called?' });
    expect(after.results.map((r) => r.unit.id)).not.toContain(cat.id);
    const again = await client.raw<{ code: string }>('DELETE', `/v1/users/rosa/memories/${cat.id}`);
    expect(again.status).toBe(404);
    expect(again.body.code).toBe('not_found');
    // The source event stays without cascade.
    expect((await client.allEvents('rosa', STREAM)).map((e) => e.event_id)).toEqual(expect.arrayContaining(cat.references));
  });

  it('with cascade=events also deletes the source events', async () => {
    const tomatoes = await byContent('tomatoes');
    const answer = await client.deleteMemory('rosa', tomatoes.id, { cascadeEvents: true });
    expect(answer).toEqual({ status: 'deleted', memory_id: tomatoes.id, mode: 'hard', deleted_event_ids: tomatoes.references });
    const events = (await client.allEvents('rosa', STREAM)).map((e) => e.event_id);
    for (const id of tomatoes.references) expect(events).not.toContain(id);
    expect(events).toHaveLength(2);
  });

  it('answers 404 for unknown ids and other users\' units, 400 for a bad cascade, 403 for a read-only key', async () => {
    expect((await client.raw('DELETE', '/v1/users/rosa/memories/1a2b3c4d-1111-4222-8333-444455556666')).status).toBe(404);
    expect((await client.raw('DELETE', '/v1/users/rosa/memories/nope')).status).toBe(404);
    const rex = (await units('tim'))[0];
    expect((await client.raw('DELETE', `/v1/users/rosa/memories/${rex.id}`)).status).toBe(404);
    expect((await units('tim')).map((u) => u.id)).toContain(rex.id);
    const bike = await byContent('bicycle');
    const bad = await client.raw<{ code: string }>('DELETE', `/v1/users/rosa/memories/${bike.id}?cascade=streams`);
    expect(bad.status).toBe(400);
    const reader = await client.createApiKey({ role: 'read' });
    const readOnly = new StrataClient({ baseUrl: server.url, apiKey: reader.key });
    try {
      expect((await readOnly.raw('DELETE', `/v1/users/rosa/memories/${bike.id}`)).status).toBe(403);
    } finally {
      await readOnly.close();
    }
    expect((await units()).map((u) => u.id)).toContain(bike.id);
  });
});
