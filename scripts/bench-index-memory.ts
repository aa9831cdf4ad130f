/**
 * Memory held by the per-user derived indexes (issue 11, item 4; docs/security.md "Memory bounds"), on
 * a real node process:
 *  1. RSS before and after `--unknown` retrieves (default 50,000) for distinct user ids that hold no
 *     memory, `--concurrency` at once (default 16). Such users get no cache entry: RSS should not grow
 *     with their number (the figure of record: < 50 MiB). Then as many again for other unknown ids: the
 *     first batch's growth is mostly V8 taking heap room for garbage; a leak would grow again as much.
 *  2. `--users` real small users (default 2,000; `--events` events each, consolidated by the node), each
 *     retrieved `--rounds` times round-robin under a `--budget` of `--budget-mib` (default 8 MiB): RSS,
 *     and the index cache's bytes, entries and evictions from /metrics (held bytes stay within budget).
 *  3. With --expose-gc, in this process: the size estimate of users' indexes (UnitSet.estimatedBytes,
 *     what the budget counts) against the heap they measurably hold, for users of 3, 50 and 1,000 units.
 * `--calibrate 20000x1,1000x4` sets the sizes of part 3 (units x users; it also prints the RSS they add) and `--calibrate-only` runs only part 3.
 * RSS is read from /proc/<pid>/status (VmRSS) and /metrics (strata_process_resident_memory_bytes).
 *
 *   node --expose-gc --conditions=strata-source --import tsx scripts/bench-index-memory.ts [--unknown 50000] [--users 2000] [--events 3]
 *     [--rounds 3] [--concurrency 16] [--budget-mib 8] [--provider local|hashing] [--out bench-results/index-memory.json]
 */
import { readFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import pino from 'pino';
import { StrataClient } from '@strata/client';
import { NodeStrataClient } from '@strata/client/node';
import { HashingEmbedder } from '../packages/memory/src/embedding/hashing-embedder';
import { DerivedIndexes } from '../packages/server/src/indexes/derived';
import { LocalLog, settle, StateDb, StateMachine, type MemoryUnit } from '../packages/store/src';
import { removeDir, startServer, type ServerProcess } from '../test/helpers/server-process';

const args = {
  unknown: 50_000, users: 2000, events: 3, rounds: 3, concurrency: 16, budgetMib: 8, provider: 'local',
  out: resolve(__dirname, '../bench-results/index-memory.json'),
  /** unitsxusers pairs of part 3 */
  calibrate: '3x400,50x60,1000x4',
  calibrateOnly: false,
};
for (let i = 2; i < process.argv.length; i += 2) {
  const [k, v] = [process.argv[i], process.argv[i + 1]];
  if (k === '--unknown') args.unknown = Number(v);
  else if (k === '--users') args.users = Number(v);
  else if (k === '--events') args.events = Number(v);
  else if (k === '--rounds') args.rounds = Number(v);
  else if (k === '--concurrency') args.concurrency = Number(v);
  else if (k === '--budget-mib') args.budgetMib = Number(v);
  else if (k === '--provider') args.provider = v;
  else if (k === '--out') args.out = resolve(v);
  else if (k === '--calibrate') args.calibrate = v;
  else if (k === '--calibrate-only') {
    args.calibrateOnly = true;
    i--; // a flag: no value
  }
  else throw new Error(`unknown option ${k}`);
}

const KEY = 'bench-index-memory-key-0123456789';
const STREAM = '5a5a5a5a-1b1b-4c2c-8d3d-4e4e4e4e4e4e';
const MIB = 1024 * 1024;
const TOPICS = 'garden trip paris dinner sister guitar concert marathon recipe pasta budget meeting project doctor museum camping beach dog'.split(' ');

const mib = (bytes: number) => Math.round((bytes / MIB) * 10) / 10;

function procRss(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

async function scrape(client: StrataClient): Promise<Record<string, number>> {
  const res = await client.raw<string>('GET', '/metrics', { auth: false });
  const text = typeof res.body === 'string' ? res.body : String(res.body);
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const m = /^(strata_(?:process_resident_memory_bytes|nodejs_heap_size_used_bytes|index_cache_[a-z_]+))\s+([0-9.e+]+)$/.exec(line);
    if (m) out[m[1]] = Number(m[2]);
  }
  return out;
}

async function measure(server: ServerProcess, client: StrataClient, label: string) {
  const metrics = await scrape(client);
  const figures = {
    label,
    rss_proc_mib: mib(procRss(server.pid)),
    rss_metrics_mib: mib(metrics.strata_process_resident_memory_bytes ?? NaN),
    heap_used_mib: mib(metrics.strata_nodejs_heap_size_used_bytes ?? NaN),
    index_cache_mib: mib(metrics.strata_index_cache_bytes ?? NaN),
    index_cache_entries: metrics.strata_index_cache_entries ?? NaN,
    index_cache_evictions: metrics.strata_index_cache_evictions ?? NaN,
  };
  console.log(JSON.stringify(figures));
  return figures;
}

/** Runs `count` jobs, `concurrency` at a time. */
async function pool(count: number, concurrency: number, job: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < count) await job(next++);
  }));
}

async function retrieveAll(client: StrataClient, ids: (i: number) => string, count: number): Promise<{ seconds: number; nonEmpty: number }> {
  const t0 = performance.now();
  let nonEmpty = 0;
  await pool(count, args.concurrency, async (i) => {
    const answer = await client.retrieve(ids(i), STREAM, { query: `what about the ${TOPICS[i % TOPICS.length]}?`, limit: 5 });
    if (answer.results.length > 0) nonEmpty++;
  });
  return { seconds: Math.round((performance.now() - t0) / 10) / 100, nonEmpty };
}

/** Estimate against measured heap for `users` users of `units` units each (100-dimension vectors). */
async function calibrate(units: number, users: number) {
  const gc = (globalThis as { gc?: () => void }).gc!;
  const dir = mkdtempSync(join(tmpdir(), 'strata-bench-calibrate-'));
  const db = await StateDb.open(join(dir, 'state'));
  const sm = await StateMachine.open(db);
  const log = await LocalLog.open(join(dir, 'log'), sm);
  const embedder = new HashingEmbedder({ dimensions: 100 });
  try {
    let n = 0;
    for (let u = 0; u <= users; u++) {
      const records: MemoryUnit[] = Array.from({ length: units }, (_, i) => ({
        id: `00000000-0000-4000-8000-${String(n++).padStart(12, '0')}`, user_id: `u${u}`, stream_id: STREAM, org_id: null, agent_id: null, level: 1,
        memory_type: 'factual', content: `User ${u} went to the ${TOPICS[(u + i) % TOPICS.length]} with the ${TOPICS[(u * 7 + i) % TOPICS.length]} on day ${i}.`,
        keywords: [TOPICS[(u * 3 + i) % TOPICS.length]], speaker: null, valid_time: '2026-01-01T00:00:00.000Z', transaction_time: '2026-01-01T00:00:00.000Z',
        references: [], assets: [], importance: 0.5, subject: null, attribute: null, retired_at: null, retired_reason: null, superseded_by: null,
      }));
      const vectors = await embedder.embed(records.map((r) => r.content));
      settle(await log.propose({
        type: 'memory.consolidate', user_id: `u${u}`, at: '2026-01-01T00:00:00.000Z', consumed: [], embedder_id: embedder.id, method: 'offline',
        units: records.map((unit, i) => ({ unit, vector: Array.from(vectors[i]) })), reinforced: [], retired: [], edges: [], dropped: [],
      }));
    }
    const indexes = new DerivedIndexes({ db, embedder, logger: pino({ level: 'silent' }) });
    await indexes.forUser('u0'); // first build: code paths and shared structures, not counted
    await indexes.settled();
    gc();
    gc();
    const before = process.memoryUsage();
    const held = [];
    for (let u = 1; u <= users; u++) held.push(await indexes.forUser(`u${u}`));
    await indexes.settled(); // vector graphs built (their memory is native)
    gc();
    gc();
    const after = process.memoryUsage();
    const measured = (after.heapUsed - before.heapUsed) / users;
    // what the process holds more: V8's heap as allocated, buffers, native allocations (the HNSW graph), malloc's slack
    const rss = (after.rss - before.rss) / users;
    const estimated = held.reduce((sum, index) => sum + index.estimatedBytes(), 0) / users;
    const figures = {
      units, users, measured_bytes_per_user: Math.round(measured), estimated_bytes_per_user: Math.round(estimated), ratio: Math.round((estimated / measured) * 100) / 100,
      rss_bytes_per_user: Math.round(rss), rss_ratio: Math.round((estimated / rss) * 100) / 100,
    };
    console.log(JSON.stringify(figures));
    await indexes.idle();
    return figures;
  } finally {
    await log.close();
    await db.close();
    removeDir(dir);
  }
}

async function main(): Promise<void> {
  if (args.calibrateOnly) {
    const calibration = [];
    for (const [units, users] of args.calibrate.split(',').map((p) => p.split('x').map(Number))) calibration.push(await calibrate(units, users));
    return;
  }
  const budget = Math.round(args.budgetMib * MIB);
  const server = await startServer({
    timeoutMs: 60_000,
    env: {
      STRATA_API_KEY: KEY, STRATA_LOG_LEVEL: 'info', STRATA__EMBEDDING__PROVIDER: args.provider,
      STRATA__MEMORY__INDEX_CACHE_BYTES: String(budget), STRATA__MEMORY__REINFORCE_TOP: '0',
      STRATA__CONSOLIDATION__INTERVAL_MS: '20', STRATA__CONSOLIDATION__BATCH_SIZE: '64',
    },
  });
  const client = new NodeStrataClient({ baseUrl: server.url, apiKey: KEY, connections: args.concurrency, timeoutMs: 120_000 });
  const phases: Record<string, unknown>[] = [];
  try {
    // Warm-up (JIT, connection pool, allocator arenas) so the baseline is not the cold process.
    await retrieveAll(client, (i) => `warmup-${i}`, 2000);
    const before = await measure(server, client, 'before unknown users');
    const unknown = await retrieveAll(client, (i) => `nobody-${i}-${(i * 2654435761) % 1e9}`, args.unknown);
    const after = await measure(server, client, `after ${args.unknown} unknown users`);
    const unknownGrowth = Math.round((after.rss_proc_mib - before.rss_proc_mib) * 10) / 10;
    console.log(`unknown users: ${args.unknown} retrieves in ${unknown.seconds} s, ${unknown.nonEmpty} non-empty; RSS ${before.rss_proc_mib} → ${after.rss_proc_mib} MiB (+${unknownGrowth} MiB)`);
    const unknown2 = await retrieveAll(client, (i) => `nobody-else-${i}`, args.unknown);
    const after2 = await measure(server, client, `after ${2 * args.unknown} unknown users`);
    const secondGrowth = Math.round((after2.rss_proc_mib - after.rss_proc_mib) * 10) / 10;
    console.log(`unknown users, second batch: ${args.unknown} more in ${unknown2.seconds} s; RSS ${after.rss_proc_mib} → ${after2.rss_proc_mib} MiB (${secondGrowth >= 0 ? '+' : ''}${secondGrowth} MiB)`);
    phases.push(before, after, after2);

    // Real small users: ingested over HTTP, consolidated by the node's worker.
    const t0 = performance.now();
    await pool(args.users, args.concurrency, async (u) => {
      const events = Array.from({ length: args.events }, (_, e) => ({
        content: `User ${u} went to the ${TOPICS[(u + e) % TOPICS.length]} with the ${TOPICS[(u * 7 + e) % TOPICS.length]} on day ${e}.`,
      }));
      await client.ingestBatch(`real-${u}`, STREAM, events);
    });
    const ready = await client.waitUntilReady(30 * 60_000, 200);
    const loadS = Math.round((performance.now() - t0) / 100) / 10;
    console.log(`real users: ${args.users} × ${args.events} events ingested and consolidated in ${loadS} s (pending ${ready.pending})`);
    const beforeReal = await measure(server, client, 'before real users');
    let nonEmpty = 0;
    let seconds = 0;
    for (let round = 0; round < args.rounds; round++) {
      const r = await retrieveAll(client, (i) => `real-${i}`, args.users);
      nonEmpty += r.nonEmpty;
      seconds += r.seconds;
      // each round rebuilds evicted users: RSS that keeps climbing round after round would be a leak
      if (round < args.rounds - 1) phases.push(await measure(server, client, `after round ${round + 1} over ${args.users} real users`));
    }
    const afterReal = await measure(server, client, `after ${args.rounds} rounds over ${args.users} real users`);
    console.log(`real users: ${args.rounds * args.users} retrieves in ${Math.round(seconds * 10) / 10} s, ${nonEmpty} non-empty; ` +
      `RSS ${beforeReal.rss_proc_mib} → ${afterReal.rss_proc_mib} MiB; cache ${afterReal.index_cache_mib} MiB in ${afterReal.index_cache_entries} entries ` +
      `(budget ${args.budgetMib} MiB, ${afterReal.index_cache_evictions} evictions)`);
    phases.push(beforeReal, afterReal);

    const calibration = [];
    if ((globalThis as { gc?: unknown }).gc) {
      for (const [units, users] of args.calibrate.split(',').map((p) => p.split('x').map(Number))) calibration.push(await calibrate(units, users));
    } else console.log('calibration skipped: run with node --expose-gc');

    const result = {
      when: new Date().toISOString(),
      args: { ...args, out: undefined },
      unknown_users: {
        retrieves: args.unknown, seconds: unknown.seconds, non_empty: unknown.nonEmpty, rss_growth_mib: unknownGrowth, pass: unknownGrowth < 50,
        second_batch_rss_growth_mib: secondGrowth,
      },
      real_users: {
        users: args.users, events_each: args.events, rounds: args.rounds, non_empty: nonEmpty, budget_mib: args.budgetMib,
        cache_mib: afterReal.index_cache_mib, cache_entries: afterReal.index_cache_entries, evictions: afterReal.index_cache_evictions,
        within_budget: afterReal.index_cache_mib <= args.budgetMib,
        rss_growth_mib: Math.round((afterReal.rss_proc_mib - beforeReal.rss_proc_mib) * 10) / 10,
      },
      phases,
      estimate_calibration: calibration,
    };
    mkdirSync(dirname(args.out), { recursive: true });
    writeFileSync(args.out, JSON.stringify(result, null, 2) + '\n');
    console.log(`written ${args.out}`);
  } finally {
    await client.close();
    await server.stop();
    removeDir(server.dataDir);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
