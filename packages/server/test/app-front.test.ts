/**
 * The HTTP front's per-request work (issue 27): what it still does for every request after being made
 * lean: ids, metrics, the rate limiter when configured, requests born with express's prototypes.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { createApp, type AppDeps } from '../src/app';
import { expressShapes } from '../src/http/express-shapes';
import type { RouteSpec } from '../src/http/route';
import { Metrics } from '../src/metrics';

describe('the HTTP front', () => {
  let server: Server;
  let base = '';
  const metrics = new Metrics();
  /** whether each request reached its handler with the app's own prototype, unchanged since it was made */
  const bornShaped: boolean[] = [];

  beforeAll(async () => {
    const shapes = expressShapes();
    const ping: RouteSpec = {
      method: 'get', path: '/v1/ping', summary: 'ping', tag: 'test', auth: 'public',
      handler: async (ctx) => {
        bornShaped.push(Object.getPrototypeOf(ctx.req) === app.request && Object.getPrototypeOf(ctx.res) === app.response);
        return { ok: true };
      },
    };
    const unused = undefined as never;
    const deps: AppDeps = { routes: [ping], auth: unused, validator: unused, metrics, logger: pino({ level: 'silent' }), bodyLimit: 1024, rateLimitPerSecond: 3 };
    const app = createApp(deps);
    shapes.adopt(app);
    server = createServer({ IncomingMessage: shapes.IncomingMessage, ServerResponse: shapes.ServerResponse }, app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('sheds a client over rate_limit_per_s with 429 rate_limited, counts requests by route and status, and ids each one', async () => {
    const started = Date.now();
    const answers = await Promise.all(Array.from({ length: 30 }, () => fetch(`${base}/v1/ping`).then(async (r) => ({ status: r.status, id: r.headers.get('x-request-id'), body: await r.json() }))));
    // a fixed one-second window: 3 a second, over however many seconds the 30 requests spanned
    const windows = Math.floor(Date.now() / 1000) - Math.floor(started / 1000) + 1;
    const ok = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status === 429);
    expect(ok.length + refused.length).toBe(30);
    expect(ok.length).toBeGreaterThan(0);
    expect(ok.length).toBeLessThanOrEqual(3 * windows);
    expect(refused[0]?.body).toMatchObject({ code: 'rate_limited' });
    // ids: shaped like a UUID, one per request
    const ids = answers.map((a) => a.id ?? '');
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(new Set(ids).size).toBe(30);
    const text = await metrics.registry.metrics();
    expect(text).toContain(`strata_http_requests_total{method="GET",route="/v1/ping",status="200"} ${ok.length}`);
    expect(text).toContain(`strata_http_request_duration_seconds_count{method="GET",route="/v1/ping"} ${ok.length}`);
    expect(text).toContain(`strata_http_requests_total{method="GET",route="unmatched",status="429"} ${refused.length}`);
  });

  it('hands express requests and responses made with its prototypes', async () => {
    expect(bornShaped.length).toBeGreaterThan(0);
    expect(bornShaped.every(Boolean)).toBe(true);
  });
});
