/**
 * Cluster ingest benchmark: closed-loop clients POST events with the same concurrency against
 *   - a single Strata node (a Raft group of one),
 *   - a 3-node Strata cluster, sending to the leader, and spread over all nodes (followers forward),
 *   - a 3-node etcd cluster (Debian package etcd-server, installed with apt-get when missing), PUTs of
 *     the same size through etcd's HTTP/JSON gateway (/v3/kv/put),
 * every process on 127.0.0.1 with its own data directory. Prints acknowledged writes/s and p50/p99
 * latency, CPU per write of each process, the ratios, and writes bench-results/cluster.json.
 *
 * Two profiles: by default the nodes run with consolidation off and every event is 128 bytes of `x`
 * (the write path alone). `--default-config` runs the nodes as a user does (consolidation on, the
 * local embedder, memory forming as events arrive) with ~100-byte chat lines over 64 users; after each
 * level the bench waits (at most `--drain-seconds`, 30) for the pending backlog to drain and reports
 * the backlog at the end of the level, how long it took to reach 0, and CPU per write until then.
 * `--livez` sends `GET /livez` to the Strata systems instead of writes: the HTTP front's own cost.
 * `--baseline DIR` also starts the same systems from another checkout (DIR, a copy of the tree before a
 * change, with its own node_modules), measured in the same run beside this tree's.
 *   npm run bench:cluster -- [--seconds 5] [--runs 3] [--clients 1,32,256] [--spread] [--no-etcd] [--no-single] [--no-cluster]
 *     [--default-config] [--drain-seconds 30] [--livez] [--baseline DIR] [--cpu-prof DIR] [--keep]
 * `--keep` leaves the data directories and the nodes' logs (in bench-results/.cluster-*) instead of deleting them.
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join, resolve } from 'node:path';
import { Pool } from 'undici';
import { freePort, launch, ROOT, sleep, waitHttp, type Proc } from './lib/processes';
import { chatLine } from './lib/chat-lines';

const API_KEY = 'bench-cluster-admin-key';

function arg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? def : Number(process.argv[i + 1]);
}
/** `--cpu-prof DIR`: every Strata process writes a V8 CPU profile under DIR when it stops */
const PROFILE_DIR = process.argv.includes('--cpu-prof') ? resolve(process.argv[process.argv.indexOf('--cpu-prof') + 1]) : null;

/** `--default-config`: the nodes' own defaults (consolidation on), chat lines over 64 users */
const DEFAULT_CONFIG = process.argv.includes('--default-config');
const USERS = DEFAULT_CONFIG ? 64 : 16;

interface Result {
  /** CPU time of all the system's processes per acknowledged write (what a busy shared machine changes least) */
  cpuUsPerWrite?: number;
  /** the same for the one process that used the most (the leader, when it is the bottleneck) */
  busiestCpuUsPerWrite?: number;
  writesPerSec: number;
  p50ms: number;
  p99ms: number;
  acknowledged: number;
  errors: number;
  /** CPU µs per acknowledged write of each process, in node order (the leader is the busiest) */
  cpuUsPerWriteByProcess?: number[];
  /** --default-config: events still pending when the level's load stopped, and seconds until none were */
  pendingAtEnd?: number;
  drainSeconds?: number;
  /** --default-config: CPU µs per write summed over the processes, from the level's start until drained */
  cpuUsPerWriteDrained?: number;
  cpuUsPerWriteDrainedByProcess?: number[];
}

/** Closed loop: `concurrency` workers, each sends its next request when the previous one answered. */
async function load(targets: string[], concurrency: number, seconds: number, send: (pool: Pool, worker: number, n: number) => Promise<boolean>): Promise<Result> {
  const pools = targets.map((t) => new Pool(t, { connections: Math.ceil(concurrency / targets.length) + 1, keepAliveTimeout: 30_000 }));
  const lat: number[] = [];
  let errors = 0;
  const end = Date.now() + seconds * 1000;
  const started = Date.now();
  await Promise.all(Array.from({ length: concurrency }, async (_, w) => {
    const pool = pools[w % pools.length];
    for (let n = 0; Date.now() < end; n++) {
      const t0 = process.hrtime.bigint();
      let ok = false;
      try {
        ok = await send(pool, w, n);
      } catch {
        ok = false;
      }
      if (ok) lat.push(Number(process.hrtime.bigint() - t0) / 1e6);
      else errors++;
    }
  }));
  const secs = (Date.now() - started) / 1000;
  await Promise.all(pools.map((p) => p.close()));
  lat.sort((a, b) => a - b);
  const q = (f: number) => (lat.length ? lat[Math.min(lat.length - 1, Math.floor(lat.length * f))] : NaN);
  return { writesPerSec: lat.length / secs, p50ms: q(0.5), p99ms: q(0.99), acknowledged: lat.length, errors };
}

const CONTENT = 'x'.repeat(128);


/** `--livez`: every request is `GET /livez` (the HTTP front alone: no body, no auth, no log) */
const LIVEZ = process.argv.includes('--livez');

function strataSender(streams: string[]) {
  let seq = 0;
  if (LIVEZ) {
    return async (pool: Pool) => {
      const r = await pool.request({ method: 'GET', path: '/livez' });
      await r.body.dump();
      return r.statusCode === 200;
    };
  }
  return async (pool: Pool, w: number, n: number) => {
    // each request goes to the next of the users, so even one client feeds all of them (a trickle per user)
    const i = DEFAULT_CONFIG ? seq++ : w;
    const content = DEFAULT_CONFIG ? chatLine(i) : `${CONTENT}${n}`;
    const r = await pool.request({
      method: 'POST', path: `/v1/users/bench-${i % USERS}/streams/${streams[i % streams.length]}/events`,
      headers: { 'content-type': 'application/json', 'x-api-key': API_KEY },
      body: JSON.stringify({ content }),
    });
    await r.body.dump();
    return r.statusCode === 200;
  };
}

/** Starts `n` Strata nodes from the checkout `tree` (this one unless `--baseline`), named `label` in the data and profile directories. */
async function startStrata(n: number, dir: string, tree = ROOT, label = 'strata'): Promise<{ urls: string[]; procs: Proc[] }> {
  const ports: number[] = [];
  for (let i = 0; i < n; i++) ports.push(await freePort());
  const urls = ports.map((p) => `http://127.0.0.1:${p}`);
  const peers = n > 1 ? urls.map((u, i) => `${i + 1}=${u}`).join(',') : '';
  const profile: Record<string, string> = DEFAULT_CONFIG ? {} : { STRATA__EMBEDDING__PROVIDER: 'hashing', STRATA__CONSOLIDATION__ENABLED: 'false' };
  const procs = urls.map((_, i) => launch(process.execPath, [
    ...(PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}/${label}-${n}-${i + 1}`] : []), '--conditions=strata-source', '--import', 'tsx', 'packages/server/src/main.ts'], {
    STRATA_NODE_ID: String(i + 1), STRATA_PORT: String(ports[i]), STRATA_HOST: '127.0.0.1', STRATA_DATA_DIR: join(dir, `${label}-${n}-${i + 1}`),
    ...(peers ? { STRATA_PEERS: peers } : {}), STRATA_CLUSTER_SECRET: 'bench-cluster-secret', STRATA_API_KEY: API_KEY,
    ...profile, STRATA_LOG_LEVEL: 'warn',
  }, join(dir, `${label}-${n}-${i + 1}.log`), tree));
  // a busy shared machine may take minutes to start several nodes at once
  for (const u of urls) await waitHttp(`${u}/readyz`, (s) => s === 200, `${u} ready`, { 'x-api-key': API_KEY }, 300_000);
  return { urls, procs };
}

async function strataLeader(urls: string[]): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const r = await fetch(`${urls[0]}/v1/cluster/status`, { headers: { 'x-api-key': API_KEY } });
    const leader = ((await r.json()) as { shards: { leader: number | null }[] }).shards[0].leader;
    if (leader) return urls[leader - 1];
    await sleep(100);
  }
  throw new Error('no strata leader');
}

function ensureEtcd(): string | null {
  const has = () => spawnSync('sh', ['-c', 'command -v etcd'], { encoding: 'utf8' }).stdout.trim();
  if (!has()) {
    console.log('etcd not found: installing the Debian package etcd-server (apt-get update; apt-get install -y etcd-server)');
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    spawnSync('apt-get', ['update'], { stdio: 'inherit', env });
    const r = spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'etcd-server'], { stdio: 'inherit', env });
    if (r.status !== 0) return null;
  }
  return has() || null;
}

async function startEtcd(bin: string, dir: string): Promise<{ urls: string[]; procs: Proc[] }> {
  const client: number[] = [];
  const peer: number[] = [];
  for (let i = 0; i < 3; i++) {
    client.push(await freePort());
    peer.push(await freePort());
  }
  const cluster = peer.map((p, i) => `e${i + 1}=http://127.0.0.1:${p}`).join(',');
  const token = `bench-${randomUUID()}`;
  const procs = [0, 1, 2].map((i) => launch(bin, [
    '--name', `e${i + 1}`, '--data-dir', join(dir, `etcd-${i + 1}`),
    '--listen-client-urls', `http://127.0.0.1:${client[i]}`, '--advertise-client-urls', `http://127.0.0.1:${client[i]}`,
    '--listen-peer-urls', `http://127.0.0.1:${peer[i]}`, '--initial-advertise-peer-urls', `http://127.0.0.1:${peer[i]}`,
    '--initial-cluster', cluster, '--initial-cluster-state', 'new', '--initial-cluster-token', token,
  ], {}, join(dir, `etcd-${i + 1}.log`)));
  const urls = client.map((p) => `http://127.0.0.1:${p}`);
  try {
    for (const u of urls) await waitHttp(`${u}/health`, (s, b) => s === 200 && b.includes('true'), `etcd ${u} healthy`);
  } catch (err) {
    for (let i = 1; i <= 3; i++) console.error(`etcd ${i}:`, readFileSync(join(dir, `etcd-${i}.log`), 'utf8').split('\n').slice(-5).join('\n'));
    throw err;
  }
  return { urls, procs };
}

async function etcdLeader(urls: string[]): Promise<string> {
  for (const u of urls) {
    const r = await fetch(`${u}/v3/maintenance/status`, { method: 'POST', body: '{}' });
    const s = (await r.json()) as { header: { member_id: string }; leader: string };
    if (s.leader === s.header.member_id) return u;
  }
  return urls[0];
}

function etcdSender() {
  const value = Buffer.from(CONTENT).toString('base64');
  return async (pool: Pool, w: number, n: number) => {
    const r = await pool.request({
      method: 'POST', path: '/v3/kv/put', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key: Buffer.from(`bench/${w}/${n}`).toString('base64'), value }),
    });
    await r.body.dump();
    return r.statusCode === 200;
  };
}

const us = (xs: number[] | undefined) => (xs ?? []).map((x) => x.toFixed(0)).join('/');

function line(name: string, r: Result): void {
  console.log(`  ${name.padEnd(40)} ${r.writesPerSec.toFixed(0).padStart(7)} writes/s   p50 ${r.p50ms.toFixed(2).padStart(7)} ms   p99 ${r.p99ms.toFixed(2).padStart(7)} ms   CPU ${(r.cpuUsPerWrite ?? NaN).toFixed(0).padStart(5)} us/write (by process ${us(r.cpuUsPerWriteByProcess)})   (${r.acknowledged} acknowledged, ${r.errors} errors)`);
  if (r.pendingAtEnd !== undefined) {
    console.log(`  ${''.padEnd(40)} pending at the end ${r.pendingAtEnd}, drained after ${r.drainSeconds?.toFixed(1)} s; CPU until drained ${(r.cpuUsPerWriteDrained ?? NaN).toFixed(0)} us/write (by process ${us(r.cpuUsPerWriteDrainedByProcess)})`);
  }
}

/** Events accepted and not yet consolidated on a Strata system (GET /v1/status/pending). */
async function pendingOf(url: string): Promise<number> {
  const r = await fetch(`${url}/v1/status/pending`, { headers: { 'x-api-key': API_KEY } });
  return ((await r.json()) as { pending: number }).pending;
}

/** Polls the backlog until it is 0 or `limitS` passed: [pending when called, seconds until 0 (NaN: not drained)]. */
async function drain(url: string, limitS: number): Promise<[number, number]> {
  const t0 = Date.now();
  const first = await pendingOf(url);
  for (let p = first; p > 0; p = await pendingOf(url)) {
    if (Date.now() - t0 > limitS * 1000) return [first, NaN];
    await sleep(100);
  }
  return [first, (Date.now() - t0) / 1000];
}

const strataCpu = (urls: string[]) => ({ urls, name: 'strata_process_cpu_seconds_total' });

/** CPU seconds used so far by each process of a system (from their Prometheus metrics). */
async function cpuSeconds(m: { urls: string[]; name: string }): Promise<number[]> {
  const out: number[] = [];
  for (const u of m.urls) {
    const text = await (await fetch(`${u}/metrics`, { headers: { 'x-api-key': API_KEY } })).text();
    const line = text.split('\n').find((l) => l.startsWith(`${m.name} `));
    out.push(line ? Number(line.split(' ')[1]) : NaN);
  }
  return out;
}

function listArg(name: string, def: number[]): number[] {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? def : process.argv[i + 1].split(',').map(Number);
}

/** A ratio as `x0.42`, or `—` when a system of it was not measured (`--no-single`, `--no-etcd`, `--no-cluster`). */
const times = (r: unknown): string => (typeof r === 'number' && Number.isFinite(r) ? `x${r.toFixed(2)}` : '—');

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * Every system is started once and stays up; each run measures every system at every client count
 * back to back, so the ratios compare figures taken minutes apart at most on a shared machine.
 */
async function main(): Promise<void> {
  const seconds = arg('seconds', 5);
  const runs = arg('runs', 3);
  const clientCounts = listArg('clients', [1, 32, 256]);
  const withEtcd = !process.argv.includes('--no-etcd');
  const withSpread = process.argv.includes('--spread');
  const withSingle = !process.argv.includes('--no-single');
  const withCluster = !process.argv.includes('--no-cluster');
  const drainLimit = arg('drain-seconds', 30);
  const baselineAt = process.argv.indexOf('--baseline');
  const baseline = baselineAt < 0 ? null : resolve(process.argv[baselineAt + 1]);
  mkdirSync(join(ROOT, 'bench-results'), { recursive: true });
  const dir = mkdtempSync(join(ROOT, 'bench-results', '.cluster-'));
  const streams = Array.from({ length: 16 }, () => randomUUID());
  const running: Proc[] = [];
  type System = { name: string; key: string; targets: string[]; metrics: { urls: string[]; name: string }; send: (pool: Pool, w: number, n: number) => Promise<boolean>; consolidates?: boolean };
  const systems: System[] = [];
  const results: Record<string, Record<string, Result[]>> = {};
  try {
    console.log(`closed loop, ${clientCounts.join('/')} concurrent clients, ${seconds} s per measurement, ${runs} runs, ${cpus().length} cores, ${DEFAULT_CONFIG ? 'default configuration (consolidation on)' : 'consolidation off'}${baseline ? `, baseline ${baseline}` : ''}`);
    const trees: [string, string, string][] = [[ROOT, '', 'strata']];
    if (baseline) trees.unshift([baseline, ' (baseline)', 'baseline']);
    for (const [tree, suffix, label] of trees) {
      const keyOf = (k: string) => (label === 'baseline' ? `baseline_${k}` : k);
      if (withSingle) {
        const single = await startStrata(1, dir, tree, label);
        running.push(...single.procs);
        systems.push({ name: `strata, single node${suffix}`, key: keyOf('strata_single'), targets: single.urls, metrics: strataCpu(single.urls), send: strataSender(streams), consolidates: DEFAULT_CONFIG });
      }
      if (!withCluster) continue;
      const three = await startStrata(3, dir, tree, label);
      running.push(...three.procs);
      const leader = await strataLeader(three.urls);
      // the leader first, so "by process" reads leader/follower/follower
      const ordered = [leader, ...three.urls.filter((u) => u !== leader)];
      systems.push({ name: `strata, 3 nodes, to the leader${suffix}`, key: keyOf('strata_cluster_leader'), targets: [leader], metrics: strataCpu(ordered), send: strataSender(streams), consolidates: DEFAULT_CONFIG });
      if (withSpread) systems.push({ name: `strata, 3 nodes, spread${suffix}`, key: keyOf('strata_cluster_spread'), targets: three.urls, metrics: strataCpu(ordered), send: strataSender(streams), consolidates: DEFAULT_CONFIG });
    }
    if (withEtcd) {
      const bin = ensureEtcd();
      if (!bin) {
        console.log('etcd could not be installed: skipping the etcd comparison');
      } else {
        const etcd = await startEtcd(bin, dir);
        running.push(...etcd.procs);
        const leader = await etcdLeader(etcd.urls);
        systems.push({ name: 'etcd 3.4, 3 nodes, to the leader', key: 'etcd_cluster_leader', targets: [leader], metrics: { urls: [leader, ...etcd.urls.filter((u) => u !== leader)], name: 'process_cpu_seconds_total' }, send: etcdSender() });
      }
    }
    for (const s of systems) {
      await load(s.targets, 32, 1, s.send); // warm-up
      if (s.consolidates) await drain(s.targets[0], drainLimit);
    }
    for (let run = 1; run <= runs; run++) {
      for (const c of clientCounts) {
        console.log(`run ${run}, ${c} clients`);
        for (const s of systems) {
          const cpu0 = await cpuSeconds(s.metrics);
          const r = await load(s.targets, c, seconds, s.send);
          const perWrite = (cpu: number[]) => cpu.map((c, i) => (c - cpu0[i]) * 1e6 / Math.max(1, r.acknowledged));
          const used = perWrite(await cpuSeconds(s.metrics));
          r.cpuUsPerWrite = used.reduce((a, b) => a + b, 0);
          r.busiestCpuUsPerWrite = Math.max(...used);
          r.cpuUsPerWriteByProcess = used;
          if (s.consolidates) {
            // the level is done when memory has formed: consolidation's catch-up is part of its cost
            [r.pendingAtEnd, r.drainSeconds] = await drain(s.targets[0], drainLimit);
            const drained = perWrite(await cpuSeconds(s.metrics));
            r.cpuUsPerWriteDrained = drained.reduce((a, b) => a + b, 0);
            r.cpuUsPerWriteDrainedByProcess = drained;
          }
          ((results[s.key] ??= {})[c] ??= []).push(r);
          line(s.name, r);
        }
      }
    }
  } finally {
    await Promise.all(running.map((p) => p.stop()));
    if (process.argv.includes('--keep')) console.log(`data directories and node logs kept in ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
  const med = (key: string, c: number, f: (r: Result) => number) => {
    const rs = results[key]?.[c];
    return rs ? median(rs.map(f)) : NaN;
  };
  console.log('\nmedians of the runs');
  const summary: Record<string, unknown> = {};
  for (const c of clientCounts) {
    const row: Record<string, unknown> = {};
    for (const s of systems) {
      const cpu = med(s.key, c, (r) => r.cpuUsPerWrite ?? NaN);
      const byProcess = s.metrics.urls.map((_, i) => med(s.key, c, (r) => r.cpuUsPerWriteByProcess?.[i] ?? NaN));
      const drainedByProcess = s.metrics.urls.map((_, i) => med(s.key, c, (r) => r.cpuUsPerWriteDrainedByProcess?.[i] ?? NaN));
      row[s.key] = {
        writes_per_s: med(s.key, c, (r) => r.writesPerSec), p50_ms: med(s.key, c, (r) => r.p50ms), p99_ms: med(s.key, c, (r) => r.p99ms),
        cpu_us_per_write: cpu, cpu_us_per_write_by_process: byProcess,
        ...(s.consolidates ? {
          pending_at_end: med(s.key, c, (r) => r.pendingAtEnd ?? NaN), drain_s: med(s.key, c, (r) => r.drainSeconds ?? NaN),
          cpu_us_per_write_drained: med(s.key, c, (r) => r.cpuUsPerWriteDrained ?? NaN), cpu_us_per_write_drained_by_process: drainedByProcess,
        } : {}),
      };
      const drained = s.consolidates ? `   until drained ${med(s.key, c, (r) => r.cpuUsPerWriteDrained ?? NaN).toFixed(0)} (${us(drainedByProcess)}), pending ${med(s.key, c, (r) => r.pendingAtEnd ?? NaN)} → 0 in ${med(s.key, c, (r) => r.drainSeconds ?? NaN).toFixed(1)} s` : '';
      console.log(`  ${String(c).padStart(3)} clients  ${s.name.padEnd(40)} ${med(s.key, c, (r) => r.writesPerSec).toFixed(0).padStart(7)} writes/s   p50 ${med(s.key, c, (r) => r.p50ms).toFixed(2).padStart(7)} ms   p99 ${med(s.key, c, (r) => r.p99ms).toFixed(2).padStart(7)} ms   CPU ${cpu.toFixed(0).padStart(5)} us/write (${us(byProcess)})${drained}`);
    }
    const ratio = (a: string, b: string) => med(a, c, (r) => r.writesPerSec) / med(b, c, (r) => r.writesPerSec);
    row.cluster_vs_etcd = ratio('strata_cluster_leader', 'etcd_cluster_leader');
    row.single_vs_etcd = ratio('strata_single', 'etcd_cluster_leader');
    row.cluster_vs_single = ratio('strata_cluster_leader', 'strata_single');
    console.log(`  ${String(c).padStart(3)} clients  throughput ratios: 3-node strata / 3-node etcd ${times(row.cluster_vs_etcd)}, single strata / 3-node etcd ${times(row.single_vs_etcd)}, 3-node / single ${times(row.cluster_vs_single)}`);
    if (baseline) {
      row.cluster_vs_baseline = ratio('strata_cluster_leader', 'baseline_strata_cluster_leader');
      row.single_vs_baseline = ratio('strata_single', 'baseline_strata_single');
      const cpuRatio = (a: string, b: string) => med(a, c, (r) => r.cpuUsPerWriteDrained ?? r.cpuUsPerWrite ?? NaN) / med(b, c, (r) => r.cpuUsPerWriteDrained ?? r.cpuUsPerWrite ?? NaN);
      row.cluster_cpu_vs_baseline = cpuRatio('strata_cluster_leader', 'baseline_strata_cluster_leader');
      row.single_cpu_vs_baseline = cpuRatio('strata_single', 'baseline_strata_single');
      console.log(`  ${String(c).padStart(3)} clients  this tree / baseline: writes/s single ${times(row.single_vs_baseline)}, 3-node ${times(row.cluster_vs_baseline)}; CPU per write single ${times(row.single_cpu_vs_baseline)}, 3-node ${times(row.cluster_cpu_vs_baseline)}`);
    }
    summary[String(c)] = row;
  }
  const out = { when: new Date().toISOString(), profile: DEFAULT_CONFIG ? 'default-config' : 'consolidation-off', baseline, seconds, runs, clients: clientCounts, cores: cpus().length, medians: summary, results };
  const file = DEFAULT_CONFIG ? 'cluster-default-config.json' : 'cluster.json';
  writeFileSync(join(ROOT, 'bench-results', file), JSON.stringify(out, null, 2) + '\n');
  console.log(`wrote bench-results/${file}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
