/**
 * Property-based fuzz of every route of one node (the generator of test/helpers/fuzz.ts, longer than
 * the bounded run in `npm test`).
 *   npm run fuzz [-- --runs 5000 --seed 42 --timeout-ms 10000 --url http://host:port --api-key KEY]
 * Without --url it starts a node on a temporary data directory and stops it afterwards. Prints the
 * number of requests and the statuses seen; exits 1, printing the failing requests, if any answer was
 * a 5xx, a 4xx without the envelope, or no answer in time, or if the node is not alive afterwards.
 */
import { StrataClient } from '@strata/client';
import { removeDir, startServer, type ServerProcess } from '../test/helpers/server-process';
import { closeFuzzAgent, fuzzNode, routesFromOpenApi } from '../test/helpers/fuzz';

function arg(name: string, def?: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : def;
}

async function main(): Promise<void> {
  const runs = Number(arg('runs', '2000'));
  const seed = Number(arg('seed', String(Date.now() % 2 ** 31)));
  const timeoutMs = Number(arg('timeout-ms', '10000'));
  const apiKey = arg('api-key', 'fuzz-script-admin-key')!;
  let server: ServerProcess | null = null;
  let url = arg('url');
  if (!url) {
    server = await startServer({ env: { STRATA_API_KEY: apiKey, STRATA__CONSOLIDATION__INTERVAL_MS: '50' } });
    url = server.url;
  }
  const admin = new StrataClient({ baseUrl: url, apiKey });
  try {
    const routes = routesFromOpenApi((await admin.raw<Parameters<typeof routesFromOpenApi>[0]>('GET', '/openapi.json')).body);
    const read = (await admin.createApiKey({ role: 'read', user_ids: ['fuzz-a'], name: 'fuzz read key' })).key;
    const started = Date.now();
    const { result, stats } = await fuzzNode({ url, routes, creds: { admin: apiKey, read }, runs, seed, timeoutMs });
    const seconds = (Date.now() - started) / 1000;
    const alive = (await admin.raw('GET', '/livez')).status === 200 && (server === null || server.child.exitCode === null);
    const statuses = [...stats.statuses.entries()].sort((a, b) => a[0] - b[0]);
    process.stdout.write(`fuzz: ${routes.length} routes, seed ${seed}, ${runs} runs: ${stats.requests} requests in ${seconds.toFixed(1)} s\n`);
    process.stdout.write(`statuses: ${statuses.map(([s, n]) => `${s}×${n}`).join('  ')}\n`);
    process.stdout.write(`5xx: ${statuses.filter(([s]) => s >= 500).reduce((n, [, c]) => n + c, 0)}, failures: ${stats.failures.length}, node alive afterwards: ${alive}\n`);
    for (const f of stats.failures) process.stdout.write(`FAILED ${f.problem}\n  ${f.method} ${f.path}\n  headers ${JSON.stringify(f.headers)}\n  body ${JSON.stringify(f.body)}\n`);
    if (result.failed || !alive) process.exitCode = 1;
  } finally {
    closeFuzzAgent();
    await admin.close();
    if (server) {
      await server.stop();
      removeDir(server.dataDir);
    }
  }
}

main().catch((err) => {
  process.stderr.write(`fuzz: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
