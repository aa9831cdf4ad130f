/**
 * Scale-out benchmark (issue 18): the same write load on clusters of 3, 6 and 9 node processes with
 * the same shard groups (default 12, replication factor 3). On one machine the figure that means
 * something is the work per node: commands each node applied and bytes each node stores fall as nodes
 * are added, because a group lives on 3 nodes, not on all. Shard 0 (accounts, keys, the placement
 * directory and the users hashed to it) is on every node, so 1/shards of the users' writes are still
 * applied everywhere. Writes go to every node of the cluster (a node not holding the user's group
 * forwards to its leader). Prints a table and writes bench-results/placement.json.
 * At `--join-at` nodes (default 6) a further node then joins while the same load runs again: its
 * latency while replicas move, against the same load just before (the throttle's effect), and the
 * time the new node takes to hold its share.
 * With `--grow` (issue 30) the same load then runs on a cluster that grew from the defaults: 3 nodes with
 * no STRATA_SHARDS (one group) and a low `cluster.auto_split_records` (`--split-records`, default 100)
 * take writes of the same users until the cluster has split itself to `--grow-groups` groups (default:
 * `--shards`); the nodes are restarted with automatic splits off (so the measured load splits nothing),
 * the load is measured on 3 nodes, then nodes join (STRATA_JOIN) up to each next count of `--nodes`,
 * the placement settles (no move, no drop, replicas per node within one), and the load is measured again.
 * Per-node work is printed next to the fixed-count figures of the same run; `--grow-only` skips those.
 *   npm run bench:placement -- [--nodes 3,6,9] [--shards 12] [--writes 6000] [--clients 32] [--users 240] [--join-at 6]
 *                              [--grow] [--grow-only] [--grow-groups 12] [--split-records 100]
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { freePort, launch, ROOT, sleep, waitHttp, type Proc } from './lib/processes';

const API_KEY = 'bench-placement-admin-key';
const HEADERS = { 'x-api-key': API_KEY };

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? def : process.argv[i + 1];
}

/** Bytes of every file under `dir` (the node's LevelDB state, its Raft log and snapshot files). */
function bytesUnder(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    total += entry.isDirectory() ? bytesUnder(path) : statSync(path).size;
  }
  return total;
}

interface ShardView { shard_id: number; applied_index: number; commit_index: number; role: string; holds: boolean; leader: number | null }
interface PlacedGroup { group_id: number; voters: number[]; learners: number[]; leader: number | null; move: unknown; drops?: unknown[] }
interface NodeStatus {
  shards: ShardView[];
  placement: { groups: PlacedGroup[] };
  key_ranges: { recorded: boolean; ranges: { group: number }[]; splits: unknown[]; dropping: unknown[] } | null;
}

async function status(url: string): Promise<NodeStatus> {
  return (await (await fetch(`${url}/v1/cluster/status`, { headers: HEADERS, signal: AbortSignal.timeout(3000) })).json()) as NodeStatus;
}

/** A node's environment; `shards` null: no STRATA_SHARDS at all (the defaults: one group). */
const nodeEnv = (id: number, port: number, dataDir: string, shards: number | null): Record<string, string> => ({
  STRATA_NODE_ID: String(id), STRATA_PORT: String(port), STRATA_HOST: '127.0.0.1', STRATA_DATA_DIR: dataDir,
  STRATA_CLUSTER_SECRET: 'bench-placement-secret', STRATA_API_KEY: API_KEY, ...(shards === null ? {} : { STRATA_SHARDS: String(shards) }),
  STRATA__EMBEDDING__PROVIDER: 'hashing', STRATA__CONSOLIDATION__ENABLED: 'false', STRATA_LOG_LEVEL: 'warn',
  STRATA__CLUSTER__PLACEMENT_INTERVAL_MS: '500',
});
const SERVER = ['--conditions=strata-source', '--import', 'tsx', 'packages/server/src/main.ts'];

async function startCluster(n: number, shards: number, dir: string): Promise<{ urls: string[]; dirs: string[]; procs: Proc[] }> {
  const ports: number[] = [];
  for (let i = 0; i < n; i++) ports.push(await freePort());
  const urls = ports.map((p) => `http://127.0.0.1:${p}`);
  const dirs = urls.map((_, i) => join(dir, `node-${n}-${i + 1}`));
  const peers = urls.map((u, i) => `${i + 1}=${u}`).join(',');
  const procs = urls.map((_, i) => launch(process.execPath, SERVER, {
    ...nodeEnv(i + 1, ports[i], dirs[i], shards), STRATA_PEERS: peers,
  }, join(dir, `node-${n}-${i + 1}.log`)));
  for (const u of urls) await waitHttp(`${u}/readyz`, (s) => s === 200, `${u} ready`, HEADERS, 120_000);
  // every placed group recorded with a leader, as every node sees it
  const deadline = Date.now() + 120_000;
  for (;;) {
    const views = await Promise.all(urls.map(status));
    if (views.every((v) => v.placement.groups.length === shards - 1 && v.placement.groups.every((g) => g.leader !== null))) break;
    if (Date.now() > deadline) throw new Error(`the placement of ${n} nodes did not settle`);
    await sleep(250);
  }
  return { urls, dirs, procs };
}

/**
 * `writes` events from `clients` closed-loop clients, each sending through node (client mod n), users
 * spread; `stop`: the clients stop sending once it says so (the growth phase's open-ended load).
 */
async function writeLoad(urls: string[], writes: number, clients: number, users: number, stop: () => boolean = () => false): Promise<{ acked: number; errors: number; seconds: number; p50: number; p99: number }> {
  const pools = urls.map((u) => new Pool(u, { connections: Math.ceil(clients / urls.length) + 1 }));
  const streams = Array.from({ length: users }, () => randomUUID());
  let next = 0;
  let errors = 0;
  const lat: number[] = [];
  const t0 = Date.now();
  await Promise.all(Array.from({ length: clients }, async (_, c) => {
    const pool = pools[c % pools.length];
    for (let i = next++; i < writes && !stop(); i = next++) {
      const u = i % users;
      const start = process.hrtime.bigint();
      for (let attempt = 0; attempt < 20; attempt++) {
        const r = await pool.request({
          method: 'POST', path: `/v1/users/scale-${u}/streams/${streams[u]}/events`,
          headers: { ...HEADERS, 'content-type': 'application/json', 'idempotency-key': `w-${i}` },
          body: JSON.stringify({ content: `event ${i} of user ${u}: ${'x'.repeat(96)}` }),
        });
        await r.body.dump();
        if (r.statusCode === 200) {
          lat.push(Number(process.hrtime.bigint() - start) / 1e6);
          break;
        }
        errors++;
        await sleep(50);
      }
    }
  }));
  const seconds = (Date.now() - t0) / 1000;
  await Promise.all(pools.map((p) => p.close()));
  lat.sort((a, b) => a - b);
  const q = (f: number) => lat[Math.min(lat.length - 1, Math.floor(lat.length * f))];
  return { acked: lat.length, errors, seconds, p50: q(0.5), p99: q(0.99) };
}

const applied = (v: NodeStatus) => v.shards.reduce((n, s) => n + s.applied_index, 0);

/** Placement steps carried out so far, cluster-wide (only the leader of shard 0 counts them). */
async function placementSteps(urls: string[]): Promise<number> {
  let total = 0;
  for (const u of urls) {
    const text = await (await fetch(`${u}/metrics`, { headers: HEADERS })).text();
    for (const l of text.split('\n')) if (l.startsWith('strata_placement_steps_total{') && l.includes('outcome="done"')) total += Number(l.split(' ').pop());
  }
  return total;
}

/**
 * A node joins the running cluster while the same write load runs: the load's latency while replicas
 * move to it, against the same load just before on the same cluster, and how long it takes to fill.
 */
async function joinUnderLoad(c: { urls: string[]; procs: Proc[] }, n: number, shards: number, dir: string, load: () => Promise<{ p50: number; p99: number; acked: number; errors: number; seconds: number }>) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const id = n + 1;
  c.procs.push(launch(process.execPath, SERVER, {
    ...nodeEnv(id, port, join(dir, `node-${n}-join-${id}`), shards), STRATA_JOIN: c.urls[0],
  }, join(dir, `node-${n}-join-${id}.log`)));
  const t0 = Date.now();
  await waitHttp(`${url}/readyz`, (st) => st === 200, `${url} ready`, HEADERS, 120_000);
  const urls = [...c.urls, url];
  const before = await placementSteps(urls);
  const during = await load();
  const steps = await placementSteps(urls) - before;
  const share = Math.floor(((shards - 1) * 3) / (n + 1));
  for (;;) {
    const held = (await status(url)).shards.filter((s) => s.holds && s.shard_id !== 0).length;
    if (held >= share) break;
    if (Date.now() - t0 > 300_000) throw new Error('the joined node did not fill');
    await sleep(250);
  }
  return { during, steps_during_load: steps, seconds_to_fill: (Date.now() - t0) / 1000, share };
}
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** Bytes the process has caused to be written to storage so far (`write_bytes` of /proc/<pid>/io: LevelDB's compactions included). */
function ioWritten(proc: Proc): number {
  const line = readFileSync(`/proc/${proc.child.pid}/io`, 'utf8').split('\n').find((l) => l.startsWith('write_bytes:'));
  return Number(line?.split(':')[1] ?? 0);
}

/**
 * Until every node has applied what the leader of each group it holds has committed: a node restarted or
 * given a replica applies a backlog for a while, which a measurement begun then would count as the load's.
 */
async function caughtUp(urls: string[], ms = 600_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const views = await Promise.all(urls.map((u) => status(u).catch(() => null)));
    const committed = new Map<number, number>();
    for (const v of views) for (const s of v?.shards ?? []) if (s.role === 'leader') committed.set(s.shard_id, s.commit_index);
    const behind = views.some((v) => v === null || v.shards.some((s) => s.holds && !(s.applied_index >= (committed.get(s.shard_id) ?? Infinity))));
    if (!behind) return;
    if (Date.now() > deadline) throw new Error('the nodes did not catch up with their groups');
    await sleep(500);
  }
}

/**
 * The same load on a running cluster: per node, the commands applied meanwhile (the Raft applied index of
 * each group it holds), the growth of its data directory, and what the process wrote to storage.
 */
async function measure(c: { urls: string[]; dirs: string[]; procs: Proc[] }, writes: number, clients: number, users: number) {
  await caughtUp(c.urls);
  const before = await Promise.all(c.urls.map(status));
  const bytesBefore = c.dirs.map(bytesUnder);
  const ioBefore = c.procs.slice(0, c.urls.length).map(ioWritten);
  const load_avg_before = loadavg()[0];
  const load = await writeLoad(c.urls, writes, clients, users);
  await sleep(2000); // followers apply the last entries
  const after = await Promise.all(c.urls.map(status));
  const perNodeApplied = after.map((v, i) => applied(v) - applied(before[i]));
  const perNodeBytes = c.dirs.map((d, i) => bytesUnder(d) - bytesBefore[i]);
  const perNodeIo = c.procs.slice(0, c.urls.length).map((p, i) => ioWritten(p) - ioBefore[i]);
  const held = after.map((v) => v.shards.filter((s) => s.holds).length);
  return {
    nodes: c.urls.length, groups: after[0].key_ranges?.ranges.length ?? null, writes, acknowledged: load.acked, retried_answers: load.errors, writes_per_s: load.acked / load.seconds,
    p50_ms: load.p50, p99_ms: load.p99,
    groups_held_per_node: { mean: mean(held), min: Math.min(...held), max: Math.max(...held) },
    applied_per_node: { mean: mean(perNodeApplied), min: Math.min(...perNodeApplied), max: Math.max(...perNodeApplied), each: perNodeApplied },
    bytes_per_node: { mean: mean(perNodeBytes), min: Math.min(...perNodeBytes), max: Math.max(...perNodeBytes) },
    io_written_per_node: { mean: mean(perNodeIo), min: Math.min(...perNodeIo), max: Math.max(...perNodeIo) },
    applied_all_nodes: perNodeApplied.reduce((a, b) => a + b, 0),
    bytes_all_nodes: perNodeBytes.reduce((a, b) => a + b, 0),
    load_avg: { before: load_avg_before, after: loadavg()[0] },
  };
}
type Measured = Awaited<ReturnType<typeof measure>>;

function describe(r: Measured, label: string): string {
  return `${label}${String(r.nodes).padStart(2)} nodes, ${r.groups} groups: groups held ${r.groups_held_per_node.min}-${r.groups_held_per_node.max}/node; ` +
    `commands applied per node ${r.applied_per_node.mean.toFixed(0)} (${r.applied_per_node.min}-${r.applied_per_node.max}), ` +
    `per write ${(r.applied_per_node.mean / r.acknowledged).toFixed(2)}; ` +
    `data directory growth per node ${(r.bytes_per_node.mean / 1048576).toFixed(2)} MiB (${(r.bytes_per_node.min / 1048576).toFixed(2)}-${(r.bytes_per_node.max / 1048576).toFixed(2)}), ` +
    `written to storage ${(r.io_written_per_node.mean / 1048576).toFixed(2)} MiB (${(r.io_written_per_node.min / 1048576).toFixed(2)}-${(r.io_written_per_node.max / 1048576).toFixed(2)}); ` +
    `${r.writes_per_s.toFixed(0)} writes/s, p50 ${r.p50_ms.toFixed(1)} ms, p99 ${r.p99_ms.toFixed(1)} ms, ${r.acknowledged} acknowledged, ${r.retried_answers} retried answers; ` +
    `load average ${r.load_avg.before.toFixed(1)} → ${r.load_avg.after.toFixed(1)}`;
}

/** Polls node `url`'s status until `ok` holds (or throws after `ms`). */
async function until(url: string, what: string, ok: (v: NodeStatus) => boolean, ms: number): Promise<NodeStatus> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      const v = await status(url);
      if (ok(v)) return v;
    } catch {
      // busy or restarting: ask again
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(500);
  }
}

/** Every group of the key ranges placed on 3 of `nodes` with a leader, nothing moving or dropping, replicas per node within one. */
function placementSettled(v: NodeStatus, nodes: number[]): boolean {
  const ranges = v.key_ranges;
  if (!ranges || ranges.splits.length || ranges.dropping.length) return false;
  const groups = v.placement.groups;
  const live = new Set(ranges.ranges.map((r) => r.group).filter((g) => g !== 0));
  if (groups.filter((g) => live.has(g.group_id)).length !== live.size) return false;
  for (const g of groups) {
    if (g.voters.length !== 3 || g.learners.length || g.move !== null || (g.drops ?? []).length || g.leader === null || g.voters.some((n) => !nodes.includes(n))) return false;
  }
  const per = nodes.map((id) => groups.filter((g) => g.voters.includes(id)).length);
  return Math.max(...per) - Math.min(...per) <= 1;
}

/**
 * The grown cluster (module comment): 3 nodes from the defaults split themselves to `target` groups
 * under writes of the same users, then (automatic splits off) the load is measured at each of `counts`,
 * nodes joining in between.
 */
async function grownSeries(counts: number[], target: number, splitRecords: number, writes: number, clients: number, users: number, dir: string): Promise<{ results: Measured[]; growth: Record<string, number> }> {
  const n0 = counts[0];
  const ports: number[] = [];
  for (let i = 0; i < n0; i++) ports.push(await freePort());
  const urls = ports.map((p) => `http://127.0.0.1:${p}`);
  const dirs = urls.map((_, i) => join(dir, `grown-${i + 1}`));
  const peers = urls.map((u, i) => `${i + 1}=${u}`).join(',');
  const env = (i: number, splits: number) => ({ ...nodeEnv(i + 1, ports[i], dirs[i], null), STRATA_PEERS: peers, STRATA__CLUSTER__AUTO_SPLIT_RECORDS: String(splits) });
  const start = (splits: number) => urls.map((_, i) => launch(process.execPath, SERVER, env(i, splits), join(dir, `grown-${i + 1}.log`)));
  let procs = start(splitRecords);
  const results: Measured[] = [];
  try {
    for (const u of urls) await waitHttp(`${u}/readyz`, (st) => st === 200, `${u} ready`, HEADERS, 120_000);
    await until(urls[0], 'the key ranges recorded', (v) => v.key_ranges?.recorded === true, 120_000);
    // growth: the same users written to until the cluster has split itself to the target
    const t0 = Date.now();
    let grown = false;
    const preload = writeLoad(urls, Number.MAX_SAFE_INTEGER, clients, users, () => grown);
    await until(urls[0], `${target} groups`, (v) => (v.key_ranges?.ranges.length ?? 0) >= target, 1_800_000).finally(() => { grown = true; });
    const pre = await preload;
    const settledAt = await until(urls[0], 'the last split done', (v) => !!v.key_ranges && v.key_ranges.splits.length === 0 && v.key_ranges.dropping.length === 0, 600_000);
    const growth = { groups: settledAt.key_ranges!.ranges.length, writes: pre.acked, seconds: (Date.now() - t0) / 1000, split_records: splitRecords };
    console.log(`grown: 3 nodes from the defaults split themselves to ${growth.groups} groups under ${growth.writes} writes in ${growth.seconds.toFixed(0)} s (cluster.auto_split_records ${splitRecords}); restarted with automatic splits off`);
    // the measured loads split nothing: the nodes restart with automatic splits off (the data directory keeps the groups)
    await Promise.all(procs.map((p) => p.stop()));
    procs = start(0);
    for (const u of urls) await waitHttp(`${u}/readyz`, (st) => st === 200, `${u} ready`, HEADERS, 120_000);
    const ids = urls.map((_, i) => i + 1);
    await until(urls[0], `the placement over ${n0} nodes settled`, (v) => placementSettled(v, ids), 300_000);
    results.push(await measure({ urls, dirs, procs }, writes, clients, users));
    console.log(describe(results[results.length - 1], 'grown: '));
    for (const n of counts.slice(1)) {
      for (let id = urls.length + 1; id <= n; id++) {
        const port = await freePort();
        const url = `http://127.0.0.1:${port}`;
        const dataDir = join(dir, `grown-${id}`);
        procs.push(launch(process.execPath, SERVER, { ...nodeEnv(id, port, dataDir, null), STRATA_JOIN: urls[0], STRATA__CLUSTER__AUTO_SPLIT_RECORDS: '0' }, join(dir, `grown-${id}.log`)));
        await waitHttp(`${url}/readyz`, (st) => st === 200, `${url} ready`, HEADERS, 180_000);
        urls.push(url);
        dirs.push(dataDir);
        ids.push(id);
      }
      await until(urls[0], `the placement over ${n} nodes settled`, (v) => placementSettled(v, ids), 900_000);
      results.push(await measure({ urls, dirs, procs }, writes, clients, users));
      console.log(describe(results[results.length - 1], 'grown: '));
    }
    return { results, growth };
  } finally {
    await Promise.all(procs.map((p) => p.stop()));
  }
}

async function main(): Promise<void> {
  const counts = arg('nodes', '3,6,9').split(',').map(Number);
  const shards = Number(arg('shards', '12'));
  const writes = Number(arg('writes', '6000'));
  const clients = Number(arg('clients', '32'));
  const users = Number(arg('users', '240'));
  const joinAt = Number(arg('join-at', '6'));
  const growOnly = process.argv.includes('--grow-only');
  const grow = growOnly || process.argv.includes('--grow');
  const growGroups = Number(arg('grow-groups', String(shards)));
  const splitRecords = Number(arg('split-records', '100'));
  mkdirSync(join(ROOT, 'bench-results'), { recursive: true });
  const dir = mkdtempSync(join(ROOT, 'bench-results', '.placement-'));
  const results: Measured[] = [];
  console.log(`${writes} writes (${users} users, ${clients} clients spread over every node), ${shards} shard groups, replication factor 3; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  try {
    for (const n of growOnly ? [] : counts) {
      const c = await startCluster(n, shards, dir);
      try {
        const r: Measured & { join_under_load?: unknown } = await measure(c, writes, clients, users);
        if (n === joinAt) {
          const steady = await writeLoad(c.urls, writes, clients, users);
          const joined = await joinUnderLoad(c, n, shards, dir, () => writeLoad(c.urls, writes, clients, users));
          console.log(`${String(n).padStart(2)} nodes, node ${n + 1} joining under the same load: p50 ${joined.during.p50.toFixed(1)} ms, p99 ${joined.during.p99.toFixed(1)} ms ` +
            `(${joined.steps_during_load} placement steps during the load; the same load just before: p50 ${steady.p50.toFixed(1)} ms, p99 ${steady.p99.toFixed(1)} ms); ` +
            `${joined.during.acked} acknowledged; node ${n + 1} held its share (${joined.share} groups) ${joined.seconds_to_fill.toFixed(1)} s after it started`);
          r.join_under_load = { steady_p50_ms: steady.p50, steady_p99_ms: steady.p99, during_p50_ms: joined.during.p50, during_p99_ms: joined.during.p99, acknowledged: joined.during.acked, steps_during_load: joined.steps_during_load, seconds_to_fill: joined.seconds_to_fill };
        }
        results.push(r);
        console.log(describe(r, 'fixed: '));
      } finally {
        await Promise.all(c.procs.map((p) => p.stop()));
      }
    }
    const grown = grow ? await grownSeries(counts, growGroups, splitRecords, writes, clients, users, dir) : null;
    const relative = (series: Measured[]) => series.map((r) => ({
      nodes: r.nodes, applied: r.applied_per_node.mean / series[0].applied_per_node.mean, bytes: r.bytes_per_node.mean / series[0].bytes_per_node.mean,
      io: r.io_written_per_node.mean / series[0].io_written_per_node.mean,
    }));
    if (results.length) {
      console.log('\nfixed count: per-node work relative to the first cluster size:');
      for (const [i, x] of relative(results).entries()) {
        console.log(`  ${x.nodes} nodes: commands applied ${x.applied.toFixed(2)}x, data directory growth ${x.bytes.toFixed(2)}x, written to storage ${x.io.toFixed(2)}x (ideal with replication 3 over ${x.nodes} nodes: ${(results[0].nodes / x.nodes).toFixed(2)}x); ${results[i].applied_per_node.mean.toFixed(0)} commands per node`);
      }
    }
    if (grown) {
      console.log(`\ngrown from the defaults (${grown.growth.groups} groups): per-node work relative to its first cluster size, and against the fixed count at the same size:`);
      for (const [i, x] of relative(grown.results).entries()) {
        const fixed = results.find((r) => r.nodes === x.nodes);
        const r = grown.results[i];
        console.log(`  ${x.nodes} nodes: commands applied ${x.applied.toFixed(2)}x, data directory growth ${x.bytes.toFixed(2)}x, written to storage ${x.io.toFixed(2)}x; ${r.applied_per_node.mean.toFixed(0)} commands per node (${r.applied_per_node.min}-${r.applied_per_node.max})` +
          (fixed ? `, ${(r.applied_per_node.mean / fixed.applied_per_node.mean).toFixed(2)}x the fixed count's ${fixed.applied_per_node.mean.toFixed(0)}; written to storage ${(r.io_written_per_node.mean / fixed.io_written_per_node.mean).toFixed(2)}x` : ''));
      }
    }
    writeFileSync(join(ROOT, 'bench-results', 'placement.json'), JSON.stringify({ at: new Date().toISOString(), results, grown }, null, 2) + '\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
