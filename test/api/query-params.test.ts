/**
 * Every route refuses a query parameter it does not declare (400 validation_failed with the envelope,
 * naming the parameter), instead of ignoring it: `?cursor=` on the events listing, which pages with
 * `after`, used to answer the first page again as if it were the next. Routes come from the route table
 * as the OpenAPI document publishes it, so a new route is covered by this test as it is added.
 */
import { StrataClient } from '@strata/client';
import { removeDir, startServer, type ServerProcess } from '../helpers/server-process';

const KEY = 'query-params-test-admin-key';
const STREAM = '0b8a4c5e-6d7f-4a1b-9c2d-3e4f5a6b7c8d';

describe('query parameters', () => {
  let server: ServerProcess;
  let client: StrataClient;
  let routes: { method: string; path: string; params: string[]; peer: boolean }[];

  beforeAll(async () => {
    server = await startServer({ env: { STRATA_API_KEY: KEY, STRATA__EMBEDDING__PROVIDER: 'hashing', STRATA__CONSOLIDATION__ENABLED: 'false' } });
    client = new StrataClient({ baseUrl: server.url, apiKey: KEY });
    const doc = (await client.raw<{ paths: Record<string, Record<string, { summary?: string; parameters?: { name: string; in: string }[] }>> }>('GET', '/openapi.json')).body;
    routes = Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({
      method: method.toUpperCase(),
      path: path.replace('{stream_id}', STREAM).replace(/\{[a-z_]+\}/g, 'x1'),
      params: (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
      // routes between nodes judge the peer signature first: an unsigned request is 401 whatever it asks
      peer: /^Between nodes/.test(op.summary ?? ''),
    })));
  });
  afterAll(async () => {
    await client?.close();
    if (server) {
      await server.stop();
      removeDir(server.dataDir);
    }
  });

  const call = (method: string, path: string) => fetch(server.url + path, { method, headers: { 'x-api-key': KEY }, signal: AbortSignal.timeout(10_000) });

  it('answers 400 validation_failed naming an unknown parameter, on every route', async () => {
    expect(routes.length).toBeGreaterThan(40);
    const wrong: string[] = [];
    for (const r of routes) {
      const res = await call(r.method, `${r.path}?no_such_param=1`);
      if (r.peer) {
        if (res.status !== 401) wrong.push(`${r.method} ${r.path}: ${res.status} (a route between nodes answers 401 before anything else)`);
        await res.body?.cancel();
        continue;
      }
      const body = (await res.json()) as { code?: string; error?: string; details?: { path: string }[] };
      if (res.status !== 400 || body.code !== 'validation_failed' || typeof body.error !== 'string' || body.details?.[0]?.path !== '/no_such_param') {
        wrong.push(`${r.method} ${r.path}: ${res.status} ${JSON.stringify(body)}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('refuses `cursor` on the events listing (it pages with `after`) and takes its declared parameters', async () => {
    const list = `/v1/users/alice/streams/${STREAM}/events`;
    for (let i = 0; i < 3; i++) {
      const res = await fetch(server.url + list, { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body: JSON.stringify({ content: `event ${i}` }) });
      expect(res.status).toBe(200);
    }
    const wrong = await call('GET', `${list}?limit=1&cursor=abc`);
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toMatchObject({ code: 'validation_failed', details: [{ path: '/cursor' }] });
    const first = (await (await call('GET', `${list}?limit=1`)).json()) as { events: { content: string }[]; next_cursor: string };
    const next = await call('GET', `${list}?limit=1&consistency=linearizable&after=${encodeURIComponent(first.next_cursor)}`);
    expect(next.status).toBe(200);
    expect(((await next.json()) as { events: { content: string }[] }).events[0].content).not.toBe(first.events[0].content);
  });
});
