/**
 * Does a login flood starve other requests? Password hashing (scrypt) runs on libuv's thread pool,
 * which LevelDB shares. For each setting, a real node process is started; an unrelated request
 * (GET /v1/status/pending with an API key: it reads LevelDB) is timed alone, then while `--clients`
 * concurrent clients log in with wrong passwords in a loop (honouring Retry-After) for `--seconds`.
 * The settings, in one run: `auth.hash_concurrency` effectively unbounded (1000, queue 1000: the
 * behaviour before the gate) and the default gate. The login throttle is raised out of the way
 * (every login hashes). Prints a table and writes bench-results/login-flood.json.
 *
 *   node --conditions=strata-source --import tsx scripts/bench-login-flood.ts [--clients 60] [--seconds 8] [--out FILE]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, resolve } from 'node:path';
import { removeDir, startServer } from '../test/helpers/server-process';
import { summarize } from './lib/stats';

const args = { clients: 60, seconds: 8, out: resolve(__dirname, '../bench-results/login-flood.json') };
for (let i = 2; i < process.argv.length; i += 2) {
  const [k, v] = [process.argv[i], process.argv[i + 1]];
  if (k === '--clients') args.clients = Number(v);
  else if (k === '--seconds') args.seconds = Number(v);
  else if (k === '--out') args.out = resolve(v);
  else throw new Error(`unknown option ${k}`);
}

const KEY = 'bench-login-flood-key-0123';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function probe(url: string, untilMs: number, minCount: number): Promise<number[]> {
  const latencies: number[] = [];
  while (Date.now() < untilMs || latencies.length < minCount) {
    const t0 = performance.now();
    const res = await fetch(`${url}/v1/status/pending`, { headers: { 'x-api-key': KEY } });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`probe answered ${res.status}`);
    latencies.push(performance.now() - t0);
    await sleep(20);
  }
  return latencies;
}

async function loginLoop(url: string, untilMs: number, statuses: Map<number, number>): Promise<void> {
  for (let i = 0; Date.now() < untilMs; i++) {
    const res = await fetch(`${url}/v1/dashboard/auth/login`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: `wrong-${i}` }),
    });
    await res.arrayBuffer();
    statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    const retry = Number(res.headers.get('retry-after'));
    if (retry > 0) await sleep(Math.min(retry, 2) * 1000);
  }
}

async function measure(label: string, env: Record<string, string>) {
  const server = await startServer({
    env: {
      STRATA_API_KEY: KEY, STRATA_ADMIN_PASSWORD: 'bench-admin-pass-1',
      STRATA__AUTH__LOGIN_MAX_ATTEMPTS: '1000000', STRATA__CONSOLIDATION__ENABLED: 'false', STRATA__EMBEDDING__PROVIDER: 'hashing',
      ...env,
    },
  });
  try {
    await probe(server.url, 0, 20); // warm up
    const alone = summarize(await probe(server.url, Date.now() + 2000, 50));
    const until = Date.now() + args.seconds * 1000;
    const statuses = new Map<number, number>();
    const flood = Array.from({ length: args.clients }, () => loginLoop(server.url, until, statuses));
    await sleep(300); // the flood is under way
    const during = summarize(await probe(server.url, until, 20));
    await Promise.all(flood);
    const logins = Object.fromEntries([...statuses].sort(([a], [b]) => a - b).map(([s, n]) => [String(s), n]));
    return { label, env, alone, during_flood: during, logins, logins_per_s: Math.round(((statuses.get(401) ?? 0) / args.seconds) * 10) / 10 };
  } finally {
    await server.stop();
    removeDir(server.dataDir);
  }
}

async function main(): Promise<void> {
  const runs = [
    await measure('hash gate off (hash_concurrency 1000, queue 1000)', { STRATA__AUTH__HASH_CONCURRENCY: '1000', STRATA__AUTH__HASH_QUEUE: '1000' }),
    await measure('default gate (hash_concurrency 1, queue 16)', {}),
  ];
  console.log(`\n${args.clients} concurrent login clients for ${args.seconds} s; probe GET /v1/status/pending (ms)`);
  console.log('setting'.padEnd(52), 'alone p50/p99'.padEnd(18), 'during flood p50/p99'.padEnd(24), 'logins answered');
  for (const r of runs) {
    console.log(r.label.padEnd(52), `${r.alone.p50_ms} / ${r.alone.p99_ms}`.padEnd(18), `${r.during_flood.p50_ms} / ${r.during_flood.p99_ms}`.padEnd(24), JSON.stringify(r.logins));
  }
  mkdirSync(dirname(args.out), { recursive: true });
  writeFileSync(args.out, JSON.stringify({ date: new Date().toISOString(), cpus: cpus().length, clients: args.clients, seconds: args.seconds, runs }, null, 2) + '\n');
  console.log(`\nwritten to ${args.out}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
