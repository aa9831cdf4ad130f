/**
 * Ingest throughput and latency of one real node process over HTTP.
 *   npm run bench:ingest [-- --seconds 5 --url http://host:port --api-key KEY]
 * Without --url it starts a node on a temporary data directory (real fsync) and stops it afterwards.
 * Prints a table and writes bench-results/ingest.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { StrataClient } from '@strata/client';
import { NodeStrataClient } from '@strata/client/node';
import { removeDir, startServer, type ServerProcess } from '../test/helpers/server-process';
import { summarize } from './lib/stats';

function arg(name: string, def?: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : def;
}

interface Scenario { name: string; clients: number; batch: number }

const SCENARIOS: Scenario[] = [
  { name: 'single, 1 client', clients: 1, batch: 1 },
  { name: 'single, 32 clients', clients: 32, batch: 1 },
  { name: 'batch of 100, 1 client', clients: 1, batch: 100 },
  { name: 'batch of 100, 32 clients', clients: 32, batch: 100 },
];

async function run(client: StrataClient, scenario: Scenario, seconds: number) {
  const latencies: number[] = [];
  let events = 0;
  const deadline = Date.now() + seconds * 1000;
  const started = process.hrtime.bigint();
  const worker = async (w: number) => {
    const stream = `00000000-0000-4000-8000-${String(w).padStart(12, '0')}`;
    for (let n = 0; Date.now() < deadline && n < 1_000_000; n++) {
      const t0 = process.hrtime.bigint();
      if (scenario.batch === 1) {
        await client.ingest(`bench-${w % 8}`, stream, { content: `user said something memorable number ${n} in stream ${w}` });
      } else {
        await client.ingestBatch(`bench-${w % 8}`, stream, Array.from({ length: scenario.batch }, (_, k) => ({ content: `batched turn ${n}.${k} about travel plans and dates` })));
      }
      latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
      events += scenario.batch;
    }
  };
  await Promise.all(Array.from({ length: scenario.clients }, (_, w) => worker(w)));
  const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
  return { scenario: scenario.name, clients: scenario.clients, batch: scenario.batch, events_per_s: Math.round(events / elapsed), requests_per_s: Math.round(latencies.length / elapsed), ...summarize(latencies) };
}

async function main() {
  const seconds = Number(arg('seconds', '5'));
  let server: ServerProcess | null = null;
  let url = arg('url');
  const apiKey = arg('api-key', process.env.STRATA_API_KEY ?? 'bench-admin-key');
  if (!url) {
    server = await startServer({ env: { STRATA_API_KEY: apiKey! } });
    url = server.url;
  }
  const client = new NodeStrataClient({ baseUrl: url, apiKey, connections: 64 });
  const results = [];
  process.stderr.write(`ingest benchmark against ${url}, ${seconds} s per scenario\n`);
  for (const scenario of SCENARIOS) {
    process.stderr.write(`  running: ${scenario.name} ...\n`);
    results.push(await run(client, scenario, seconds));
  }
  await client.close();
  if (server) {
    await server.stop();
    removeDir(server.dataDir);
  }
  console.table(results);
  mkdirSync('bench-results', { recursive: true });
  writeFileSync('bench-results/ingest.json', JSON.stringify({ at: new Date().toISOString(), url: server ? 'local node (temp dir)' : url, seconds, results }, null, 2));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
