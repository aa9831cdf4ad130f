/**
 * POST /v1/users/:user_id/graph/edges over real HTTP (CONTRACT §5): success in both spellings of a
 * relation, and each refusal (404 for ends that are not the user's units, 400 for bad input, 403 for a
 * read-only key). The stored edge itself is checked by the store's apply tests.
 */
import { StrataClient } from '@strata/client';
import { removeDir, startServer, type ServerProcess } from '../helpers/server-process';

const KEY = 'edges-test-admin-key';
const STREAM = '0e1d2c3b-4a59-4687-9a6b-5c4d3e2f1a0b';

describe('graph edges', () => {
  let server: ServerProcess;
  let client: StrataClient;
  let ids: string[];
  let foreign: string;

  const unitIds = async (user: string) =>
    (await client.raw<{ memories: { id: string }[] }>('GET', `/v1/users/${user}/memories?limit=1000`)).body.memories.map((u) => u.id);
  const post = (body: unknown, user = 'nina') =>
    client.raw<{ status?: string; edge_id?: string; code?: string; details?: { path: string }[] }>('POST', `/v1/users/${user}/graph/edges`, { body });

  beforeAll(async () => {
    server = await startServer({ env: { STRATA_API_KEY: KEY, STRATA__CONSOLIDATION__INTERVAL_MS: '50', STRATA__EMBEDDING__PROVIDER: 'hashing' } });
    client = new StrataClient({ baseUrl: server.url, apiKey: KEY });
    await client.ingest('nina', STREAM, { content: 'I play the cello in a string quartet.' });
    await client.ingest('nina', STREAM, { content: 'My quartet rehearses every Thursday evening.' });
    await client.ingest('paul', STREAM, { content: 'I collect vintage fountain pens.' });
    expect((await client.waitUntilReady(30_000, 50)).ready).toBe(true);
    ids = await unitIds('nina');
    foreign = (await unitIds('paul'))[0];
    expect(ids.length).toBeGreaterThanOrEqual(2);
  });
  afterAll(async () => {
    await client.close();
    expect(await server.stop()).toBe(0);
    removeDir(server.dataDir);
  });

  it('accepts an edge between two units of the user, relation in either spelling', async () => {
    const a = await client.addEdge('nina', { source_id: ids[0], target_id: ids[1], relation: 'RelatedTo', weight: 0.4 });
    expect(a.status).toBe('accepted');
    expect(a.edge_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const b = await client.addEdge('nina', { source_id: ids[1].toUpperCase(), target_id: ids[0], relation: 'is_sub_task_of' });
    expect(b.edge_id).not.toBe(a.edge_id);
    expect((await post({ source_id: ids[0], target_id: ids[1], relation: 'evolved_to', weight: null })).status).toBe(200);
  });

  it('answers 404 when an end is not a memory unit of this user', async () => {
    const unknown = await post({ source_id: ids[0], target_id: '5f0e1d2c-3b4a-4968-8776-655443322110', relation: 'Supports' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('not_found');
    expect((await post({ source_id: foreign, target_id: ids[0], relation: 'Supports' })).status).toBe(404);
    expect((await post({ source_id: ids[0], target_id: 'not-a-unit', relation: 'Supports' })).status).toBe(404);
    // Paul's unit seen from Nina's side does not exist; from Paul's, Nina's does not.
    expect((await post({ source_id: foreign, target_id: ids[0], relation: 'Supports' }, 'paul')).status).toBe(404);
  });

  it('answers 400 for bad input', async () => {
    const cases: [unknown, string][] = [
      [{ source_id: ids[0], target_id: ids[1], relation: 'LooksLike' }, '/relation'],
      [{ source_id: ids[0], target_id: ids[1], relation: 'relatedto' }, '/relation'],
      [{ source_id: ids[0], target_id: ids[1], relation: 'Next', weight: 1.5 }, '/weight'],
      [{ source_id: ids[0], target_id: ids[1], relation: 'Next', weight: -0.1 }, '/weight'],
      [{ target_id: ids[1], relation: 'Next' }, '/source_id'],
      [{ source_id: ids[0], target_id: ids[0], relation: 'Next' }, '/target_id'],
    ];
    for (const [body, path] of cases) {
      const res = await post(body);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.details?.[0].path).toBe(path);
    }
    expect((await client.raw('POST', '/v1/users/nina/graph/edges', { rawBody: '{nope', headers: { 'content-type': 'application/json' } })).status).toBe(400);
  });

  it('needs the write role', async () => {
    const reader = await client.createApiKey({ role: 'read' });
    const readOnly = new StrataClient({ baseUrl: server.url, apiKey: reader.key });
    try {
      expect((await readOnly.raw('POST', '/v1/users/nina/graph/edges', { body: { source_id: ids[0], target_id: ids[1], relation: 'Next' } })).status).toBe(403);
    } finally {
      await readOnly.close();
    }
  });
});
