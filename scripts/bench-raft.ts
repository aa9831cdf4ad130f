/**
 * Raft benchmark: a 3-node group as three processes on 127.0.0.1 with synced LevelDB writes and the
 * HTTP transport. Closed-loop proposers on the leader (1, 16, 256 concurrent) measure commits/s and
 * p50/p99 latency from propose() to applied-on-leader. A baseline in the same run: one synced
 * LevelDB write at a time in this process (the disk's fsync cost).
 *   node --conditions=strata-source --import tsx scripts/bench-raft.ts [--seconds 5] [--size 128]
 * Prints the figures and writes bench-results/raft.json.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Level } from 'level';
import { makeCluster, waitLeader } from './raft/cluster';

function arg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? def : Number(process.argv[i + 1]);
}

async function fsyncBaseline(dir: string): Promise<{ syncedWritesPerSec: number; p50ms: number; p99ms: number }> {
  const db = new Level<string, string>(join(dir, 'baseline'));
  await db.open();
  const lat: number[] = [];
  const t0 = Date.now();
  for (let i = 0; i < 300; i++) {
    const s = process.hrtime.bigint();
    await db.put(`k${i}`, 'x'.repeat(128), { sync: true });
    lat.push(Number(process.hrtime.bigint() - s) / 1e6);
  }
  const secs = (Date.now() - t0) / 1000;
  await db.close();
  lat.sort((a, b) => a - b);
  return { syncedWritesPerSec: 300 / secs, p50ms: lat[150], p99ms: lat[296] };
}

async function main(): Promise<void> {
  const seconds = arg('seconds', 5);
  const size = arg('size', 128);
  mkdirSync('bench-results', { recursive: true });
  const root = mkdtempSync(join(process.cwd(), 'bench-results', '.raft-'));
  const nodes = await makeCluster(3, root, 50);
  try {
    const baseline = await fsyncBaseline(root);
    console.log(`baseline: one synced LevelDB write at a time: ${baseline.syncedWritesPerSec.toFixed(0)}/s, p50 ${baseline.p50ms.toFixed(2)} ms, p99 ${baseline.p99ms.toFixed(2)} ms`);
    await Promise.all(nodes.map((n) => n.start()));
    const init = await nodes[0].call({ cmd: 'init' });
    if (init.error) throw new Error(String(init.error));
    const leader = await waitLeader(nodes);
    await leader.call({ cmd: 'bench', concurrency: 16, durationMs: 1000, size }); // warm-up
    const runs: Record<string, unknown>[] = [];
    for (const concurrency of [1, 16, 256]) {
      const r = await leader.call({ cmd: 'bench', concurrency, durationMs: seconds * 1000, size }, seconds * 1000 + 60_000);
      if (r.error) throw new Error(String(r.error));
      delete r.id;
      runs.push(r);
      console.log(
        `${String(concurrency).padStart(3)} proposers: ${(r.commitsPerSec as number).toFixed(0).padStart(6)} commits/s, p50 ${(r.p50ms as number).toFixed(2)} ms, p99 ${(r.p99ms as number).toFixed(2)} ms ` +
          `(${r.commits} commits, ${r.syncedWritesOnLeader} synced writes on the leader, ${r.errors} errors)`,
      );
    }
    const statuses = await Promise.all(nodes.map((n) => n.call({ cmd: 'status' })));
    const counts = statuses.map((s) => s.count);
    console.log(`applied commands per node: ${counts.join(', ')}`);
    const out = {
      benchmark: 'raft-3-process',
      date: new Date().toISOString(),
      machine: { cpus: (await import('node:os')).cpus().length, node: process.version },
      setup: { nodes: 3, transport: 'http (undici keep-alive), loopback', storage: 'LevelDB, sync: true', payloadBytes: size, secondsPerRun: seconds, tickMs: 50 },
      baseline,
      runs,
      leaderStats: statuses.find((s) => (s.status as { role: string }).role === 'leader')?.stats,
    };
    writeFileSync('bench-results/raft.json', JSON.stringify(out, null, 2) + '\n');
    console.log('wrote bench-results/raft.json');
  } finally {
    for (const n of nodes) await n.kill('SIGTERM');
    rmSync(root, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
