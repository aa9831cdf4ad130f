/**
 * What the consolidation worker's backlog reads cost as the backlog is consumed (issue 27): a trickle
 * of `--per-tick` events a tick over `--users` users (each tick's events to the next users in turn, as
 * the cluster bench's clients send them), each tick reading its queues and consuming them in one
 * `memory.consolidate_users`, on a real LevelDB (StateDb, StateMachine, LocalLog). Two ways of reading,
 * each on a fresh directory: the scans of queries.ts (`pendingUsersFrom`, then `pendingOfUser` per user:
 * what the worker did before), which walk the tombstones of the entries consumed since LevelDB last
 * compacted them, and PendingKeys (the keys in memory, the entries read by key). Prints the reads' µs
 * per tick for every `--every` ticks, and asserts both read the same queues.
 *   node --conditions=strata-source --import tsx scripts/bench-pending-reads.ts [--users 64] [--ticks 4000] [--per-tick 2] [--every 500]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  LocalLog, PendingKeys, StateDb, StateMachine, pendingOfUser, pendingUsersFrom, settle,
  type ConsolidateUsersCommand, type IngestCommand, type PendingQueue,
} from '@strata/store';

function arg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : def;
}

const USERS = arg('users', 64);
const TICKS = arg('ticks', 4000);
const PER_TICK = arg('per-tick', 2);
const EVERY = arg('every', 500);
const BATCH = 64;
const T0 = '2026-01-01T00:00:00.000Z';

function ingestOf(user: string, id: string): IngestCommand {
  return {
    type: 'events.ingest', user_id: user, stream_id: 's1', at: T0, idempotency: null, assets: [],
    events: [{
      event_id: id, user_id: user, stream_id: 's1', content: `a chat line of about a hundred bytes, number ${id}, to fill the entry`, content_type: 'text',
      org_id: null, agent_id: null, role: null, level: null, parent_id: null, task_status: null, task_progress: null, valid_time: T0, transaction_time: T0,
      metadata: null, assets: [],
    }],
  };
}

/** µs of reads per tick, one figure per `EVERY` ticks, and the queues read (to compare the two ways). */
async function run(way: 'scans' | 'keys'): Promise<{ us: number[]; read: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'strata-bench-pending-'));
  const db = await StateDb.open(join(dir, 'state'));
  const sm = await StateMachine.open(db);
  const log = await LocalLog.open(join(dir, 'log'), sm);
  const keys = new PendingKeys(db, sm);
  const users = Array.from({ length: USERS }, (_, i) => `user-${String(i).padStart(3, '0')}`);
  const us: number[] = [];
  const read: string[] = [];
  let cursor: string | null = null;
  let n = 0;
  let ns = 0n;
  try {
    for (let t = 0; t < TICKS; t++) {
      for (let k = 0; k < PER_TICK; k++) settle(await log.propose(ingestOf(users[n % USERS], `e${n++}`)));
      const t0 = process.hrtime.bigint();
      let queues: PendingQueue[];
      if (way === 'keys') queues = await keys.queues(cursor, BATCH, BATCH);
      else {
        const found = await pendingUsersFrom(db, cursor, BATCH);
        queues = await Promise.all(found.map(async (user_id) => ({ user_id, entries: await pendingOfUser(db, user_id, BATCH) })));
      }
      ns += process.hrtime.bigint() - t0;
      if (queues.length > 0) cursor = queues[queues.length - 1].user_id;
      read.push(queues.map((q) => `${q.user_id}:${q.entries.map((e) => e.event_id).join(',')}`).join(' '));
      const cmd: ConsolidateUsersCommand = {
        type: 'memory.consolidate_users', at: T0, users: queues.map((q) => ({
          user_id: q.user_id, consumed: q.entries.map((e) => ({ seq: e.seq, event_id: e.event_id })), embedder_id: 'e', method: 'offline',
          units: [], reinforced: [], retired: [], edges: [], dropped: [],
        })),
      };
      settle(await log.propose(cmd));
      if ((t + 1) % EVERY === 0) {
        us.push(Math.round(Number(ns) / 1000 / EVERY));
        ns = 0n;
      }
    }
  } finally {
    await log.close();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return { us, read };
}

async function main(): Promise<void> {
  console.log(`${USERS} users, ${PER_TICK} events a tick, ${TICKS} ticks: µs of backlog reads per tick`);
  const scans = await run('scans');
  const keys = await run('keys');
  if (scans.read.some((r, i) => r !== keys.read[i])) throw new Error('the two ways read different queues');
  console.table(scans.us.map((s, i) => ({ 'consumed events': (i + 1) * EVERY * PER_TICK, 'scans µs/tick': s, 'PendingKeys µs/tick': keys.us[i], ratio: +(keys.us[i] / s).toFixed(3) })));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
