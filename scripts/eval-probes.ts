/**
 * Stated-fact probes (`npm run eval:probes`): precision@1 and MRR of retrieval on facts users stated
 * among distractors (scripts/lib/probes.ts), asked in other words. Starts its own node on a fresh data
 * directory unless --url is given. Figures go to bench-results/probes.json.
 *
 *   node --conditions=strata-source --import tsx scripts/eval-probes.ts [--seed 7] [--users 24] [--embedder local|hashing]
 *        [--url http://127.0.0.1:3000 --api-key KEY] [--out FILE] [--misses] [--env KEY=VALUE]...
 *
 * `--env` adds to the started node's environment, e.g. `STRATA__RETRIEVAL__WORKER_MIN_UNITS=1`: every
 * user's queries answered by the index worker (its answers must be the event loop's: same figures).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { StrataClient } from '@strata/client';
import { removeDir, startServer, type ServerProcess } from '../test/helpers/server-process';
import { generateProbes } from './lib/probes';
import { runProbes } from './lib/probes-run';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1] : fallback;
}

/** Every `--env KEY=VALUE` of the command line. */
function envArgs(): Record<string, string> {
  const out: Record<string, string> = {};
  process.argv.forEach((a, i) => {
    const v = process.argv[i + 1];
    if (a !== '--env' || v === undefined) return;
    const at = v.indexOf('=');
    if (at < 1) throw new Error(`--env expects KEY=VALUE, got ${v}`);
    out[v.slice(0, at)] = v.slice(at + 1);
  });
  return out;
}

async function main(): Promise<void> {
  const seed = Number(arg('seed', '7'));
  const users = Number(arg('users', '24'));
  const embedder = arg('embedder', 'local');
  const out = resolve(arg('out', resolve(__dirname, '../bench-results/probes.json')));
  const url = arg('url', '');
  const key = arg('api-key', process.env.STRATA_API_KEY ?? 'probes-admin-key');
  let server: ServerProcess | null = null;
  if (!url) {
    server = await startServer({ env: { STRATA_API_KEY: key, STRATA__CONSOLIDATION__INTERVAL_MS: '50', STRATA__EMBEDDING__PROVIDER: embedder, ...envArgs() }, timeoutMs: 120_000 });
  }
  const client = new StrataClient({ baseUrl: url || server!.url, apiKey: key });
  try {
    const started = Date.now();
    const score = await runProbes(client, generateProbes(seed, users));
    const report = { seed, users, embedder: url ? 'as configured' : embedder, seconds: (Date.now() - started) / 1000, ...score };
    console.log(`probes seed ${seed}, ${users} users, ${score.questions} questions: precision@1 ${score.precision_at_1.toFixed(3)}, MRR ${score.mrr.toFixed(3)}`);
    for (const [kind, v] of Object.entries(score.by_kind).sort()) console.log(`  ${kind.padEnd(18)} ${v.precision_at_1.toFixed(3)} (${v.questions})`);
    if (process.argv.includes('--misses')) for (const m of score.misses) console.log(`  miss [${m.kind}] ${m.query}\n       top: ${m.top}\n       want: ${m.expected}`);
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, JSON.stringify(report, null, 2) + '\n');
  } finally {
    await client.close();
    if (server) {
      await server.stop();
      removeDir(server.dataDir);
    }
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
