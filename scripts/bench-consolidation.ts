/**
 * Consolidation throughput and memory of one real node process, on the LoCoMo development conversations.
 *   node --conditions=strata-source --import tsx scripts/bench-consolidation.ts [--data ../shared/data/locomo] [--provider local|hashing]
 *        [--batch-size 64] [--interval-ms 200] [--timeout-s 600] [--cpu-prof-dir DIR] [--trickle [--trickle-events N]] [--gather-ms MS]
 * Phase 1 ingests every turn ("<speaker>: <text>", one stream per session, valid_time = the session's date,
 * one user per conversation) into a node with consolidation turned off. Phase 2 restarts the node on the
 * same data with consolidation on and times the drain from the node's readiness (a leader elected) to
 * `ready: true`, sampling the process's RSS and CPU time. So the figure is consolidation alone
 * (planning, embedding, proposing, applying), not ingest nor start-up.
 * Prints a table and writes bench-results/consolidation.json. `--cpu-prof-dir` runs the phase-2 node
 * under `node --cpu-prof` (a .cpuprofile in DIR when it stops; scripts/cpuprofile-summary.ts reads it).
 *
 * `--trickle` adds what a live workload pays: the same turns arrive in rounds of 1-5 events per user
 * (seeded), each round waiting until the backlog is consolidated, so every batch holds 1-5 events of a
 * user. Run twice on fresh nodes, with consolidation off (what ingesting those requests costs) and on;
 * consolidation's CPU per event in a trickle is the difference over the events, beside the bulk
 * drain's CPU per event (phase 2) and their ratio. `--trickle-events N` trickles the first N turns
 * only (default: all). `--gather-ms` sets the node's `[consolidation] gather_ms` (default: the node's, 1,000):
 * each trickle round waits for its events to be consolidated, so the gather window is idle time the
 * round pays (450 rounds, 7 minutes or more per run with the default); a short one makes the trickle's
 * rounds follow each other, and changes nothing in a bulk drain (its batches are full).
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { StrataClient, type EventInput } from '@strata/client';
import { removeDir, startServer, tempDir, type ServerProcess } from '../test/helpers/server-process';
import { deterministicUuid, loadLocomo, turnContent, type LocomoConversation } from './lib/locomo';

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1] : def;
}

const API_KEY = 'bench-consolidation-admin-key';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resident set size of a process in bytes (Linux /proc), null elsewhere. */
function rssOf(pid: number): number | null {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** CPU seconds (user + system) a process has used so far (Linux /proc), null elsewhere: less sensitive than wall time to other load on the machine. */
function cpuSecondsOf(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100 on Linux)
  } catch {
    return null;
  }
}

/**
 * CPU seconds of the main thread (the event loop: planning, apply) and of the others together (V8's
 * GC and compiler helpers, libuv's pool, LevelDB's compaction), from /proc/<pid>/task/* (Node 20 does not name its threads).
 */
function cpuByThread(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const name = Number(tid) === pid ? 'main' : 'other_threads';
      const fields = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ');
      out[name] = (out[name] ?? 0) + (Number(fields[11]) + Number(fields[12])) / 100;
    }
  } catch {
    // a thread that ended meanwhile, or no /proc
  }
  return out;
}

/** Bytes the process has written to storage so far (/proc/<pid>/io write_bytes: LevelDB logs, tables and compactions), null elsewhere. */
function writtenBytesOf(pid: number): number | null {
  try {
    const m = /write_bytes:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/io`, 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

function threadDelta(after: Record<string, number>, before: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(after).map(([k, v]) => [k, Math.round((v - (before[k] ?? 0)) * 100) / 100]).filter(([, v]) => (v as number) > 0));
}

const mib = (bytes: number | null) => (bytes === null ? null : Math.round((bytes / 1024 / 1024) * 10) / 10);

async function ingestAll(client: StrataClient, convs: LocomoConversation[]): Promise<number> {
  let count = 0;
  for (const conv of convs) {
    for (const session of conv.sessions) {
      const stream = deterministicUuid(`${conv.id}/session/${session.index}`);
      const events: EventInput[] = session.turns.map((t) => ({
        content: turnContent(t), role: 'user', valid_time: session.date, metadata: { locomo_dia_id: t.dia_id },
      }));
      for (let start = 0; start < events.length; start += 500) {
        const res = await client.ingestBatch(conv.id, stream, events.slice(start, start + 500));
        count += res.count;
      }
    }
  }
  return count;
}

interface UnitView { level: number; retired_at: string | null; references: string[] }

async function allMemories(client: StrataClient, user: string): Promise<UnitView[]> {
  const out: UnitView[] = [];
  let after = '';
  for (let page = 0; page < 1000; page++) {
    const res = await client.raw<{ memories: UnitView[]; next_cursor: string | null }>(
      'GET', `/v1/users/${encodeURIComponent(user)}/memories?include_retired=true&limit=1000${after ? `&after=${after}` : ''}`,
    );
    if (res.status !== 200) throw new Error(`memories of ${user}: HTTP ${res.status}`);
    out.push(...res.body.memories);
    if (!res.body.next_cursor) break;
    after = res.body.next_cursor;
  }
  return out;
}

/** Deterministic draws in [0, n) for the trickle's round sizes. */
function seeded(seed: number): (n: number) => number {
  let x = seed >>> 0;
  return (n) => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x % n;
  };
}

interface TrickleRequest { user: string; stream: string; events: EventInput[] }

/** The turns as rounds: in each round, the next 1-5 turns of every user (split by session: one request per stream). */
function trickleRounds(convs: LocomoConversation[], limit: number): TrickleRequest[][] {
  const draw = seeded(27);
  const queues = convs.map((conv) => conv.sessions.flatMap((session) => session.turns.map((t) => ({
    user: conv.id, stream: deterministicUuid(`${conv.id}/session/${session.index}`),
    event: { content: turnContent(t), role: 'user', valid_time: session.date, metadata: { locomo_dia_id: t.dia_id } } as EventInput,
  }))));
  const rounds: TrickleRequest[][] = [];
  let left = limit;
  while (left > 0 && queues.some((q) => q.length > 0)) {
    const round: TrickleRequest[] = [];
    for (const q of queues) {
      for (const item of q.splice(0, Math.min(left, 1 + draw(5)))) {
        left--;
        const last = round[round.length - 1];
        if (last && last.user === item.user && last.stream === item.stream) last.events.push(item.event);
        else round.push({ user: item.user, stream: item.stream, events: [item.event] });
      }
    }
    rounds.push(round);
  }
  return rounds;
}

/**
 * Sends the rounds to a fresh node (consolidation on or off) and returns the node's CPU seconds from the
 * first request to the end of the last round (with consolidation on, each round ends when the backlog is 0).
 */
async function trickle(env: Record<string, string>, rounds: TrickleRequest[][], consolidate: boolean, timeoutS: number): Promise<{ events: number; cpu_s: number | null; wall_s: number; batches: number }> {
  const dir = tempDir('strata-bench-trickle-');
  const server = await startServer({ dataDir: dir, env: { ...env, STRATA__CONSOLIDATION__ENABLED: String(consolidate) }, timeoutMs: 60_000 });
  const client = new StrataClient({ baseUrl: server.url, apiKey: API_KEY });
  try {
    while ((await client.raw('GET', '/readyz')).status !== 200) await sleep(5);
    const t0 = Date.now();
    const cpu0 = cpuSecondsOf(server.pid);
    let events = 0;
    let batches = 0;
    for (const round of rounds) {
      for (const r of round) {
        events += (await client.ingestBatch(r.user, r.stream, r.events)).count;
        batches++;
      }
      if (!consolidate) continue;
      while (!(await client.pending()).ready) {
        if (Date.now() - t0 > timeoutS * 1000) throw new Error(`trickle not drained after ${timeoutS} s`);
        await sleep(5);
      }
    }
    const cpu1 = cpuSecondsOf(server.pid);
    return { events, cpu_s: cpu0 === null || cpu1 === null ? null : Math.round((cpu1 - cpu0) * 100) / 100, wall_s: (Date.now() - t0) / 1000, batches };
  } finally {
    await client.close();
    await server.stop();
    removeDir(dir);
  }
}

async function main(): Promise<void> {
  const dataDir = resolve(arg('data', resolve(__dirname, '../../shared/data/locomo')));
  const provider = arg('provider', 'local');
  const batchSize = arg('batch-size', '64');
  const intervalMs = arg('interval-ms', '200');
  const timeoutS = Number(arg('timeout-s', '600'));
  const profDir = arg('cpu-prof-dir', '');
  const gatherMs = arg('gather-ms', '');
  const convs = loadLocomo(dataDir);
  const env: Record<string, string> = {
    STRATA_API_KEY: API_KEY, STRATA__EMBEDDING__PROVIDER: provider, STRATA__CONSOLIDATION__BATCH_SIZE: batchSize,
    STRATA__CONSOLIDATION__INTERVAL_MS: intervalMs, STRATA_LOG_LEVEL: 'info',
    ...(gatherMs ? { STRATA__CONSOLIDATION__GATHER_MS: gatherMs } : {}),
  };
  const dir = tempDir('strata-bench-consolidation-');
  let server: ServerProcess | null = null;
  try {
    process.stderr.write(`phase 1: ingest ${convs.length} conversations with consolidation off\n`);
    server = await startServer({ dataDir: dir, env: { ...env, STRATA__CONSOLIDATION__ENABLED: 'false' }, timeoutMs: 60_000 });
    let client = new StrataClient({ baseUrl: server.url, apiKey: API_KEY });
    const t0 = Date.now();
    const events = await ingestAll(client, convs);
    const ingestS = (Date.now() - t0) / 1000;
    await client.close();
    await server.stop();

    process.stderr.write(`phase 2: consolidate ${events} events (${provider} embedder, batch ${batchSize}, interval ${intervalMs} ms)\n`);
    const startedAt = Date.now();
    const nodeArgs = profDir ? ['--cpu-prof', `--cpu-prof-dir=${resolve(profDir)}`] : [];
    server = await startServer({ dataDir: dir, env, timeoutMs: 60_000, nodeArgs });
    const startS = (Date.now() - startedAt) / 1000;
    const rssStart = rssOf(server.pid);
    client = new StrataClient({ baseUrl: server.url, apiKey: API_KEY });
    // The clock starts once the node's shard has a leader (/readyz): a restarted single node waits out
    // one Raft election timeout (0.5-1 s with the default tick) before it may propose anything, which
    // is start-up, not consolidation. Reported apart as leader_wait_s.
    const tReady = Date.now();
    while ((await client.raw('GET', '/readyz')).status !== 200) {
      if (Date.now() - tReady > 60_000) throw new Error('node not ready after 60 s');
      await sleep(5);
    }
    const leaderWaitS = (Date.now() - tReady) / 1000;
    const t1 = Date.now();
    const cpu1 = cpuSecondsOf(server.pid);
    const threads1 = cpuByThread(server.pid);
    const written1 = writtenBytesOf(server.pid);
    let peakRss = rssStart ?? 0;
    let status = await client.pending();
    let lastReport = 0;
    while (!status.ready) {
      if (Date.now() - t1 > timeoutS * 1000) throw new Error(`not drained after ${timeoutS} s: ${JSON.stringify(status)}`);
      await sleep(100);
      peakRss = Math.max(peakRss, rssOf(server.pid) ?? 0);
      status = await client.pending();
      if (Date.now() - lastReport > 5000) {
        process.stderr.write(`  pending ${status.pending}, failed ${status.failed}\n`);
        lastReport = Date.now();
      }
    }
    const drainS = (Date.now() - t1) / 1000;
    const cpu2 = cpuSecondsOf(server.pid);
    const threadCpu = threadDelta(cpuByThread(server.pid), threads1);
    const written2 = writtenBytesOf(server.pid);
    const drainCpuS = cpu1 === null || cpu2 === null ? null : Math.round((cpu2 - cpu1) * 100) / 100;
    // Insights of the last users are planned in the tick that drains the backlog, after its summary line: wait for them (bounded).
    const l2Done = () => {
      const out = server!.output();
      return out.lastIndexOf('"msg":"L2 planning done"') > out.lastIndexOf('"msg":"consolidation caught up"');
    };
    for (let i = 0; i < 600 && !l2Done(); i++) {
      peakRss = Math.max(peakRss, rssOf(server.pid) ?? 0);
      await sleep(100);
    }
    const l2S = (Date.now() - t1) / 1000;
    const rssEnd = rssOf(server.pid);

    const perConversation = [];
    for (const conv of convs) {
      const units = await allMemories(client, conv.id);
      const dropped = await client.raw<{ dropped: unknown[] }>('GET', `/v1/users/${encodeURIComponent(conv.id)}/events/dropped`);
      const l1 = units.filter((u) => u.level === 1);
      perConversation.push({
        conversation: conv.id, events: conv.sessions.reduce((n, s) => n + s.turns.length, 0), l1_units: l1.length,
        l1_current: l1.filter((u) => u.retired_at === null).length, l2_units: units.length - l1.length, dropped: dropped.body.dropped.length,
      });
    }
    await client.close();
    const exitCode = await server.stop();
    server = null;

    const result = {
      at: new Date().toISOString(),
      command: `node --conditions=strata-source --import tsx scripts/bench-consolidation.ts --provider ${provider} --batch-size ${batchSize} --interval-ms ${intervalMs}${gatherMs ? ` --gather-ms ${gatherMs}` : ''}`,
      embedding_provider: provider, batch_size: Number(batchSize), interval_ms: Number(intervalMs),
      events, ingest_s: ingestS, node_start_s: startS, leader_wait_s: leaderWaitS, consolidation_s: drainS, consolidation_and_insights_s: l2S,
      consolidation_events_per_s: Math.round((events / drainS) * 10) / 10,
      // CPU the node spent while draining (all its threads), and events per CPU second: the figure to compare when the machine is shared.
      consolidation_cpu_s: drainCpuS, events_per_cpu_s: drainCpuS ? Math.round((events / drainCpuS) * 10) / 10 : null,
      consolidation_cpu_s_by_thread: threadCpu,
      consolidation_written_mib: written1 === null || written2 === null ? null : mib(written2 - written1),
      load_average_1m: Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]),
      failed: status.failed, rss_mib: { start: mib(rssStart), peak: mib(peakRss || null), end: mib(rssEnd) },
      clean_stop: exitCode === 0, conversations: perConversation,
    };
    console.table(perConversation);
    console.table([{
      events, 'ingest s': ingestS, 'consolidation s': drainS, 'events/s': result.consolidation_events_per_s, 'CPU s': drainCpuS, '+ insights s': l2S,
      failed: status.failed, 'RSS start MiB': result.rss_mib.start, 'RSS peak MiB': result.rss_mib.peak, 'RSS end MiB': result.rss_mib.end,
    }]);
    let trickleResult: Record<string, unknown> | null = null;
    if (process.argv.includes('--trickle')) {
      const rounds = trickleRounds(convs, Number(arg('trickle-events', String(events))));
      process.stderr.write(`trickle: ${rounds.length} rounds of 1-5 events per user, consolidation off then on\n`);
      const off = await trickle(env, rounds, false, timeoutS);
      const on = await trickle(env, rounds, true, timeoutS);
      const perEvent = (cpu: number | null, n: number) => (cpu === null ? null : Math.round((cpu / n) * 1e6) / 1000);
      const trickleMs = off.cpu_s === null || on.cpu_s === null ? null : perEvent(on.cpu_s - off.cpu_s, on.events);
      const bulkMs = perEvent(drainCpuS, events);
      trickleResult = {
        rounds: rounds.length, events: on.events, requests: on.batches, ingest_only_cpu_s: off.cpu_s, with_consolidation_cpu_s: on.cpu_s, wall_s: on.wall_s,
        consolidation_cpu_ms_per_event: trickleMs, bulk_cpu_ms_per_event: bulkMs,
        trickle_vs_bulk: trickleMs !== null && bulkMs ? Math.round((trickleMs / bulkMs) * 100) / 100 : null,
      };
      console.table([trickleResult]);
    }
    mkdirSync('bench-results', { recursive: true });
    writeFileSync('bench-results/consolidation.json', JSON.stringify({ ...result, trickle: trickleResult }, null, 2) + '\n');
  } finally {
    if (server) await server.stop();
    removeDir(dir);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
