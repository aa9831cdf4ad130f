/**
 * Snapshot transfer benchmark: a leader process holding a large Strata state (real StateDb, StateMachine
 * and RaftApplier on LevelDB; the state written straight into LevelDB as incompressible records, then
 * captured by a Raft snapshot) brings a new, empty follower process up by snapshot over the signed HTTP
 * transport on 127.0.0.1. Each side reports its peak RSS (getrusage maxrss), so the memory a transfer
 * costs shows next to the size of the state; both sides then digest their whole state (the image's
 * SHA-256, streamed) and must agree.
 *   node --conditions=strata-source --import tsx scripts/bench-snapshot.ts [--mib 500] [--chunk-kib 1024]
 * Prints the figures and writes bench-results/snapshot.json.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createHash, randomFillSync } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import {
  DEFAULT_CONFIG, HttpTransport, LevelStorage, MsgType, RaftHost, startRaftServer,
  type RaftStateMachine, type SnapshotPoint, type SnapshotReader, type SnapshotWriter, type Transport,
} from '@strata/raft';
import { RaftApplier, StateDb, StateMachine, writeImage } from '@strata/store';
import { intArg } from './cli-args';

const SECRET = 'bench-snapshot-secret-0123456789abcdef';
/** ports of nodes 1 and 2, chosen free by the parent and passed to both children */
const PORTS: Record<1 | 2, number> = { 1: 0, 2: 0 };
const url = (id: 1 | 2) => `http://127.0.0.1:${PORTS[id]}`;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}
const MiB = 1024 * 1024;
const rssMiB = () => process.memoryUsage().rss / MiB;

/**
 * Peak memory of this process since the last mark, sampled every 20 ms: RSS, and its two parts from
 * /proc/self/status: anonymous (heap, buffers: what the transfer holds) and file-backed (LevelDB maps
 * its table files: pages of files read, reclaimable, growing with what is read whatever the code).
 */
class Peaks {
  rss = 0;
  anon = 0;
  file = 0;
  heap = 0;
  private readonly timer = setInterval(() => this.sample(), 20);
  constructor() {
    this.timer.unref();
  }
  sample(): void {
    const m = process.memoryUsage();
    this.rss = Math.max(this.rss, m.rss / MiB);
    this.heap = Math.max(this.heap, (m.heapUsed + m.external + m.arrayBuffers) / MiB);
    try {
      const status = readFileSync('/proc/self/status', 'utf8');
      const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0) / 1024;
      this.anon = Math.max(this.anon, kib('RssAnon'));
      this.file = Math.max(this.file, kib('RssFile'));
    } catch {
      // not Linux: RSS and heap only
    }
  }
  take(): { peak_rss_mib: number; peak_rss_anon_mib: number; peak_rss_file_mib: number; peak_js_heap_and_buffers_mib: number } {
    this.sample();
    const r = { peak_rss_mib: this.rss, peak_rss_anon_mib: this.anon, peak_rss_file_mib: this.file, peak_js_heap_and_buffers_mib: this.heap };
    this.rss = this.anon = this.file = this.heap = 0;
    return r;
  }
}

type Msg = { cmd: 'fill'; mib: number } | { cmd: 'add' } | { cmd: 'status' } | { cmd: 'digest' } | { cmd: 'mark' };

/** The applier, with its snapshot and restore timed (what the bench reports; Raft sees the same object). */
class Timed implements RaftStateMachine {
  snapshotSeconds = 0;
  restoreSeconds = 0;
  restores = 0;
  constructor(readonly inner: RaftApplier) {}
  apply(...a: Parameters<RaftApplier['apply']>) {
    return this.inner.apply(...a);
  }
  async snapshot(out: SnapshotWriter): Promise<SnapshotPoint> {
    const t = process.hrtime.bigint();
    const r = await this.inner.snapshot(out);
    this.snapshotSeconds = Number(process.hrtime.bigint() - t) / 1e9;
    return r;
  }
  async restore(at: SnapshotPoint, image: SnapshotReader): Promise<void> {
    const t = process.hrtime.bigint();
    await this.inner.restore(at, image);
    this.restoreSeconds = Number(process.hrtime.bigint() - t) / 1e9;
    this.restores++;
  }
  appliedIndex(): number {
    return this.inner.appliedIndex();
  }
}

/** One node: `--role 1|2` in a child process. */
async function child(id: 1 | 2, dir: string, chunkKiB: number): Promise<void> {
  const db = await StateDb.open(join(dir, 'state'));
  const sm = new Timed(await RaftApplier.open(await StateMachine.open(db)));
  const storage = await LevelStorage.open(join(dir, 'raft'));
  const http = new HttpTransport({ nodeId: id, selfUrl: url(id), secret: SECRET, prefix: '/raft/' });
  const server = await startRaftServer(http, PORTS[id]);
  // Sees the Snap chunks this node receives (first and last arrival, bytes), then hands them to Raft.
  const recv = { first: 0, last: 0, bytes: 0, messages: 0 };
  const transport: Transport = {
    send: (to, u, msgs) => http.send(to, u, msgs),
    close: () => http.close(),
    setHandler: (h) =>
      http.setHandler((from, fromUrl, msgs) => {
        for (const { msg } of msgs) {
          if (msg.type !== MsgType.Snap) continue;
          recv.first ||= Date.now();
          recv.last = Date.now();
          recv.bytes += msg.snap?.length ?? 0;
          recv.messages++;
        }
        h(from, fromUrl, msgs);
      }),
  };
  const host = new RaftHost({ nodeId: id, selfUrl: url(id), storage, transport, tickMs: 100, peers: { 1: url(1), 2: url(2) }, raft: { snapshotChunkSize: chunkKiB * 1024 } });
  // Every applied entry snapshots and compacts the whole log: a new member can only come in by snapshot.
  const group = await host.openGroup(0, sm, { snapshotEvery: 1, compactionMargin: 0, catchUpTimeoutMs: 60 * 60_000, proposeTimeoutMs: 60 * 60_000 });
  const reply = (body: object) => process.send?.(body);
  const peaks = new Peaks();
  process.on('message', (m: Msg) => {
    void (async () => {
      try {
        if (m.cmd === 'fill') {
          await group.initialize([{ id: 1, url: url(1) }]);
          while (!group.isLeader()) await new Promise((r) => setTimeout(r, 20));
          const t = process.hrtime.bigint();
          const value = 4096;
          const batch = 1024; // 4 MiB per LevelDB batch
          const buf = Buffer.allocUnsafe(value * batch);
          let n = 0;
          for (let written = 0; written < m.mib * MiB; written += buf.length) {
            randomFillSync(buf); // incompressible: LevelDB stores it at full size, like real embeddings
            await db.level.batch(
              Array.from({ length: batch }, (_, i) => ({ type: 'put' as const, key: Buffer.from(`~bench\x00${String(n++).padStart(10, '0')}`), value: buf.subarray(i * value, (i + 1) * value), keyEncoding: 'buffer', valueEncoding: 'buffer' })) as never,
            );
          }
          reply({ filled: true, fillSeconds: Number(process.hrtime.bigint() - t) / 1e9, rssMiB: rssMiB(), peaks: peaks.take() });
        } else if (m.cmd === 'add') {
          const t = process.hrtime.bigint();
          await group.addNode(2, url(2));
          reply({ added: true, seconds: Number(process.hrtime.bigint() - t) / 1e9, snapshotSeconds: sm.snapshotSeconds, snapshotBytes: group.core.snapshot?.size ?? 0, applied: group.status().appliedIndex });
        } else if (m.cmd === 'status') {
          reply({ applied: group.status().appliedIndex, restores: sm.restores, restoreSeconds: sm.restoreSeconds, recv, rssMiB: rssMiB() });
        } else if (m.cmd === 'mark') {
          reply({ peaks: peaks.take() });
        } else if (m.cmd === 'digest') {
          const hash = createHash('sha256');
          await writeImage(db, { write: async (b) => void hash.update(b) });
          reply({ digest: hash.digest('hex'), applied: group.status().appliedIndex });
        }
      } catch (e) {
        reply({ error: String((e as Error).stack ?? e) });
      }
    })();
  });
  const shutdown = async () => {
    await host.close();
    server.close();
    await storage.close();
    await db.close();
    process.exit(0);
  };
  process.on('disconnect', () => void shutdown());
  reply({ ready: true });
}

class Proc {
  private readonly waiting: ((m: Record<string, unknown>) => void)[] = [];
  constructor(readonly p: ChildProcess) {
    p.on('message', (m: Record<string, unknown>) => this.waiting.shift()?.(m));
    p.on('exit', (code) => {
      if (code) console.error(`node process exited with ${code}`);
    });
  }
  next(): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) =>
      this.waiting.push((m) => {
        if (m.error) reject(new Error(String(m.error)));
        else resolve(m);
      }),
    );
  }
  call(m: Msg): Promise<Record<string, unknown>> {
    const r = this.next();
    this.p.send(m);
    return r;
  }
}

async function main(): Promise<void> {
  const mib = intArg('mib', 500);
  const chunkKiB = intArg('chunk-kib', DEFAULT_CONFIG.snapshotChunkSize / 1024);
  mkdirSync('bench-results', { recursive: true });
  const root = mkdtempSync(join(process.cwd(), 'bench-results', '.snapshot-'));
  const ports = [await freePort(), await freePort()];
  const spawn = (id: 1 | 2) =>
    new Proc(fork(__filename, ['--role', String(id), '--dir', join(root, `n${id}`), '--chunk-kib', String(chunkKiB), '--ports', ports.join(',')], { execArgv: ['--conditions=strata-source', '--import', 'tsx'] }));
  const [leader, follower] = [spawn(1), spawn(2)];
  try {
    await Promise.all([leader.next(), follower.next()]);
    const filled = await leader.call({ cmd: 'fill', mib });
    console.log(`leader: ${mib} MiB of state written in ${(filled.fillSeconds as number).toFixed(1)} s (RSS ${(filled.rssMiB as number).toFixed(0)} MiB)`);
    const followerBefore = await follower.call({ cmd: 'status' });
    await Promise.all([leader.call({ cmd: 'mark' }), follower.call({ cmd: 'mark' })]); // peaks from here: the snapshot, its transfer, its install
    const added = await leader.call({ cmd: 'add' });
    let after = await follower.call({ cmd: 'status' });
    // addNode returns once the promotion is applied on the leader; the follower applies it just after.
    while ((after.applied as number) < (added.applied as number)) {
      await new Promise((r) => setTimeout(r, 50));
      after = await follower.call({ cmd: 'status' });
    }
    const [pl, pf] = await Promise.all([leader.call({ cmd: 'mark' }), follower.call({ cmd: 'mark' })]);
    const [dl, df] = await Promise.all([leader.call({ cmd: 'digest' }), follower.call({ cmd: 'digest' })]);
    const recv = after.recv as { first: number; last: number; bytes: number; messages: number };
    const bytes = added.snapshotBytes as number;
    const transferSeconds = (recv.last - recv.first) / 1000;
    const result = {
      state_mib: mib,
      snapshot_mib: bytes / MiB,
      chunk_kib: chunkKiB,
      identical_state: dl.digest === df.digest && dl.applied === df.applied,
      leader: {
        snapshot_write_seconds: added.snapshotSeconds,
        snapshot_write_mib_per_s: bytes / MiB / (added.snapshotSeconds as number),
        rss_after_fill_mib: filled.rssMiB,
        during_snapshot_and_transfer: pl.peaks,
      },
      follower: {
        rss_before_mib: followerBefore.rssMiB,
        during_transfer_and_restore: pf.peaks,
        chunks_received: recv.messages,
        bytes_received_mib: recv.bytes / MiB,
        transfer_seconds: transferSeconds,
        transfer_mib_per_s: bytes / MiB / transferSeconds,
        restore_seconds: after.restoreSeconds,
        restore_mib_per_s: bytes / MiB / (after.restoreSeconds as number),
        restores: after.restores,
      },
      add_node_seconds: added.seconds,
      machine: { cpus: (await import('node:os')).cpus().length, node: process.version },
    };
    console.log(JSON.stringify(result, null, 2));
    writeFileSync('bench-results/snapshot.json', JSON.stringify(result, null, 2) + '\n');
    if (!result.identical_state) throw new Error('the follower state differs from the leader state');
  } finally {
    leader.p.disconnect();
    follower.p.disconnect();
    await new Promise((r) => setTimeout(r, 500));
    rmSync(root, { recursive: true, force: true });
  }
}

const roleAt = process.argv.indexOf('--role');
if (roleAt >= 0) {
  const dirAt = process.argv.indexOf('--dir');
  const [p1, p2] = process.argv[process.argv.indexOf('--ports') + 1].split(',').map(Number);
  PORTS[1] = p1;
  PORTS[2] = p2;
  child(Number(process.argv[roleAt + 1]) as 1 | 2, process.argv[dirAt + 1], intArg('chunk-kib', DEFAULT_CONFIG.snapshotChunkSize / 1024)).catch((e) => {
    console.error(e);
    process.exit(1);
  });
} else {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
