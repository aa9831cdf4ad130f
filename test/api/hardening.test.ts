import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StrataClient } from '@strata/client';
import { rawExchange } from '../helpers/raw-http';
import { removeDir, startServer, type ServerProcess } from '../helpers/server-process';

/**
 * Input handling (CONTRACT.md §0, docs/security.md "Input handling"): every input the node refuses is
 * a 4xx with the envelope, including the refusals the HTTP layer makes itself (431, 408, 400 for a
 * malformed request), and nothing a client sends makes a 500.
 */

const KEY = 'hardening-test-admin-key';
const STREAM = '0b8a4c5e-6d7f-4a1b-9c2d-3e4f5a6b7c8d';
const events = (user: string) => `/v1/users/${encodeURIComponent(user)}/streams/${STREAM}/events`;

interface Envelope {
  error: string;
  code: string;
  details?: { path: string; message: string }[];
}

function expectEnvelope(body: unknown, code: string): void {
  expect(body).toMatchObject({ code, error: expect.any(String) });
  expect(Object.keys(body as object).sort()).toEqual(expect.arrayContaining(['code', 'error']));
}

/** `[[[...]]]` or `{"a":{"a":...}}`, `depth` containers deep. */
const nestedArrays = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
const nestedObjects = (depth: number, leaf = '1') => '{"a":'.repeat(depth) + leaf + '}'.repeat(depth);

describe('input hardening', () => {
  let server: ServerProcess;
  let client: StrataClient;
  let bodyRoutes: { method: string; path: string; type: string; peer: boolean }[];

  beforeAll(async () => {
    server = await startServer({
      env: {
        STRATA_API_KEY: KEY, STRATA__EMBEDDING__PROVIDER: 'hashing', STRATA__CONSOLIDATION__INTERVAL_MS: '50',
        // Short, so the timeout tests end quickly; the defaults are in config.ts.
        STRATA__SERVER__HEADERS_TIMEOUT_MS: '1000', STRATA__SERVER__REQUEST_TIMEOUT_MS: '2000',
      },
    });
    client = new StrataClient({ baseUrl: server.url, apiKey: KEY });
    // Every route that takes a body, from the route table as the OpenAPI document publishes it.
    const doc = (await client.raw<{ paths: Record<string, Record<string, { summary?: string; requestBody?: { content: Record<string, unknown> } }>> }>('GET', '/openapi.json')).body;
    // each with the media type it reads (JSON, or NDJSON for the import)
    bodyRoutes = Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods)
      .filter(([m]) => m !== 'get')
      .map(([method, op]) => ({
        method: method.toUpperCase(), path: path.replace('{stream_id}', STREAM).replace(/\{[a-z_]+\}/g, 'x1'),
        type: Object.keys(op.requestBody?.content ?? {})[0] ?? 'application/json',
        // routes between nodes judge the peer signature from the headers before reading a byte (401)
        peer: /^Between nodes/.test(op.summary ?? ''),
      })));
  });
  afterAll(async () => {
    await client.close();
    await server.stop();
    removeDir(server.dataDir);
  });

  describe('Content-Encoding', () => {
    const encoders = { gzip: gzipSync, deflate: deflateSync, br: brotliCompressSync };

    it.each(Object.keys(encoders))('decodes a %s body', async (encoding) => {
      const body = encoders[encoding as keyof typeof encoders](Buffer.from(JSON.stringify({ content: `sent with ${encoding}` })));
      const res = await client.raw('POST', events('enc'), { rawBody: body, headers: { 'content-type': 'application/json', 'content-encoding': encoding } });
      expect(res.status).toBe(200);
    });

    it.each(['gzip', 'deflate', 'br'])('answers 400 invalid_body_encoding to a %s body that is not, on every route with a body', async (encoding) => {
      expect(bodyRoutes.length).toBeGreaterThan(10);
      for (const route of bodyRoutes) {
        const res = await client.raw(route.method, route.path, { rawBody: '{"content":"plain"}', headers: { 'content-type': route.type, 'content-encoding': encoding } });
        expect({ route, status: res.status }).toEqual({ route, status: route.peer ? 401 : 400 });
        if (!route.peer) expectEnvelope(res.body, 'invalid_body_encoding');
      }
    });

    it('answers 415 to an encoding it does not know', async () => {
      const res = await client.raw('POST', events('enc'), { rawBody: '{"content":"x"}', headers: { 'content-type': 'application/json', 'content-encoding': 'compress' } });
      expect(res.status).toBe(415);
      expectEnvelope(res.body, 'unsupported_media_type');
    });

    it('answers 413 to a small body that inflates past server.body_limit', async () => {
      const bomb = gzipSync(Buffer.from(JSON.stringify({ content: 'a'.repeat(4 * 1024 * 1024) })));
      expect(bomb.length).toBeLessThan(64 * 1024);
      const res = await client.raw('POST', events('enc'), { rawBody: bomb, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } });
      expect(res.status).toBe(413);
      expectEnvelope(res.body, 'payload_too_large');
    });
  });

  describe('charset', () => {
    it.each(['utf-16', 'utf-16le', 'latin1', 'utf-32'])('answers 415 to charset=%s', async (charset) => {
      const res = await client.raw('POST', events('cs'), { rawBody: '{"content":"x"}', headers: { 'content-type': `application/json; charset=${charset}` } });
      expect(res.status).toBe(415);
      expectEnvelope(res.body, 'unsupported_media_type');
    });

    it.each(['utf-8', 'UTF-8', '"utf-8"'])('accepts charset=%s', async (charset) => {
      const res = await client.raw('POST', events('cs'), { rawBody: '{"content":"x"}', headers: { 'content-type': `application/json; charset=${charset}` } });
      expect(res.status).toBe(200);
    });
  });

  describe('valid_time', () => {
    it('answers 400 to a leap second on ingest, single and batch, naming the field', async () => {
      const one = await client.raw<Envelope>('POST', events('leap'), { body: { content: 'x', valid_time: '2024-06-30T23:59:60Z' } });
      expect(one.status).toBe(400);
      expect(one.body).toMatchObject({ code: 'validation_failed', details: [{ path: '/valid_time' }] });
      const batch = await client.raw<Envelope>('POST', events('leap') + '/batch', { body: { events: [{ content: 'ok' }, { content: 'x', valid_time: '2016-12-31T23:59:60.5+00:00' }] } });
      expect(batch.status).toBe(400);
      expect(batch.body).toMatchObject({ code: 'validation_failed', details: [{ path: '/events/1/valid_time' }] });
      expect((await client.listEvents('leap', STREAM)).events).toHaveLength(0);
    });

    it('answers 400 to a leap second on retrieval too', async () => {
      const res = await client.raw('POST', `/v1/users/leap/streams/${STREAM}/retrieve`, { body: { query: 'x', start_time: '2024-06-30T23:59:60Z' } });
      expect(res.status).toBe(400);
      expectEnvelope(res.body, 'validation_failed');
    });
  });

  describe('JSON depth', () => {
    it('answers 400 to metadata nested 10,000 levels', async () => {
      const raw = `{"content":"x","metadata":${nestedObjects(10_000)}}`;
      const res = await client.raw<Envelope>('POST', events('deep'), { rawBody: raw, headers: { 'content-type': 'application/json' } });
      expect(res.status).toBe(400);
      expectEnvelope(res.body, 'json_too_deep');
    });

    it('answers 400 to any body deeper than 64 levels, and accepts 64', async () => {
      // the body object is level 1, metadata's 62 nested objects and the innermost {} levels 2 to 64
      const at = await client.raw('POST', events('deep'), { rawBody: `{"content":"x","metadata":${nestedObjects(62, '{}')}}`, headers: { 'content-type': 'application/json' } });
      expect(at.status).toBe(200);
      const over = await client.raw('POST', events('deep'), { rawBody: `{"content":"x","metadata":${nestedObjects(63, '{}')}}`, headers: { 'content-type': 'application/json' } });
      expect(over.status).toBe(400);
      expectEnvelope(over.body, 'json_too_deep');
      const array = await client.raw('POST', '/v1/dashboard/auth/login', { rawBody: nestedArrays(1_000_000), headers: { 'content-type': 'application/json' } });
      expect(array.status).toBe(400);
      expectEnvelope(array.body, 'json_too_deep');
    });

    it('refuses a json event of 10,000 nested arrays at ingest, naming the event', async () => {
      const one = await client.raw<Envelope>('POST', events('deepjson'), { body: { content: nestedArrays(10_000), content_type: 'json' } });
      expect(one.status).toBe(400);
      expect(one.body).toMatchObject({ code: 'json_too_deep', details: [{ path: '/content' }] });
      const batch = await client.raw<Envelope>('POST', events('deepjson') + '/batch', { body: { events: [{ content: '[]', content_type: 'json' }, { content: nestedArrays(65), content_type: 'json' }] } });
      expect(batch.status).toBe(400);
      expect(batch.body).toMatchObject({ code: 'json_too_deep', details: [{ path: '/events/1/content' }] });
    });

    it('accepts a json event 64 levels deep and consolidates it without failure', async () => {
      const res = await client.raw('POST', events('deepjson-ok'), { body: { content: `{"k":${nestedArrays(63)}}`, content_type: 'json' } });
      expect(res.status).toBe(200);
      expect(await client.waitUntilReady(20_000, 50)).toMatchObject({ ready: true, failed: 0 });
    });
  });

  describe('identifiers', () => {
    it('counts agent_id, org_id and user_id in bytes of UTF-8, not characters', async () => {
      const ok = await client.raw('POST', events('bytes'), { body: { content: 'x', agent_id: 'é'.repeat(128), org_id: 'ß'.repeat(128) } });
      expect(ok.status).toBe(200);
      for (const field of ['agent_id', 'org_id']) {
        const res = await client.raw<Envelope>('POST', events('bytes'), { body: { content: 'x', [field]: 'é'.repeat(129) } });
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ code: 'validation_failed', details: [{ path: `/${field}` }] });
      }
      const ctx = await client.raw<Envelope>('POST', '/v1/memory/context', { body: { query: 'x', user_id: '😀'.repeat(65) } });
      expect(ctx.status).toBe(400);
      expect(ctx.body).toMatchObject({ details: [{ path: '/user_id' }] });
      const path = await client.raw('GET', events('é'.repeat(129)));
      expect(path.status).toBe(400);
      expectEnvelope(path.body, 'invalid_id');
    });

    it('refuses control characters, C1 included', async () => {
      for (const agent of ['a\u0000b', 'tab\there', 'del\u007f', 'c1\u0085']) {
        const res = await client.raw('POST', events('ctl'), { body: { content: 'x', agent_id: agent } });
        expect({ agent, status: res.status }).toEqual({ agent, status: 400 });
      }
    });
  });

  describe('query parameters', () => {
    it.each(['0x10', '1e2', '+5', ' 10', '10.0', '0b11', '0', '-1', '1001', 'ten'])('answers 400 to limit=%s', async (limit) => {
      const res = await client.raw('GET', `${events('q')}?limit=${encodeURIComponent(limit)}`);
      expect(res.status).toBe(400);
      expectEnvelope(res.body, 'validation_failed');
      const memories = await client.raw('GET', `/v1/users/q/memories?limit=${encodeURIComponent(limit)}`);
      expect(memories.status).toBe(400);
    });

    it('accepts a decimal limit and refuses a repeated one', async () => {
      expect((await client.raw('GET', `${events('q')}?limit=010`)).status).toBe(200);
      expect((await client.raw('GET', `${events('q')}?limit=1&limit=2`)).status).toBe(400);
    });
  });

  describe('refusals of the HTTP layer carry the envelope', () => {
    it('answers a 50 KB query string with 431 and the envelope', async () => {
      const res = await client.raw('GET', `${events('big')}?q=${'a'.repeat(50_000)}`);
      expect(res.status).toBe(431);
      expectEnvelope(res.body, 'headers_too_large');
      expect(res.headers['x-request-id']).toBeDefined();
    });

    it('answers a malformed request line with 400 and the envelope', async () => {
      const res = await rawExchange(server.url, ['GET /livez HTTP/9.9 nonsense\r\n\r\n']);
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/application\/json/);
      expectEnvelope(JSON.parse(res.body), 'bad_request');
    });

    it('ends a request whose headers never finish with 408 and the envelope', async () => {
      const res = await rawExchange(server.url, ['GET /livez HTTP/1.1\r\nHost: x\r\n', 'X-Slow: 1\r\n'], { pauseMs: 200 });
      expect(res.status).toBe(408);
      expectEnvelope(JSON.parse(res.body), 'request_timeout');
    });

    it('ends a body dribbled too slowly with 408 and the envelope', async () => {
      const head = `POST ${events('slow')} HTTP/1.1\r\nHost: x\r\nx-api-key: ${KEY}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n`;
      // A byte every 300 ms: each arrives well within any idle timeout, the whole never within server.request_timeout_ms.
      const res = await rawExchange(server.url, [head, ...'{"content":"dribbled ..."'.split('')], { pauseMs: 300 });
      expect(res.status).toBe(408);
      expectEnvelope(JSON.parse(res.body), 'request_timeout');
      expect((await client.listEvents('slow', STREAM)).events).toHaveLength(0);
    });
  });

  describe('cluster join', () => {
    it('answers 401 without credentials before looking at the body', async () => {
      for (const body of [{}, { node_id: 'x' }, { node_id: 2, address: 'http://127.0.0.1:1' }]) {
        const res = await client.raw('POST', '/v1/cluster/join', { body, auth: false });
        expect(res.status).toBe(401);
        expectEnvelope(res.body, 'unauthenticated');
      }
      const forged = await client.raw('POST', '/v1/cluster/join', { body: {}, auth: false, headers: { 'x-strata-join-sig': 'abc', 'x-strata-join-ts': String(Date.now()) } });
      expect(forged.status).toBe(401);
    });

    it('answers the internal routes 401 from the headers, before reading a body: unsigned junk is never parsed', async () => {
      const routes = ['/v1/cluster/shard-reads', '/v1/cluster/groups/0/steps', '/v1/cluster/groups/0/initialize', '/v1/cluster/groups/0/propose'];
      for (const path of routes) {
        for (const [type, body] of [['application/json', '{"not json'], ['application/json', '[]'], ['application/x-ndjson', '\u0000\u0001'], ['text/plain', 'x']]) {
          const res = await fetch(server.url + path, { method: 'POST', headers: { 'content-type': type, 'x-api-key': KEY }, body });
          expect([path, type, body, res.status]).toEqual([path, type, body, 401]);
          expectEnvelope(await res.json(), 'unauthenticated');
        }
      }
    });

    it('validates the body of an admin', async () => {
      const res = await client.raw('POST', '/v1/cluster/join', { body: {} });
      expect(res.status).toBe(400);
      expectEnvelope(res.body, 'validation_failed');
    });
  });

  it('marks every answer nosniff: a success, an error, an unauthenticated caller and a refusal of the HTTP layer', async () => {
    const answers = [
      await client.raw('GET', '/livez'), await client.raw('GET', '/v1/users/x1/memories/nope'), await client.raw('GET', '/v1/webhooks', { auth: false }),
      await client.raw('GET', `${events('big')}?q=${'a'.repeat(50_000)}`),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 404, 401, 431]);
    for (const a of answers) expect(a.headers['x-content-type-options']).toBe('nosniff');
    const malformed = await rawExchange(server.url, ['GET /livez HTTP/9.9 nonsense\r\n\r\n']);
    expect(malformed.headers['x-content-type-options']).toBe('nosniff');
  });

  it('is still alive after all of it', async () => {
    expect((await client.raw('GET', '/livez')).status).toBe(200);
  });
});

describe('failed events', () => {
  let embeddings: Server;
  let server: ServerProcess;
  let admin: StrataClient;

  beforeAll(async () => {
    // An embeddings endpoint that refuses every request: consolidation gives up on facts, visibly.
    embeddings = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'model not found' } })));
    });
    await new Promise<void>((resolve) => embeddings.listen(0, '127.0.0.1', resolve));
    server = await startServer({
      env: {
        STRATA_API_KEY: KEY, STRATA__CONSOLIDATION__INTERVAL_MS: '50', STRATA__EMBEDDING__PROVIDER: 'openai',
        STRATA__EMBEDDING__BASE_URL: `http://127.0.0.1:${(embeddings.address() as AddressInfo).port}/v1`, STRATA__EMBEDDING__MODEL: 'absent', STRATA__EMBEDDING__DIMENSIONS: '8',
      },
    });
    admin = new StrataClient({ baseUrl: server.url, apiKey: KEY });
  });
  afterAll(async () => {
    await admin.close();
    await server.stop();
    removeDir(server.dataDir);
    await new Promise((resolve) => embeddings.close(resolve));
  });

  interface FailedPage { failed: { event_id: string; user_id: string; stream_id: string; error: string; attempts: number; at: string }[]; next_cursor: string | null }

  it('lists the events consolidation gave up on, with the reason, each key seeing only its scope', async () => {
    const ana = await admin.ingestBatch('ana', STREAM, [{ content: 'I live in Porto.' }, { content: 'My sister is called Rita.' }]);
    const bob = await admin.ingest('bob', STREAM, { content: 'I work at a bakery.' });
    expect(await admin.waitUntilReady(30_000, 50)).toMatchObject({ failed: 3 });

    const all = await admin.raw<FailedPage>('GET', '/v1/status/failed');
    expect(all.status).toBe(200);
    expect(all.body.failed.map((f) => f.event_id).sort()).toEqual([...ana.event_ids, bob.event_id].sort());
    expect(all.body.failed[0]).toMatchObject({ stream_id: STREAM, error: expect.stringMatching(/model not found/), attempts: expect.any(Number) });

    const key = await admin.createApiKey({ role: 'read', user_ids: ['bob'] });
    const scoped = new StrataClient({ baseUrl: server.url, apiKey: key.key });
    try {
      const mine = await scoped.raw<FailedPage>('GET', '/v1/status/failed');
      expect(mine.status).toBe(200);
      expect(mine.body.failed.map((f) => f.event_id)).toEqual([bob.event_id]);
    } finally {
      await scoped.close();
    }
  });

  it('pages with limit and next_cursor, and refuses a bad cursor', async () => {
    const first = await admin.raw<FailedPage>('GET', '/v1/status/failed?limit=2');
    expect(first.body.failed).toHaveLength(2);
    expect(first.body.next_cursor).toEqual(expect.any(String));
    const rest = await admin.raw<FailedPage>('GET', `/v1/status/failed?limit=2&after=${first.body.next_cursor}`);
    expect(rest.body.failed).toHaveLength(1);
    expect(rest.body.next_cursor).toBeNull();
    expect((await admin.raw('GET', '/v1/status/failed?after=nonsense')).status).toBe(400);
    expect((await admin.raw('GET', '/v1/status/failed', { auth: false })).status).toBe(401);
  });
});
