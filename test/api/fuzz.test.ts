import { StrataClient } from '@strata/client';
import { closeFuzzAgent, fuzzNode, routesFromOpenApi, type FuzzRoute } from '../helpers/fuzz';
import { removeDir, startServer, type ServerProcess } from '../helpers/server-process';

/**
 * A seeded, bounded property-based fuzz of every route (body, query, headers) generated from the
 * route table and its schemas: any input answers 2xx or 4xx with the envelope, never a 5xx or a hang,
 * and the node is alive afterwards. Longer runs: `npm run fuzz -- --runs N --seed S`.
 */
const KEY = 'fuzz-test-admin-key';
const SEED = 20240611;
const RUNS = 1500;

describe('fuzzing every route', () => {
  let server: ServerProcess;
  let admin: StrataClient;
  let routes: FuzzRoute[];
  let readKey: string;

  beforeAll(async () => {
    server = await startServer({ env: { STRATA_API_KEY: KEY, STRATA__EMBEDDING__PROVIDER: 'hashing', STRATA__CONSOLIDATION__INTERVAL_MS: '50' } });
    admin = new StrataClient({ baseUrl: server.url, apiKey: KEY });
    routes = routesFromOpenApi((await admin.raw<Parameters<typeof routesFromOpenApi>[0]>('GET', '/openapi.json')).body);
    readKey = (await admin.createApiKey({ role: 'read', user_ids: ['fuzz-a'] })).key;
  });
  afterAll(async () => {
    closeFuzzAgent();
    await admin.close();
    await server.stop();
    removeDir(server.dataDir);
  });

  it('generates requests for every route of the table', () => {
    expect(routes.length).toBeGreaterThan(25);
    expect(routes.filter((r) => r.body !== null).length).toBeGreaterThan(8);
  });

  it(`answers ${RUNS} generated requests (seed ${SEED}) with 2xx or 4xx and the envelope, and stays up`, async () => {
    const { result, stats } = await fuzzNode({ url: server.url, routes, creds: { admin: KEY, read: readKey }, runs: RUNS, seed: SEED, timeoutMs: 10_000 });
    expect(stats.failures).toEqual([]);
    expect(result.failed).toBe(false);
    expect(stats.requests).toBe(RUNS);
    // the run reached past the front door: some inputs were accepted, some refused
    expect([...stats.statuses.keys()]).toEqual(expect.arrayContaining([200, 400]));
    expect(server.child.exitCode).toBeNull();
    expect((await admin.raw('GET', '/livez')).status).toBe(200);
  }, 120_000);
});
