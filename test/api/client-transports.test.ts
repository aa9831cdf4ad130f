/**
 * The typed client's transports against a real node: the fetch-based StrataClient (what browsers and
 * most tests use), the same with an injected fetch, and NodeStrataClient (undici pool, request API)
 * answer alike: status, headers, JSON and text bodies, the error envelope as StrataApiError, raw bytes.
 */
import { gzipSync } from 'node:zlib';
import { StrataApiError, StrataClient, type FetchLike } from '@strata/client';
import { NodeStrataClient } from '@strata/client/node';
import { removeDir, startServer, type ServerProcess } from '../helpers/server-process';

const KEY = 'client-transports-admin-key';
const STREAM = '2d4c6e8a-1b3d-4f5a-9c7e-0a2b4c6d8e0f';

describe('client transports', () => {
  let server: ServerProcess;
  const seen: string[] = [];
  let clients: [string, StrataClient][];

  beforeAll(async () => {
    server = await startServer({ env: { STRATA_API_KEY: KEY, STRATA__EMBEDDING__PROVIDER: 'hashing' } });
    const counting: FetchLike = (url, init) => {
      seen.push(`${init.method} ${new URL(url).pathname}`);
      return fetch(url, init);
    };
    clients = [
      ['global fetch', new StrataClient({ baseUrl: server.url, apiKey: KEY })],
      ['injected fetch', new StrataClient({ baseUrl: `${server.url}/`, apiKey: KEY, fetch: counting })],
      ['undici pool', new NodeStrataClient({ baseUrl: server.url, apiKey: KEY, connections: 2 })],
    ];
  });
  afterAll(async () => {
    for (const [, c] of clients ?? []) await c.close();
    if (server) {
      expect(await server.stop()).toBe(0);
      removeDir(server.dataDir);
    }
  });

  it('sends and reads JSON, headers and text alike', async () => {
    for (const [name, client] of clients) {
      const echoed = await client.raw('GET', '/livez', { headers: { 'x-request-id': `trace-${name}` } });
      expect([name, echoed.status, echoed.headers['x-request-id'], echoed.body]).toEqual([name, 200, `trace-${name}`, { status: 'ok' }]);
      expect(String(echoed.headers['content-type'])).toMatch(/application\/json/);
      const metrics = await client.raw<string>('GET', '/metrics');
      expect([name, typeof metrics.body]).toEqual([name, 'string']);
      expect(metrics.body).toContain('# HELP');
      expect((await client.ingest('kim', STREAM, { content: `Kim tried the ${name} transport.` })).status).toBe('accepted');
      expect((await client.health())).toEqual({ live: true, ready: true });
    }
    // every call of the injected client went through its fetch (and the trailing slash of its baseUrl was dropped)
    expect(seen).toEqual(['GET /livez', 'GET /metrics', `POST /v1/users/kim/streams/${STREAM}/events`, 'GET /livez', 'GET /readyz']);
    const [a, b, c] = await Promise.all(clients.map(([, client]) => client.allEvents('kim', STREAM)));
    expect(a).toEqual(b);
    expect(b).toEqual(c);
    expect(a).toHaveLength(3);
  });

  it('throws the error envelope as StrataApiError, with status, code, details and headers', async () => {
    for (const [name, client] of clients) {
      const err = await client.retrieve('kim', STREAM, { query: 'x', limit: 0 }).then(() => null, (e: unknown) => e);
      expect(err).toBeInstanceOf(StrataApiError);
      const e = err as StrataApiError;
      expect([name, e.status, e.code]).toEqual([name, 400, 'validation_failed']);
      expect(e.details?.[0].path).toBe('/limit');
      expect(e.headers['x-request-id']).toEqual(expect.any(String));
    }
  });

  it('sends raw bytes as given (a gzip body with its Content-Encoding)', async () => {
    for (const [name, client] of clients) {
      const body = gzipSync(Buffer.from(JSON.stringify({ content: `Compressed by the ${name} client.` })));
      const res = await client.raw<{ status: string }>('POST', `/v1/users/kim/streams/${STREAM}/events`, {
        rawBody: body, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      });
      expect([name, res.status, res.body.status]).toEqual([name, 200, 'accepted']);
    }
    expect((await clients[0][1].allEvents('kim', STREAM)).map((e) => e.content).slice(3)).toEqual([
      'Compressed by the global fetch client.', 'Compressed by the injected fetch client.', 'Compressed by the undici pool client.',
    ]);
  });

  it('serves the cluster routes through the typed methods', async () => {
    const client = clients[0][1];
    const status = await client.clusterStatus();
    expect(status.shards[0]).toMatchObject({ shard_id: 0, leader: 1, role: 'leader' });
    expect((await client.clusterInitialize()).status).toBe('already_initialized');
    await expect(client.clusterRemove(9)).rejects.toMatchObject({ status: 404, code: 'not_found' });
    await expect(client.clusterJoin(2, 'not a url')).rejects.toMatchObject({ status: 400, code: 'validation_failed' });
    expect(await client.setUserOrg('kim', 'acme')).toEqual({ user_id: 'kim', org_id: 'acme', changed: true });
    expect((await client.failedEvents({ limit: 10 })).failed).toEqual([]);
    expect(Array.isArray((await client.listMemories('kim', { includeRetired: true })).memories)).toBe(true);
    expect(Array.isArray((await client.droppedEvents('kim')).dropped)).toBe(true);
  });
});
