/**
 * Concurrent retrieval over HTTP against a real node process (`npm run bench:retrieval -- --http ...`):
 * N users, each loaded with M events (chat turns ingested over HTTP and consolidated by the node, as a
 * user would) or M units (imported with their vectors: no consolidation, fast to reach 100,000), then C
 * clients query for a fixed time while another polls GET /livez. Per run it reports queries/s, client
 * and server (`query_time_ms`) p50/p99, the worst /livez during the storm, the node's RSS and CPU per
 * query, the server's retrieval stages (mean ms, from strata_retrieval_stage_seconds) and the index
 * cache's builds and evictions during the storm. RSS is given three ways: at the end of the storm (what V8
 * holds then depends on when it last collected: ±60-80 MiB at 100,000 units), averaged over the storm,
 * and after a full collection in the node once the storm ended (`--expose-gc` and a bench-only preload,
 * scripts/lib/gc-on-signal.cjs, signalled with SIGUSR2).
 *
 * `--env KEY=VALUE` (repeatable) sets the node's environment, e.g. a configuration key
 * (`STRATA__RETRIEVAL__WORKER_MIN_UNITS=0`); `--baseline-env KEY=VALUE` the baseline's, so one commit can
 * be measured against itself configured otherwise (`--baseline HEAD --baseline-env ...`). `--node-arg FLAG` and
 * `--baseline-node-arg FLAG` (repeatable) add node or V8 flags to either node's command line, after those of
 * its tree's `npm start` (`--node-arg --max-semi-space-size=8`: a flag measured before it goes into `npm start`).
 *
 * `--baseline REV` runs the same bench, run for run interleaved, against the node of another commit
 * (its tree extracted with `git archive` into a temporary directory, sharing this checkout's
 * node_modules), or of another checkout when REV is a directory (a worktree with its own node_modules),
 * and prints each figure's ratio: on a shared machine only ratios measured in one run
 * say anything. That is how a regression like issue 28's (server p99 4-17 ms → 115-131 ms after a
 * drain) is caught: `--baseline main` before merging a change to the query path.
 *
 * `--keep-data DIR` keeps the first run's data directory (copied once its node has stopped, after the storm) and
 * `--data-from DIR` starts every run's node on a copy of such a directory instead of loading it: the same
 * consolidated memory for every tree and run (consolidation's output varies with its timing), and no
 * 20,000 events to consolidate per run while a change to the query path is iterated on. Its state includes
 * what the kept run's warm-up and storm reinforced; pass the same --users and --events / --units.
 *
 *   node --expose-gc --conditions=strata-source --import tsx scripts/bench-retrieval.ts --http [--users 20] [--events 1000 | --units 100000]
 *        [--clients 8] [--seconds 15] [--runs 3] [--provider local|hashing] [--baseline REV] [--out FILE] [--cpu-prof-dir DIR] [--settle-s S]
 *        [--env KEY=VALUE]... [--baseline-env KEY=VALUE]... [--node-arg FLAG]... [--baseline-node-arg FLAG]... [--hold-s S]
 *        [--keep-data DIR | --data-from DIR]
 */
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { NodeStrataClient } from '@strata/client/node';
import { StrataClient, type EventInput } from '@strata/client';
import { createEmbedder } from '../packages/memory/src/embedding/factory';
import type { Embedder } from '../packages/memory/src/providers/types';
import { mulberry32 } from '../packages/memory/src/embedding/hash';
import { deterministicUuid, loadLocomo, turnContent, type LocomoConversation } from './lib/locomo';
import { freePort, ROOT, sleep, waitHttp } from './lib/processes';
import { percentile } from './lib/stats';

export interface ConcurrentArgs {
  users: number;
  events: number;
  units: number;
  clients: number;
  seconds: number;
  runs: number;
  provider: string;
  baseline: string | null;
  data: string;
  out: string;
  /** after the warm-up, seconds to wait on a node without the strata_index_graphs_building gauge (an older baseline) */
  settleS: number;
  /** run the nodes under `node --cpu-prof`, profiles written here (scripts/cpuprofile-summary.ts reads them) */
  cpuProfDir: string | null;
  /** the environment added to this tree's node, and to the baseline's */
  env: Record<string, string>;
  baselineEnv: Record<string, string>;
  /** node flags added to this tree's node (after its `npm start` flags), and to the baseline's: V8's, e.g. `--max-semi-space-size=8` */
  nodeArgs: string[];
  baselineNodeArgs: string[];
  /** after each storm, seconds the node is kept running (its pid printed) to be inspected: smaps, gdb, a heap snapshot */
  holdS: number;
  /** the first run's data directory is copied here once its node stopped (null: none kept) */
  keepData: string | null;
  /** every run starts on a copy of this data directory instead of loading users (null: load) */
  dataFrom: string | null;
}

function keyValue(v: string, into: Record<string, string>): void {
  const at = v.indexOf('=');
  if (at < 1) throw new Error(`expected KEY=VALUE, got ${v}`);
  into[v.slice(0, at)] = v.slice(at + 1);
}

export function parseConcurrentArgs(argv: string[]): ConcurrentArgs {
  const a: ConcurrentArgs = {
    users: 20, events: 1000, units: 0, clients: 8, seconds: 15, runs: 3, provider: 'local', baseline: null,
    data: resolve(ROOT, '../shared/data/locomo'), out: resolve(ROOT, 'bench-results/retrieval-concurrent.json'), cpuProfDir: null, settleS: 0,
    env: {}, baselineEnv: {}, nodeArgs: [], baselineNodeArgs: [], holdS: 0, keepData: null, dataFrom: null,
  };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    if (k === '--http') continue;
    const v = argv[++i];
    if (v === undefined) throw new Error(`${k} needs a value`);
    switch (k) {
      case '--users': a.users = Number(v); break;
      case '--events': a.events = Number(v); a.units = 0; break;
      case '--units': a.units = Number(v); a.events = 0; break;
      case '--clients': a.clients = Number(v); break;
      case '--seconds': a.seconds = Number(v); break;
      case '--runs': a.runs = Number(v); break;
      case '--provider': a.provider = v; break;
      case '--baseline': a.baseline = v; break;
      case '--data': a.data = resolve(v); break;
      case '--out': a.out = resolve(v); break;
      case '--cpu-prof-dir': a.cpuProfDir = resolve(v); break;
      case '--settle-s': a.settleS = Number(v); break;
      case '--env': keyValue(v, a.env); break;
      case '--baseline-env': keyValue(v, a.baselineEnv); break;
      case '--hold-s': a.holdS = Number(v); break;
      case '--node-arg': a.nodeArgs.push(v); break;
      case '--baseline-node-arg': a.baselineNodeArgs.push(v); break;
      case '--keep-data': a.keepData = resolve(v); break;
      case '--data-from': a.dataFrom = resolve(v); break;
      default: throw new Error(`unknown option ${k}`);
    }
  }
  return a;
}

export const API_KEY = 'bench-concurrent-admin-key';
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;
const pct = (xs: number[], p: number) => (xs.length === 0 ? NaN : round(percentile([...xs].sort((a, b) => a - b), p)));

/** A commit's tree in a temporary directory, running on this checkout's node_modules (the workspace links point at its own packages). */
export function extractTree(rev: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'strata-baseline-'));
  execFileSync('sh', ['-c', `git -C "${ROOT}" archive "${rev}" | tar -x -C "${dir}"`]);
  const linkModules = (from: string, to: string) => {
    mkdirSync(to, { recursive: true });
    for (const name of readdirSync(from)) {
      if (name === '@strata') continue;
      symlinkSync(join(from, name), join(to, name));
    }
  };
  linkModules(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  mkdirSync(join(dir, 'node_modules', '@strata'));
  for (const pkg of readdirSync(join(dir, 'packages'))) {
    symlinkSync(join('..', '..', 'packages', pkg), join(dir, 'node_modules', '@strata', pkg));
    const own = join(ROOT, 'packages', pkg, 'node_modules');
    try {
      linkModules(own, join(dir, 'packages', pkg, 'node_modules'));
    } catch {
      // the package has no node_modules of its own
    }
  }
  return dir;
}

interface NodeProcess {
  url: string;
  pid: number;
  stop(): Promise<void>;
  /** a full garbage collection in the node (SIGUSR2 to the bench's preload, scripts/lib/gc-on-signal.cjs): the memory after it, MiB */
  collect(): Promise<GcReport>;
}

interface GcReport { gc_ms: number; heap_used_before: number; heap_used: number; heap_total: number; external: number; array_buffers: number; rss: number }

/**
 * Every tree's node runs with `--expose-gc` and this checkout's preload, which collects on SIGUSR2 (the
 * node itself has no such hook; an older baseline commit neither). --expose-gc changes no heuristic of
 * V8's: it only defines `gc`.
 */
const GC_PRELOAD = join(ROOT, 'scripts', 'lib', 'gc-on-signal.cjs');

/** The node flags the tree's `npm start` gives (V8's, e.g. `--max-semi-space-size`), so the bench runs the node as users start it. */
function startFlags(root: string): string[] {
  const start = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts?: { start?: string } }).scripts?.start ?? '';
  const words = start.split(/\s+/);
  return words[0] === 'node' ? words.slice(1).filter((w) => w.startsWith('--')) : [];
}

/**
 * A node process of the tree in `root` on a free port, with the node flags of its `npm start`, default
 * configuration but for the API key and embedder; its log at warn (an info line per request would be
 * the bench's own cost), so readiness is polled on /livez.
 */
export async function startNode(root: string, dataDir: string, provider: string, cpuProfDir: string | null, env: Record<string, string>, nodeArgs: string[]): Promise<NodeProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [...startFlags(root), ...nodeArgs, '--expose-gc', '--require', GC_PRELOAD, ...(cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', cpuProfDir] : []), '--conditions=strata-source', '--import', 'tsx', 'packages/server/src/main.ts'], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', STRATA_PORT: String(port), STRATA_HOST: '127.0.0.1', STRATA_DATA_DIR: dataDir,
      STRATA_LOG_LEVEL: 'warn', STRATA_API_KEY: API_KEY, STRATA__EMBEDDING__PROVIDER: provider, ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  const gcReports: GcReport[] = [];
  const gcWaiters: (() => void)[] = [];
  let line = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    const text = chunk.toString();
    err = (err + text).slice(-20_000);
    line += text;
    const lines = line.split('\n');
    line = lines.pop()!;
    for (const l of lines) {
      if (!l.startsWith('strata-bench-gc ')) continue;
      gcReports.push(JSON.parse(l.slice('strata-bench-gc '.length)) as GcReport);
      for (const w of gcWaiters.splice(0)) w();
    }
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const stop = async () => {
    child.kill('SIGTERM');
    const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(t);
  };
  const collect = async (): Promise<GcReport> => {
    const seen = gcReports.length;
    child.kill('SIGUSR2');
    await new Promise<void>((resolveDone, reject) => {
      const t = setTimeout(() => reject(new Error(`no full collection reported in 60 s\n${err}`)), 60_000);
      gcWaiters.push(() => {
        clearTimeout(t);
        resolveDone();
      });
    });
    return gcReports[seen];
  };
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitHttp(`${url}/livez`, (status) => status === 200, 'the node to serve', {}, 60_000);
  } catch (e) {
    await stop();
    throw new Error(`${(e as Error).message}\n${err}`);
  }
  return { url, pid: child.pid!, stop, collect };
}

/**
 * The node's resident memory by kind of mapping (/proc/PID/smaps), MiB: anonymous memory (V8's heap,
 * malloc's arenas, native buffers), and file-backed pages, which the kernel can take back (LevelDB's
 * mapped tables, the node binary, other files).
 */
function rssParts(pid: number): { anon: number; file: number; leveldb_tables: number; node_binary: number; other_files: number } {
  const parts = { anon: 0, file: 0, leveldb_tables: 0, node_binary: 0, other_files: 0 };
  let path = '';
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      path = head[1];
      continue;
    }
    const m = /^Rss:\s+(\d+) kB/.exec(line);
    if (!m) continue;
    const kb = Number(m[1]);
    if (!path.startsWith('/')) parts.anon += kb;
    else {
      parts.file += kb;
      if (path.endsWith('.ldb') || path.endsWith('.sst')) parts.leveldb_tables += kb;
      else if (path === process.execPath || path.endsWith('/node')) parts.node_binary += kb;
      else parts.other_files += kb;
    }
  }
  for (const k of Object.keys(parts) as (keyof typeof parts)[]) parts[k] = Math.round(parts[k] / 1024);
  return parts;
}

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : NaN;
}

/** CPU seconds (user + system, every thread) of a process so far. */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** CPU seconds of each thread of a process so far, by thread id (the main thread's id is the pid). */
function threadCpuSeconds(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const fields = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ');
      out.set(Number(tid), (Number(fields[11]) + Number(fields[12])) / 100);
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}

/**
 * CPU ms per query of the main thread, and of the busiest other thread (the index worker when it ranks
 * queries; otherwise a libuv or GC helper): which thread a query's CPU is spent on.
 */
function threadSplit(pid: number, before: Map<number, number>, after: Map<number, number>, queries: number): { main: number; busiest_other: number } {
  let other = 0;
  for (const [tid, s] of after) if (tid !== pid) other = Math.max(other, s - (before.get(tid) ?? 0));
  const main = (after.get(pid) ?? 0) - (before.get(pid) ?? 0);
  const perQuery = (s: number) => round((s * 1000) / Math.max(1, queries));
  return { main: perQuery(main), busiest_other: perQuery(other) };
}

/** strata_retrieval_stage_seconds sums and counts by stage, and the index cache's counters, from /metrics. */
async function scrape(client: StrataClient): Promise<Map<string, number>> {
  const res = await client.raw<string>('GET', '/metrics');
  const text = typeof res.body === 'string' ? res.body : JSON.stringify(res.body);
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^(strata_retrieval_stage_seconds_(?:sum|count)\{stage="(\w+)"\}|strata_nodejs_gc_duration_seconds_(?:sum|count)\{kind="\w+"\}|strata_index_cache_(?:builds|evictions)|strata_raft_log_bytes\{[^}]*\}|strata_index_cache_bytes|strata_index_graphs_building|strata_nodejs_heap_size_(?:used|total)_bytes|strata_nodejs_external_memory_bytes) ([\d.e+-]+)$/.exec(line);
    if (m) out.set(m[1], Number(m[3]));
  }
  return out;
}

/** Chat turns of the LoCoMo development conversations, handed out to users in turn (each user its own offset). */
export function chatEvents(convs: LocomoConversation[], user: number, count: number): { stream: string; events: EventInput[] }[] {
  const turns = convs.flatMap((c) => c.sessions.flatMap((s) => s.turns.map((t) => ({ content: turnContent(t), valid_time: s.date }))));
  const perStream = 100;
  const out: { stream: string; events: EventInput[] }[] = [];
  for (let i = 0; i < count; i++) {
    if (i % perStream === 0) out.push({ stream: deterministicUuid(`bench-user-${user}/stream/${i / perStream}`), events: [] });
    const t = turns[(user * 71 + i) % turns.length];
    out[out.length - 1].events.push({ content: t.content, role: 'user', valid_time: t.valid_time });
  }
  return out;
}

/** Units with their vectors as import lines (docs/export-format.md). */
async function importUnits(client: StrataClient, embedder: Embedder, convs: LocomoConversation[], user: string, count: number): Promise<void> {
  const turns = convs.flatMap((c) => c.sessions.flatMap((s) => s.turns.map((t) => ({ text: t.text, valid_time: s.date }))));
  const stream = deterministicUuid(`${user}/stream`);
  const header = JSON.stringify({ kind: 'header', format: 'strata-export', version: 1, embedder: { id: embedder.id, dimensions: embedder.dimensions } });
  for (let start = 0; start < count; start += 5000) {
    const n = Math.min(5000, count - start);
    // turns recombined so that units differ (the same text twice would be one document twice)
    const texts = Array.from({ length: n }, (_, i) => {
      const a = turns[(start + i) % turns.length];
      const b = turns[(start + i) * 7 % turns.length];
      return { content: `${a.text} ${b.text.split(' ').slice(0, 6).join(' ')}`, valid_time: a.valid_time };
    });
    const vectors = await embedder.embed(texts.map((t) => t.content));
    const lines = [header];
    texts.forEach((t, i) => {
      const id = `00000000-0000-4000-8000-${String(start + i).padStart(12, '0')}`;
      lines.push(JSON.stringify({
        kind: 'unit', id, user_id: user, stream_id: stream, org_id: null, agent_id: null, level: 1, memory_type: 'factual', content: t.content,
        keywords: [], speaker: null, valid_time: t.valid_time, transaction_time: '2026-01-01T00:00:00.000Z', references: [], assets: [], importance: 0.5,
        subject: null, attribute: null, retired_at: null, retired_reason: null, superseded_by: null,
        vector: { embedder_id: embedder.id, dims: embedder.dimensions, f32_b64: Buffer.from(new Float32Array(vectors[i]).buffer).toString('base64') }, stats: null,
      }));
    });
    lines.push(JSON.stringify({ kind: 'user', user_id: user, org_id: null }));
    await client.importNdjson(lines.join('\n') + '\n');
  }
}

interface RunFigures {
  tree: string;
  run: number;
  load_s: number;
  drain_s: number | null;
  warm_s: number;
  queries: number;
  qps: number;
  client_ms: { p50: number; p99: number };
  server_ms: { p50: number; p99: number };
  livez_ms: { p99: number; max: number; samples: number };
  node_cpu_ms_per_query: number;
  /** the same split by thread (threadSplit) */
  thread_cpu_ms_per_query: { main: number; busiest_other: number };
  /** the machine's 1-minute load average as the storm began and ended (a run pair is comparable only at similar load) */
  load_average: [number, number];
  /** before the first query; at the end of the storm; the largest and the mean of the samples over the storm (every ~20 /livez polls) */
  rss_mib: { before: number; end: number; max: number; mean: number; samples: number };
  /**
   * after the storm, once the node ran a full collection (NodeProcess.collect) and a second passed: the
   * RSS without V8's room for garbage, whose size at the end of a storm depends on when V8 last collected
   */
  after_gc_mib: { rss: number; anon: number; file: number; heap_used: number; heap_total: number; external: number; gc_ms: number };
  /** the end's RSS by kind of mapping (rssParts) */
  rss_parts_mib: ReturnType<typeof rssParts>;
  stages_mean_ms: Record<string, number>;
  /**
   * the main thread's GC pauses during the storm per query, ms, by kind (minor: scavenges; major:
   * mark-compact finalizations; incremental: marking steps), from strata_nodejs_gc_duration_seconds (the
   * perf_hooks entries prom-client observes, the first of each batch only: a floor)
   */
  gc_ms_per_query: Record<string, number>;
  index_cache: { builds: number; evictions: number; bytes_mib: number };
  raft_log_mib: number;
  /** what the node's memory is made of at the end (V8's figures and the node's own estimates, from /metrics) */
  memory_mib: { heap_used: number; heap_total: number; external: number; index_cache_estimate: number; raft_log: number };
  errors: number;
  /** the storm's seconds from the node's start (the window of a --cpu-prof profile: cpuprofile-summary --from/--to) */
  storm_window_s: [number, number];
}

async function oneRun(root: string, tree: string, run: number, a: ConcurrentArgs, convs: LocomoConversation[], embedder: Embedder, env: Record<string, string>, nodeArgs: string[]): Promise<RunFigures> {
  const dataDir = mkdtempSync(join(tmpdir(), 'strata-bench-concurrent-'));
  if (a.dataFrom) cpSync(a.dataFrom, dataDir, { recursive: true });
  const spawnedAt = performance.now();
  const node = await startNode(root, dataDir, a.provider, a.cpuProfDir, env, nodeArgs);
  const client = new NodeStrataClient({ baseUrl: node.url, apiKey: API_KEY, connections: a.clients + 2, timeoutMs: 600_000 });
  const probe = new NodeStrataClient({ baseUrl: node.url, apiKey: API_KEY, connections: 1, timeoutMs: 60_000 });
  const users = Array.from({ length: a.users }, (_, i) => `bench-user-${i}`);
  const streams = new Map<string, string>();
  try {
    await client.waitUntilReady(60_000);
    const t0 = performance.now();
    let drainS: number | null = null;
    if (a.dataFrom) {
      // loaded by an earlier run (--keep-data): the users' streams are the ones it ingested into
      users.forEach((user, u) => streams.set(user, a.events > 0 ? chatEvents(convs, u, a.events).at(-1)!.stream : deterministicUuid(`${user}/stream`)));
      const status = await client.waitUntilReady(3_600_000, 500);
      if (!status.ready) throw new Error(`not ready: ${JSON.stringify(status)}`);
    } else if (a.events > 0) {
      await Promise.all(users.map(async (user, u) => {
        for (const { stream, events } of chatEvents(convs, u, a.events)) {
          streams.set(user, stream);
          await client.ingestBatch(user, stream, events);
        }
      }));
      const d0 = performance.now();
      const status = await client.waitUntilReady(3_600_000, 500);
      if (!status.ready) throw new Error(`not drained: ${JSON.stringify(status)}`);
      drainS = round((performance.now() - d0) / 1000, 1);
    } else {
      for (const user of users) {
        await importUnits(client, embedder, convs, user, a.units);
        streams.set(user, deterministicUuid(`${user}/stream`));
      }
    }
    const loadS = round((performance.now() - t0) / 1000, 1);
    const rssBefore = rssMiB(node.pid);

    // LoCoMo questions as queries, in a seeded order
    const questions = convs.flatMap((c) => c.qa.map((q) => q.question));
    const rnd = mulberry32(run + 1);
    // warm: every user's indexes built (the first query of a user builds them), then a few seconds of queries
    // so the storm measures the steady state: index builds are bench:retrieval's in-process and single-user figures
    const w0 = performance.now();
    for (const user of users) await client.retrieve(user, streams.get(user)!, { query: questions[0] });
    for (let i = 0; i < 2 * a.users + 50; i++) {
      const user = users[i % users.length];
      await client.retrieve(user, streams.get(user)!, { query: questions[Math.floor(rnd() * questions.length)] });
    }
    // a large user's vector graph builds in a worker after its first query (exact search meanwhile): the
    // storm measures the steady state, so wait for it (nodes without the gauge are not waited for)
    if (!(await scrape(probe)).has('strata_index_graphs_building')) await sleep(a.settleS * 1000);
    for (let i = 0; i < 1200 && ((await scrape(probe)).get('strata_index_graphs_building') ?? 0) > 0; i++) await sleep(500);
    const warmS = round((performance.now() - w0) / 1000, 1);

    const before = await scrape(probe);
    const cpu0 = cpuSeconds(node.pid);
    const threads0 = threadCpuSeconds(node.pid);
    const load0 = loadavg()[0];
    let running = true;
    const livez: number[] = [];
    const rss: number[] = [];
    const poller = (async () => {
      while (running) {
        const s = performance.now();
        await probe.raw('GET', '/livez', { auth: false });
        livez.push(performance.now() - s);
        if (livez.length % 20 === 0) rss.push(rssMiB(node.pid));
        await sleep(5);
      }
    })();
    const clientMs: number[] = [];
    const serverMs: number[] = [];
    let errors = 0;
    const s0 = performance.now();
    const deadline = s0 + a.seconds * 1000;
    await Promise.all(Array.from({ length: a.clients }, async () => {
      while (performance.now() < deadline) {
        const user = users[Math.floor(rnd() * users.length)];
        const q = questions[Math.floor(rnd() * questions.length)];
        const s = performance.now();
        try {
          const r = await client.retrieve(user, streams.get(user)!, { query: q, limit: 10 });
          clientMs.push(performance.now() - s);
          serverMs.push(r.query_time_ms);
        } catch {
          errors++;
        }
      }
    }));
    const stormS = (performance.now() - s0) / 1000;
    running = false;
    await poller;
    const cpu = cpuSeconds(node.pid) - cpu0;
    const threads1 = threadCpuSeconds(node.pid);
    const load1 = loadavg()[0];
    const after = await scrape(probe);
    const delta = (k: string) => (after.get(k) ?? 0) - (before.get(k) ?? 0);
    const stages: Record<string, number> = {};
    for (const key of after.keys()) {
      const m = /^strata_retrieval_stage_seconds_sum\{stage="(\w+)"\}$/.exec(key);
      if (!m) continue;
      const count = delta(`strata_retrieval_stage_seconds_count{stage="${m[1]}"}`);
      if (count > 0) stages[m[1]] = round((delta(key) / count) * 1000, 3);
    }
    const gcPerQuery: Record<string, number> = {};
    for (const key of after.keys()) {
      const m = /^strata_nodejs_gc_duration_seconds_sum\{kind="(\w+)"\}$/.exec(key);
      if (m) gcPerQuery[m[1]] = round((delta(key) * 1000) / Math.max(1, clientMs.length), 3);
    }
    const logBytes = [...after].filter(([k]) => k.startsWith('strata_raft_log_bytes')).reduce((s, [, v]) => s + v, 0);
    const end = rssMiB(node.pid);
    const endParts = rssParts(node.pid);
    const gc = await node.collect();
    await sleep(1000);
    const gcParts = rssParts(node.pid);
    const gcRss = rssMiB(node.pid);
    const gcMetrics = await scrape(probe);
    if (a.holdS > 0) {
      process.stderr.write(`holding node ${node.pid} (${tree}) for ${a.holdS} s\n`);
      await sleep(a.holdS * 1000);
    }
    return {
      tree, run, load_s: loadS, drain_s: drainS, warm_s: warmS, queries: clientMs.length, qps: Math.round(clientMs.length / stormS),
      client_ms: { p50: pct(clientMs, 50), p99: pct(clientMs, 99) }, server_ms: { p50: pct(serverMs, 50), p99: pct(serverMs, 99) },
      livez_ms: { p99: pct(livez, 99), max: pct(livez, 100), samples: livez.length },
      node_cpu_ms_per_query: round((cpu * 1000) / Math.max(1, clientMs.length)),
      thread_cpu_ms_per_query: threadSplit(node.pid, threads0, threads1, clientMs.length),
      load_average: [round(load0, 1), round(load1, 1)],
      rss_mib: { before: rssBefore, end, max: Math.max(end, ...rss), mean: Math.round(rss.reduce((x, y) => x + y, 0) / Math.max(1, rss.length)), samples: rss.length },
      after_gc_mib: {
        rss: gcRss, anon: gcParts.anon, file: gcParts.file,
        heap_used: round((gcMetrics.get('strata_nodejs_heap_size_used_bytes') ?? NaN) / 1048576, 1),
        heap_total: round((gcMetrics.get('strata_nodejs_heap_size_total_bytes') ?? NaN) / 1048576, 1),
        external: round((gcMetrics.get('strata_nodejs_external_memory_bytes') ?? NaN) / 1048576, 1), gc_ms: gc.gc_ms,
      },
      rss_parts_mib: endParts,
      stages_mean_ms: stages, gc_ms_per_query: gcPerQuery,
      index_cache: {
        builds: delta('strata_index_cache_builds'), evictions: delta('strata_index_cache_evictions'),
        bytes_mib: round((after.get('strata_index_cache_bytes') ?? 0) / 1048576, 1),
      },
      raft_log_mib: round(logBytes / 1048576, 1),
      memory_mib: {
        heap_used: round((after.get('strata_nodejs_heap_size_used_bytes') ?? NaN) / 1048576, 1),
        heap_total: round((after.get('strata_nodejs_heap_size_total_bytes') ?? NaN) / 1048576, 1),
        external: round((after.get('strata_nodejs_external_memory_bytes') ?? NaN) / 1048576, 1),
        index_cache_estimate: round((after.get('strata_index_cache_bytes') ?? NaN) / 1048576, 1), raft_log: round(logBytes / 1048576, 1),
      },
      errors, storm_window_s: [round((s0 - spawnedAt) / 1000, 1), round((s0 - spawnedAt) / 1000 + stormS, 1)],
    };
  } finally {
    await client.close();
    await probe.close();
    await node.stop();
    if (a.keepData && !existsSync(a.keepData)) {
      cpSync(dataDir, a.keepData, { recursive: true });
      process.stderr.write(`data directory kept in ${a.keepData}\n`);
    }
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const median = (xs: number[]) => {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.floor((s.length - 1) / 2)];
};

export async function runConcurrent(a: ConcurrentArgs): Promise<void> {
  const convs = loadLocomo(a.data);
  const embedder = await createEmbedder({ provider: a.provider as 'local' });
  const trees: { name: string; root: string; temp: boolean; env: Record<string, string>; nodeArgs: string[] }[] = [{ name: 'this', root: ROOT, temp: false, env: a.env, nodeArgs: a.nodeArgs }];
  if (a.baseline) {
    const dir = existsSync(a.baseline) && statSync(a.baseline).isDirectory();
    trees.push({ name: a.baseline, root: dir ? resolve(a.baseline) : extractTree(a.baseline), temp: !dir, env: a.baselineEnv, nodeArgs: a.baselineNodeArgs });
  }
  const runs: RunFigures[] = [];
  const load = a.events > 0 ? `${a.users} users × ${a.events} events (ingested, consolidated)` : `${a.users} users × ${a.units} units (imported)`;
  process.stderr.write(`${load}, ${a.clients} clients × ${a.seconds} s, ${a.runs} runs${a.baseline ? `, baseline ${a.baseline}` : ''}\n`);
  try {
    for (let run = 0; run < a.runs; run++) {
      // interleaved: each run measures every tree in turn, so the machine's load touches both alike
      for (const tree of run % 2 === 0 ? trees : [...trees].reverse()) {
        const figures = await oneRun(tree.root, tree.name, run, a, convs, embedder, tree.env, tree.nodeArgs);
        runs.push(figures);
        process.stderr.write(`${JSON.stringify(figures)}\n`);
      }
    }
  } finally {
    for (const t of trees) if (t.temp) rmSync(t.root, { recursive: true, force: true });
    await (embedder as { close?: () => Promise<void> }).close?.();
  }
  const rows = trees.map((t) => {
    const mine = runs.filter((r) => r.tree === t.name);
    const col = (f: (r: RunFigures) => number) => mine.map(f);
    return {
      tree: t.name,
      'q/s': col((r) => r.qps), 'client p50': col((r) => r.client_ms.p50), 'client p99': col((r) => r.client_ms.p99),
      'server p50': col((r) => r.server_ms.p50), 'server p99': col((r) => r.server_ms.p99), 'livez max': col((r) => r.livez_ms.max),
      'RSS MiB': col((r) => r.rss_mib.max), 'RSS mean': col((r) => r.rss_mib.mean), 'RSS aft GC': col((r) => r.after_gc_mib.rss),
      'RSS anon': col((r) => r.rss_parts_mib.anon), 'anon aft GC': col((r) => r.after_gc_mib.anon), 'RSS file': col((r) => r.rss_parts_mib.file),
      'heap used': col((r) => r.memory_mib.heap_used), 'heap total': col((r) => r.memory_mib.heap_total),
      'heap aft GC': col((r) => r.after_gc_mib.heap_used), 'htot aft GC': col((r) => r.after_gc_mib.heap_total), 'CPU ms/q': col((r) => r.node_cpu_ms_per_query),
      'GC ms/q': col((r) => round(Object.values(r.gc_ms_per_query).reduce((x, y) => x + y, 0), 3)),
      'minor GC/q': col((r) => r.gc_ms_per_query.minor ?? 0),
      'load avg': col((r) => r.load_average[0]), 'main CPU/q': col((r) => r.thread_cpu_ms_per_query.main), 'other CPU/q': col((r) => r.thread_cpu_ms_per_query.busiest_other),
    };
  });
  console.log(`\n${load}, ${a.clients} clients × ${a.seconds} s; load average ${loadavg()[0].toFixed(1)}`);
  for (const row of rows) {
    console.log(`${row.tree}:`);
    for (const [k, v] of Object.entries(row)) if (k !== 'tree') console.log(`  ${k.padEnd(11)} ${(v as number[]).join(' / ')}`);
  }
  const ratios: Record<string, number> = {};
  if (rows.length === 2) {
    console.log(`ratio this / ${a.baseline} (medians):`);
    for (const k of Object.keys(rows[0])) {
      if (k === 'tree') continue;
      ratios[k] = round(median(rows[0][k as 'q/s']) / median(rows[1][k as 'q/s']));
      console.log(`  ${k.padEnd(11)} ${ratios[k]}`);
    }
  }
  const report = {
    at: new Date().toISOString(), command: `node --expose-gc --conditions=strata-source --import tsx scripts/bench-retrieval.ts ${process.argv.slice(2).join(' ')}`,
    args: a, embedder: embedder.id, load_average_1m: round(loadavg()[0], 1), runs, ratios,
  };
  mkdirSync(dirname(a.out), { recursive: true });
  writeFileSync(a.out, JSON.stringify(report, null, 2) + '\n');
}
