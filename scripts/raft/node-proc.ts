/**
 * One Raft node as a process, driven over IPC by a parent (the 3-process test and the benchmark):
 * real LevelDB with synced writes, HTTP transport on 127.0.0.1, one group with a small state machine.
 * Config comes as JSON in RAFT_NODE_CONFIG: {id, port, dir, peers: {id: url}, secret, tickMs}.
 */
import { RaftHost } from '../../packages/raft/src/driver/host';
import type { AppliedEntry, RaftStateMachine, SnapshotPoint, SnapshotReader, SnapshotWriter } from '../../packages/raft/src/driver/state-machine';
import { readWholeSnapshot } from '../../packages/raft/src/driver/snapshot-buffer';
import { LevelStorage } from '../../packages/raft/src/storage/level-storage';
import { HttpTransport, startRaftServer } from '../../packages/raft/src/transport/http';
import { RaftError } from '../../packages/raft/src/errors';

interface Config {
  id: number;
  port: number;
  dir: string;
  peers: Record<number, string>;
  secret: string;
  tickMs: number;
}

/** Counts commands and keeps a checksum of their payloads (in memory: replayed from the log on start). */
class CounterMachine implements RaftStateMachine {
  count = 0;
  sum = 0;
  applied = 0;
  term = 0;
  async apply(entries: AppliedEntry[]): Promise<unknown[]> {
    return entries.map((e) => {
      this.applied = e.index;
      this.term = e.term;
      if (e.kind !== 'command') return undefined;
      this.count++;
      this.sum = (this.sum + e.data.length + e.data[0]) % 1_000_000_007;
      return this.count;
    });
  }
  async snapshot(out: SnapshotWriter): Promise<SnapshotPoint> {
    const at = { index: this.applied, term: this.term }; // fixed at the call: applies go on meanwhile
    await out.write(Buffer.from(JSON.stringify({ count: this.count, sum: this.sum })));
    return at;
  }
  async restore(s: SnapshotPoint, image: SnapshotReader): Promise<void> {
    const v = JSON.parse((await readWholeSnapshot(image)).toString()) as { count: number; sum: number };
    this.count = v.count;
    this.sum = v.sum;
    this.applied = s.index;
    this.term = s.term;
  }
  appliedIndex(): number {
    return this.applied;
  }
}

type Cmd =
  | { id: number; cmd: 'init' }
  | { id: number; cmd: 'status' }
  | { id: number; cmd: 'propose'; n: number; size: number }
  | { id: number; cmd: 'read' }
  | { id: number; cmd: 'bench'; concurrency: number; durationMs: number; size: number };

async function main(): Promise<void> {
  const cfg = JSON.parse(process.env.RAFT_NODE_CONFIG ?? '{}') as Config;
  const selfUrl = `http://127.0.0.1:${cfg.port}`;
  const storage = await LevelStorage.open(cfg.dir);
  const transport = new HttpTransport({ nodeId: cfg.id, selfUrl, secret: cfg.secret, prefix: '/raft/' });
  const server = await startRaftServer(transport, cfg.port);
  const host = new RaftHost({ nodeId: cfg.id, selfUrl, storage, transport, tickMs: cfg.tickMs, peers: cfg.peers });
  const sm = new CounterMachine();
  const group = await host.openGroup(1, sm, { snapshotEvery: 20_000, compactionMargin: 5_000 });
  const reply = (id: number, body: object) => process.send?.({ id, ...body });

  process.on('message', (m: Cmd) => {
    void (async () => {
      try {
        switch (m.cmd) {
          case 'init':
            return reply(m.id, { result: await group.initialize(Object.entries(cfg.peers).map(([id, url]) => ({ id: Number(id), url }))) });
          case 'status':
            return reply(m.id, { status: group.status(), count: sm.count, sum: sm.sum, stats: { ...host.stats, storageWrites: storage.writes, transport: transport.stats } });
          case 'read': {
            const index = await group.readBarrier();
            return reply(m.id, { index, count: sm.count });
          }
          case 'propose': {
            const payload = Buffer.alloc(m.size, 7);
            const rs = await Promise.all([...Array(m.n).keys()].map(() => group.propose(payload)));
            return reply(m.id, { last: rs[rs.length - 1], count: sm.count });
          }
          case 'bench':
            return reply(m.id, await bench(m.concurrency, m.durationMs, m.size));
        }
      } catch (e) {
        reply(m.id, { error: e instanceof RaftError ? `${e.code}: ${e.message}` : String(e) });
      }
    })();
  });

  /** Closed-loop proposers: each proposes, waits for commit+apply, and proposes again. */
  async function bench(concurrency: number, durationMs: number, size: number) {
    const payload = Buffer.alloc(size, 1);
    const lat: number[] = [];
    let errors = 0;
    const writesBefore = storage.writes;
    const end = Date.now() + durationMs;
    const t0 = process.hrtime.bigint();
    await Promise.all(
      [...Array(concurrency).keys()].map(async () => {
        while (Date.now() < end) {
          const s = process.hrtime.bigint();
          try {
            await group.propose(payload);
            lat.push(Number(process.hrtime.bigint() - s) / 1e6);
          } catch {
            errors++;
          }
        }
      }),
    );
    const secs = Number(process.hrtime.bigint() - t0) / 1e9;
    lat.sort((a, b) => a - b);
    const pct = (p: number) => (lat.length ? lat[Math.min(lat.length - 1, Math.floor(p * lat.length))] : NaN);
    return { concurrency, commits: lat.length, seconds: secs, commitsPerSec: lat.length / secs, p50ms: pct(0.5), p99ms: pct(0.99), errors, syncedWritesOnLeader: storage.writes - writesBefore };
  }

  const shutdown = async () => {
    await host.close();
    server.close();
    await storage.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown());
  process.on('disconnect', () => void shutdown());
  process.send?.({ ready: true });
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
