/**
 * What applying a recorded Raft log costs a follower, by command type, and the state it leaves (issue 27).
 * `--record N` first makes the log: a single node with the default configuration (consolidation on,
 * the local embedder; `STRATA__RAFT__SNAPSHOT_EVERY=10000`, so the log is not compacted) in DATA_DIR
 * takes N of bench:cluster's `--default-config` chat lines from 32 closed-loop clients over 64 users
 * (memory forming as they arrive), drains, and stops. Then it reads the committed entries of DATA_DIR
 * (`raft/`, a log not yet compacted) and applies them to a fresh
 * StateDb through RaftApplier, as a follower does: parsed from their bytes (no proposer's copy), in
 * runs of `--ready` entries (a follower's Ready). Prints CPU µs per event of the ingests and of the
 * consolidation commands (`memory.consolidate`, `memory.consolidate_users`), the main thread's CPU over
 * the replay, and a SHA-256 of every key and value of the state afterwards: two trees that apply the
 * same log to the same state print the same digest (a change of apply must keep old logs' state).
 * `--views` also keeps the consolidation worker's memory views of the users each consolidation command
 * names (as the leader does between its batches: what the commands changed is read again) and prints
 * their CPU per event.
 *   node --conditions=strata-source --import tsx scripts/bench-apply-replay.ts DATA_DIR [--record 6000] [--ready 16] [--repeat 3] [--views]
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { LevelStorage, EntryType, type AppliedEntry } from '@strata/raft';
import { RaftApplier, StateDb, StateMachine, type Command } from '@strata/store';
import { MemoryViews } from '../packages/server/src/workers/memory-view';
import { Pool } from 'undici';
import { freePort, launch, sleep, waitHttp } from './lib/processes';
import { chatLine } from './lib/chat-lines';

function arg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : def;
}

const READY = arg('ready', 16);
/** `--views`: also keep the consolidation worker's memory views (workers/memory-view.ts) of the users each consolidation command names, as the leader does between its batches */
const VIEWS = process.argv.includes('--views');
const REPEAT = arg('repeat', 3);

const API_KEY = 'bench-apply-replay-key';

/** `--record N`: a node in `dataDir` takes N chat lines from 32 clients over 64 users, drains its backlog and stops. */
async function record(dataDir: string, total: number): Promise<void> {
  rmSync(dataDir, { recursive: true, force: true });
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const node = launch(process.execPath, ['--conditions=strata-source', '--import', 'tsx', 'packages/server/src/main.ts'], {
    STRATA_NODE_ID: '1', STRATA_PORT: String(port), STRATA_HOST: '127.0.0.1', STRATA_DATA_DIR: dataDir, STRATA_API_KEY: API_KEY, STRATA_LOG_LEVEL: 'warn',
    STRATA__RAFT__SNAPSHOT_EVERY: '10000', STRATA__RAFT__SNAPSHOT_EVERY_BYTES: String(64 * 1024 * 1024),
  }, `${dataDir}.log`);
  try {
    await waitHttp(`${url}/readyz`, (status) => status === 200, 'the node ready', { 'x-api-key': API_KEY }, 300_000);
    const pool = new Pool(url, { connections: 33 });
    const streams = Array.from({ length: 16 }, () => randomUUID());
    let next = 0;
    let failed = 0;
    await Promise.all(Array.from({ length: 32 }, async () => {
      while (next < total) {
        const i = next++;
        const r = await pool.request({
          method: 'POST', path: `/v1/users/bench-${i % 64}/streams/${streams[i % streams.length]}/events`,
          headers: { 'content-type': 'application/json', 'x-api-key': API_KEY }, body: JSON.stringify({ content: chatLine(i) }),
        });
        await r.body.dump();
        if (r.statusCode !== 200) failed++;
      }
    }));
    await pool.close();
    const pending = async () => ((await (await fetch(`${url}/v1/status/pending`, { headers: { 'x-api-key': API_KEY } })).json()) as { pending: number }).pending;
    while ((await pending()) > 0) await sleep(200);
    console.log(`recorded ${total - failed} events (${failed} failed) in ${dataDir}`);
  } finally {
    await node.stop();
  }
}

/** The embedder of the log's consolidation commands (the views hold that embedder's vectors). */
function embedderOf(entries: AppliedEntry[]): string {
  for (const e of entries) {
    if (e.kind !== 'command') continue;
    const c = JSON.parse(e.data.toString('utf8')) as { type: string; embedder_id?: string; users?: { embedder_id: string }[] };
    if (c.type === 'memory.consolidate_users' || c.type === 'memory.consolidate') return c.embedder_id ?? c.users?.[0]?.embedder_id ?? '';
  }
  return '';
}

/** The group of the log whose entries carry events (shard 0 of a single node). */
async function loadEntries(dataDir: string): Promise<AppliedEntry[]> {
  const storage = await LevelStorage.open(join(dataDir, 'raft'));
  try {
    let best: AppliedEntry[] = [];
    for (let group = 0; group < 8; group++) {
      const stored = await storage.load(group);
      if (stored.offset !== 0 && stored.entries.length > 0) throw new Error(`group ${group}: the log was compacted (offset ${stored.offset}); record it with STRATA__RAFT__SNAPSHOT_EVERY=10000`);
      const entries: AppliedEntry[] = stored.entries.map((e) => ({
        index: e.index, term: e.term, kind: e.type === EntryType.Conf ? 'membership' : e.data.byteLength === 0 ? 'noop' : 'command', data: Buffer.from(e.data),
      }));
      if (entries.filter((e) => e.kind === 'command').length > best.filter((e) => e.kind === 'command').length) best = entries;
    }
    return best;
  } finally {
    await storage.close();
  }
}

/** CPU µs of the main thread (the apply; not LevelDB's compaction threads), from /proc where there is one. */
const cpuUs = (): number => {
  try {
    const f = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) * 10_000; // utime, stime in clock ticks (USER_HZ = 100)
  } catch {
    const u = process.cpuUsage();
    return u.user + u.system;
  }
};

async function digest(db: StateDb): Promise<string> {
  const h = createHash('sha256');
  for await (const [k, v] of db.level.iterator({ keyEncoding: 'buffer', valueEncoding: 'buffer' } as never) as AsyncIterable<[Buffer, Buffer]>) {
    h.update(k);
    h.update(Buffer.from([0]));
    h.update(v);
    h.update(Buffer.from([1]));
  }
  return h.digest('hex').slice(0, 16);
}

interface Figures { ingestUs: number; consolidateUs: number; otherUs: number; viewsUs: number; events: number; consolidated: number; wallMs: number; cpuMs: number; digest: string }

async function replay(entries: AppliedEntry[]): Promise<Figures> {
  const dir = mkdtempSync(join(tmpdir(), 'strata-apply-replay-'));
  const db = await StateDb.open(join(dir, 'state'));
  const sm = await StateMachine.open(db);
  const applier = await RaftApplier.open(sm);
  const views = VIEWS ? new MemoryViews({ db, embedderId: embedderOf(entries), sm }) : null;
  const f: Figures = { ingestUs: 0, consolidateUs: 0, otherUs: 0, viewsUs: 0, events: 0, consolidated: 0, wallMs: 0, cpuMs: 0, digest: '' };
  const t0 = Date.now();
  const c0 = cpuUs();
  try {
    // Runs of the same kind, at most READY entries (a follower's Ready): each timed as a whole.
    for (let i = 0; i < entries.length;) {
      const kindOf = (e: AppliedEntry): string => (e.kind === 'command' ? (JSON.parse(e.data.toString('utf8')) as Command).type : e.kind);
      const first = kindOf(entries[i]);
      let j = i + 1;
      while (j < entries.length && j - i < READY && kindOf(entries[j]) === first) j++;
      const run = entries.slice(i, j).map((e) => ({ ...e, data: Buffer.from(e.data) }));
      const before = cpuUs();
      await applier.apply(run);
      const us = cpuUs() - before;
      if (first === 'events.ingest') {
        f.ingestUs += us;
        for (const e of run) f.events += (JSON.parse(e.data.toString('utf8')) as { events: unknown[] }).events.length;
      } else if (first === 'memory.consolidate' || first === 'memory.consolidate_users') {
        f.consolidateUs += us;
        const users = new Set<string>();
        for (const e of run) {
          const c = JSON.parse(e.data.toString('utf8')) as { user_id?: string; consumed?: unknown[]; users?: { user_id: string; consumed: unknown[] }[] };
          f.consolidated += c.consumed?.length ?? (c.users ?? []).reduce((n, u) => n + u.consumed.length, 0);
          if (c.user_id) users.add(c.user_id);
          for (const u of c.users ?? []) users.add(u.user_id);
        }
        if (views) {
          // the next batch of each of these users reads its view: what the commands changed is read again
          const v0 = cpuUs();
          for (const user of users) await views.get(user);
          f.viewsUs += cpuUs() - v0;
        }
      } else f.otherUs += us;
      i = j;
    }
    f.wallMs = Date.now() - t0;
    f.cpuMs = (cpuUs() - c0) / 1000;
    f.digest = await digest(db);
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return f;
}

async function main(): Promise<void> {
  const dataDir = process.argv[2];
  if (!dataDir || dataDir.startsWith('--')) throw new Error('usage: bench-apply-replay.ts DATA_DIR [--record 6000] [--ready 16] [--repeat 3] [--views]');
  if (process.argv.includes('--record')) await record(resolve(dataDir), arg('record', 6000));
  const entries = await loadEntries(dataDir);
  const kinds = new Map<string, number>();
  for (const e of entries) {
    const k = e.kind === 'command' ? (JSON.parse(e.data.toString('utf8')) as Command).type : e.kind;
    kinds.set(k, (kinds.get(k) ?? 0) + 1);
  }
  console.log(`${entries.length} entries: ${[...kinds].map(([k, n]) => `${k} ${n}`).join(', ')}; runs of at most ${READY}`);
  const runs: Figures[] = [];
  for (let r = 1; r <= REPEAT; r++) {
    const f = await replay(entries);
    runs.push(f);
    console.log(`replay ${r}: ingest ${(f.ingestUs / f.events).toFixed(1)} µs/event (${f.events}), consolidation ${(f.consolidateUs / f.consolidated).toFixed(1)} µs/event (${f.consolidated}), other commands ${(f.otherUs / 1000).toFixed(0)} ms;${VIEWS ? ` views ${(f.viewsUs / f.consolidated).toFixed(1)} µs/event;` : ''} wall ${f.wallMs} ms, CPU ${f.cpuMs.toFixed(0)} ms; state ${f.digest}`);
  }
  // The first replay warms the JIT up: the medians are of the others.
  const rest = runs.length > 1 ? runs.slice(1) : runs;
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(`${runs.length > 1 ? `median of replays 2-${runs.length}` : 'replay 1'}: ingest ${median(rest.map((f) => f.ingestUs / f.events)).toFixed(1)} µs/event, consolidation ${median(rest.map((f) => f.consolidateUs / f.consolidated)).toFixed(1)} µs/event${VIEWS ? `, views ${median(rest.map((f) => f.viewsUs / f.consolidated)).toFixed(1)} µs/event` : ''} (main thread CPU)`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
