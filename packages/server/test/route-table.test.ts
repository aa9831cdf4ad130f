/**
 * The route table (http/route-table.ts) against express's router, which matched the routes before
 * (issue 27): for every method and path below, the same route with the same parameters, the same
 * URIError, or the same miss.
 */
import Router from 'router';
import { RouteTable } from '../src/http/route-table';
import type { RouteSpec } from '../src/http/route';

/** A copy of the shapes of the route table (order matters where paths of one length overlap). */
const PATHS: [RouteSpec['method'], string][] = [
  ['post', '/v1/users/:user_id/streams/:stream_id/events'],
  ['get', '/v1/users/:user_id/streams/:stream_id/events'],
  ['post', '/v1/memory/context'], ['get', '/v1/users'], ['put', '/v1/users/:user_id/org'],
  ['get', '/v1/users/:user_id/streams/:stream_id/tasks/tree'], ['get', '/v1/users/:user_id/tasks/tree'],
  ['get', '/v1/users/:user_id/tasks/ready'], ['put', '/v1/users/:user_id/tasks/:task_id/status'],
  ['get', '/livez'], ['get', '/readyz'], ['get', '/openapi.json'], ['post', '/v1/users/:user_id/streams/:stream_id/retrieve'],
  ['get', '/v1/organizations/:org_id/knowledge'], ['get', '/v1/organizations/:org_id/knowledge/metrics'],
  ['get', '/v1/organizations/:org_id/knowledge/:id'], ['delete', '/v1/dashboard/api-keys/:key_id'],
  ['post', '/v1/cluster/groups/:group_id/split'], ['post', '/v1/cluster/groups/:group_id/split/abort'],
  ['post', '/v1/cluster/groups/:group_id/range-median'], ['get', '/v1/users/:user_id/memories'],
  ['get', '/v1/users/:user_id/memories/:id'], ['delete', '/v1/users/:user_id/memories/:id'],
  ['post', '/v1/users/:user_id/memories/semantic/preview'], ['get', '/v1/webhooks/:webhook_id/deliveries'],
];

const VALUES = ['abc', 'A%20b', '%E2%82%AC', 'bad%zz', '%', 'x.y', '%2F', 'ü', 'metrics', 'MeTrIcS', ''];

/** Every path of the table with each value for its parameters, in several spellings. */
function requests(): string[] {
  const out = new Set<string>(['/', '', '//', '/v1', '/v1/', '/V1/USERS', '/v1/users//', '/v1//users', '/livez?x=1', '/LIVEZ/', '/livez//', '/livez/x']);
  for (const [, path] of PATHS) {
    for (const v of VALUES) {
      const p = path.replace(/:[a-z_]+/g, v);
      out.add(p);
      out.add(`${p}/`);
      out.add(`${p}//`);
      out.add(`${p}?a=1&b=2`);
      out.add(p.toUpperCase());
      out.add(p.replace(/k/g, '\u212a')); // the Kelvin sign: lowercases to k, yet no match in express
      out.add(p.replace(/e/g, 'E'));
      out.add(`${p}/extra`);
      out.add(p.split('/').slice(0, -1).join('/'));
    }
  }
  return [...out];
}

/** What the test uses of the router package (express 5's router). */
type Handler = (...args: never[]) => void;
interface MiniRouter extends Record<RouteSpec['method'], (path: string, fn: Handler) => void> {
  handle(req: object, res: object, done: (err?: unknown) => void): void;
  use(fn: Handler): void;
}

type Outcome = { route: string; params: Record<string, string> } | { error: string } | 'miss';

function viaRouter(router: MiniRouter, method: string, url: string): Promise<Outcome> {
  return new Promise((resolve) => {
    router.handle({ method, url, headers: {}, resolve }, {}, (err?: unknown) => resolve(err ? { error: (err as Error).name } : 'miss'));
  });
}

function viaTable(table: RouteTable, method: string, url: string): Outcome {
  try {
    const m = table.match(method, url.split('?')[0]);
    return m ? { route: `${m.route.method} ${m.route.path}`, params: m.params } : 'miss';
  } catch (err) {
    return { error: (err as Error).name };
  }
}

describe('the route table', () => {
  const routes = PATHS.map(([method, path]) => ({ method, path, summary: '', tag: 'test', auth: 'public', handler: async () => null }) as RouteSpec);
  const table = new RouteTable(routes);
  const router = new Router() as unknown as MiniRouter;
  for (const r of routes) {
    router[r.method](r.path, (req: { params: Record<string, string>; resolve(o: Outcome): void }) => req.resolve({ route: `${r.method} ${r.path}`, params: { ...req.params } }));
  }
  // as in app.ts, what no route took goes on to the rest of the app (never to the router's own OPTIONS answer)
  router.use((req: { resolve(o: Outcome): void }) => req.resolve('miss'));
  router.use((err: Error, req: { resolve(o: Outcome): void }, _res: unknown, _next: unknown) => req.resolve({ error: err.name }));

  it('matches what express matched: route, parameters, errors and misses', async () => {
    let compared = 0;
    const differences: string[] = [];
    for (const url of requests()) {
      for (const method of ['GET', 'POST', 'PUT', 'DELETE', 'HEAD', 'OPTIONS', 'PATCH']) {
        const before = await viaRouter(router, method, url);
        const after = viaTable(table, method, url);
        if (JSON.stringify(before) !== JSON.stringify(after)) differences.push(`${method} ${url}: ${JSON.stringify(before)} → ${JSON.stringify(after)}`);
        compared++;
      }
    }
    expect(differences).toEqual([]);
    expect(compared).toBeGreaterThan(5000);
  });

  it('takes the first registered of two routes that both match', () => {
    expect(viaTable(table, 'GET', '/v1/organizations/o/knowledge/metrics')).toEqual({ route: 'get /v1/organizations/:org_id/knowledge/metrics', params: { org_id: 'o' } });
    expect(viaTable(table, 'GET', '/v1/organizations/o/knowledge/k1')).toEqual({ route: 'get /v1/organizations/:org_id/knowledge/:id', params: { org_id: 'o', id: 'k1' } });
    expect(viaTable(table, 'HEAD', '/LIVEZ/')).toEqual({ route: 'get /livez', params: {} });
  });

  it('refuses a path it cannot match as express would', () => {
    expect(() => new RouteTable([{ ...routes[0], path: '/v1/files/*rest' } as RouteSpec])).toThrow(/only literal segments/);
  });
});
