/**
 * The searches and fusion of concurrent retrievals take turns of the event loop (loop-turns.ts), so a
 * timer or a socket (a Raft heartbeat, /livez) waits for about the turn's budget plus one query, not for
 * all of the queries that finished reading together.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { HashingEmbedder } from '@strata/memory';
import { LocalLog, StateDb, StateMachine, settle, type MemoryUnit } from '@strata/store';
import { loadConfig } from '../../src/config';
import { DerivedIndexes } from '../../src/indexes/derived';
import { LoopTurns } from '../../src/indexes/loop-turns';
import { RetrievalService } from '../../src/indexes/retrieval-service';
import { ShardRouter } from '../../src/shards';

const T0 = '2026-01-01T00:00:00.000Z';
const STREAM = '00000000-0000-4000-8000-000000000001';

/** Counts turns of the event loop (an immediate re-armed from its own callback runs once per turn) until stopped. */
function turnCounter(): { now: () => number; stop: () => void } {
  let turns = 0;
  let on = true;
  const tick = () => {
    turns++;
    if (on) setImmediate(tick);
  };
  setImmediate(tick);
  return { now: () => turns, stop: () => (on = false) };
}

describe('LoopTurns', () => {
  it('with no budget, gives the turn to one holder per turn of the event loop, first come first served', async () => {
    const turns = new LoopTurns(0);
    const counter = turnCounter();
    const seen: [number, number][] = [];
    await Promise.all([0, 1, 2, 3, 4].map(async (i) => {
      const release = await turns.enter();
      seen.push([i, counter.now()]);
      release();
    }));
    counter.stop();
    expect(seen.map(([i]) => i)).toEqual([0, 1, 2, 3, 4]);
    expect(new Set(seen.map(([, t]) => t)).size).toBe(5);
    expect(turns.queued).toBe(0);
  });

  it('within its budget, lets holders follow each other in the same turn; past it, the loop turns first', async () => {
    const counter = turnCounter();
    const quick = new LoopTurns(60_000);
    const at: number[] = [];
    await Promise.all([0, 1, 2, 3].map(async () => {
      const release = await quick.enter();
      at.push(counter.now());
      release();
    }));
    expect(new Set(at).size).toBe(1);

    const small = new LoopTurns(2);
    const order: string[] = [];
    await Promise.all([0, 1].map(async (i) => {
      const release = await small.enter();
      order.push(`holder ${i}`);
      if (i === 0) setTimeout(() => order.push('timer'), 0); // due while holder 0 runs
      const until = performance.now() + 5; // a query's synchronous part, over the budget
      while (performance.now() < until);
      release();
    }));
    counter.stop();
    expect(order).toEqual(['holder 0', 'timer', 'holder 1']);
  });

  it('holds one holder at a time, across awaits, until it gives the turn back', async () => {
    const turns = new LoopTurns(60_000);
    let inside = 0;
    let most = 0;
    await Promise.all([0, 1, 2].map(async () => {
      const release = await turns.enter();
      inside++;
      most = Math.max(most, inside);
      await new Promise((r) => setTimeout(r, 2));
      inside--;
      release();
      release(); // a second call changes nothing
    }));
    expect(most).toBe(1);
  });
});

describe('concurrent retrievals take turns', () => {
  let dir: string;
  let db: StateDb;
  let log: LocalLog;
  let service: RetrievalService;
  const ranAt: number[] = [];
  let counter: ReturnType<typeof turnCounter> | null = null;
  const embedder = new HashingEmbedder();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-loop-turns-'));
    db = await StateDb.open(join(dir, 'state'));
    const sm = await StateMachine.open(db);
    log = await LocalLog.open(join(dir, 'log'), sm);
    const indexes = new DerivedIndexes({ db, embedder, logger: pino({ level: 'silent' }) });
    indexes.attach(sm);
    service = new RetrievalService({
      shards: new ShardRouter([{ id: 0, db, sm, log }]), indexes: new Map([[0, indexes]]), embedder, config: loadConfig({ env: {} }), turnBudgetMs: 0,
      // read once per retrieval, in its turn, right before its pipeline runs: the turn it ran in (its
      // whole records are read after the turn is given back, so onRetrieved comes later)
      now: () => {
        if (counter) ranAt.push(counter.now());
        return Date.now();
      },
    });
    const contents = ['kites fly over the hill', 'the blue kite broke', 'a red kite in the park', 'we flew kites at the beach'];
    const vectors = await embedder.embed(contents);
    const units = contents.map((content, i) => ({
      unit: {
        id: `00000000-0000-4000-8000-00000000000${i}`, user_id: 'kim', stream_id: STREAM, org_id: null, agent_id: null, level: 1, memory_type: 'factual',
        content, keywords: [], speaker: null, valid_time: T0, transaction_time: T0, references: [], assets: [], importance: 0.5, subject: null,
        attribute: null, retired_at: null, retired_reason: null, superseded_by: null,
      } satisfies MemoryUnit,
      vector: [...vectors[i]],
    }));
    settle(await log.propose({ type: 'memory.consolidate', user_id: 'kim', at: T0, consumed: [], embedder_id: embedder.id, method: 'offline', units, reinforced: [], retired: [], edges: [], dropped: [] }));
    await service.retrieve('kim', STREAM, { query: 'kite' }); // build the index
  });
  afterAll(async () => {
    await log.close();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('with no budget, runs the pipelines of eight concurrent retrievals in eight different turns', async () => {
    counter = turnCounter();
    const answers = await Promise.all(Array.from({ length: 8 }, () => service.retrieve('kim', STREAM, { query: 'blue kite', include_pending: false })));
    counter.stop();
    expect(answers.every((a) => a.results.length > 0)).toBe(true);
    expect(ranAt).toHaveLength(8);
    expect(new Set(ranAt).size).toBe(8);
  });
});
