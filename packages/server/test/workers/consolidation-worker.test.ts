import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { HashingEmbedder } from '@strata/memory';
import type { Embedder } from '@strata/memory';
import {
  LocalLog, StateDb, StateMachine, allUnits, listDropped, listGoals, listEvents, listFailed, pendingSummary, reflectionsDue, userVectors, type IngestCommand,
  type MemoryUnit,
} from '@strata/store';
import { Metrics } from '../../src/metrics';
import { ConsolidationWorker, type TickReport } from '../../src/workers/consolidation';

const T0 = Date.parse('2026-03-01T10:00:00.000Z');
const S1 = '11111111-1111-4111-8111-111111111111';
const S2 = '22222222-2222-4222-8222-222222222222';

let seq = 0;
function ingest(user: string, stream: string, contents: string[], at = T0): IngestCommand {
  const iso = new Date(at).toISOString();
  return {
    type: 'events.ingest', user_id: user, stream_id: stream, at: iso, idempotency: null, assets: [],
    events: contents.map((content) => ({
      event_id: `ev-${++seq}`, user_id: user, stream_id: stream, content, content_type: 'text', org_id: null, agent_id: null, role: 'user',
      level: null, parent_id: null, task_status: null, task_progress: null, valid_time: iso, transaction_time: iso, metadata: null, assets: [],
    })),
  };
}

/** An embedder that fails for texts with a marker: a provider outage for one event. */
class PoisonEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions: number;
  calls = 0;
  constructor(private readonly inner: Embedder, private readonly marker: string) {
    this.id = inner.id;
    this.dimensions = inner.dimensions;
  }
  async embed(texts: string[]): Promise<Float32Array[]> {
    this.calls++;
    if (texts.some((t) => t.includes(this.marker))) throw new Error('embedding endpoint refused the text');
    return this.inner.embed(texts);
  }
}

describe('ConsolidationWorker (real LevelDB and log, hashing embedder, virtual clock)', () => {
  let dir: string;
  let db: StateDb;
  let log: LocalLog;
  let sm: StateMachine;
  let clock: number;
  let ids: number;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-worker-'));
    db = await StateDb.open(join(dir, 'state'));
    sm = await StateMachine.open(db);
    log = await LocalLog.open(join(dir, 'log'), sm);
    clock = T0 + 1000;
    ids = 0;
  });
  afterEach(async () => {
    await log.close();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function worker(options: { embedder?: Embedder; batchSize?: number; intervalMs?: number } = {}) {
    return new ConsolidationWorker({
      shard: { id: 0, db, sm, log }, embedder: options.embedder ?? new HashingEmbedder(), logger: pino({ level: 'silent' }),
      intervalMs: options.intervalMs ?? 10, batchSize: options.batchSize ?? 16, now: () => clock, reflectionCheckMs: 0,
      newId: () => `00000000-0000-4000-8000-${String(++ids).padStart(12, '0')}`,
    });
  }

  /** Ticks until nothing is pending (bounded), advancing the clock past any backoff. */
  async function drain(w: ConsolidationWorker): Promise<TickReport[]> {
    const reports: TickReport[] = [];
    for (let i = 0; i < 50 && (await db.counter('pending')) > 0; i++) {
      reports.push(await w.tick());
      clock += 15_000;
    }
    expect(await db.counter('pending')).toBe(0);
    return reports;
  }

  async function coverage(user: string, stream: string) {
    const units = await allUnits(db, user);
    const referenced = new Set(units.flatMap((u) => u.references));
    const dropped = new Set((await listDropped(db, user)).map((d) => d.event_id));
    const events = (await listEvents(db, user, stream, null, 1000)).events;
    return events.map((e) => [e.content, referenced.has(e.event_id), dropped.has(e.event_id)]);
  }

  it('consolidates a correction: the old fact is retired and superseded, every event is covered once', async () => {
    await log.propose(ingest('ana', S1, ['I live in Berlin.', 'thanks!']));
    const w = worker();
    const [first] = await drain(w);
    expect(first).toMatchObject({ batches: 1, events: 2, units: 1, dropped: 1, failed: 0, errors: 0 });
    clock += 60_000;
    await log.propose(ingest('ana', S1, ['I moved to Lisbon.'], clock));
    await drain(w);
    const units = await allUnits(db, 'ana');
    const l1 = units.filter((u) => u.level === 1);
    const berlin = l1.find((u) => /Berlin/.test(u.content)) as MemoryUnit;
    const lisbon = l1.find((u) => /Lisbon/.test(u.content)) as MemoryUnit;
    expect(berlin).toMatchObject({ retired_reason: 'superseded', superseded_by: lisbon.id });
    expect(lisbon.retired_at).toBeNull();
    expect(await coverage('ana', S1)).toEqual([['I live in Berlin.', true, false], ['thanks!', false, true], ['I moved to Lisbon.', true, false]]);
    expect(await pendingSummary(db)).toMatchObject({ pending: 0, failed: 0 });
    expect(await db.counter('units')).toBe(units.length);
  });

  it('serves a small user in the first tick even behind a large backlog', async () => {
    await log.propose(ingest('big', S1, Array.from({ length: 40 }, (_, i) => `Fact number ${i}: the parcel ${i} went to warehouse ${i * 7}.`)));
    await log.propose(ingest('small', S2, ['My dog is called Bruno.']));
    const w = worker({ batchSize: 4 });
    const report = await w.tick();
    expect(report.events).toBe(4);
    expect((await allUnits(db, 'small')).map((u) => u.content)).toEqual(['My dog is called Bruno.']);
    expect(await db.counter('pending')).toBe(37);
    await drain(w);
  });

  it('retries a failing event alone with backoff and gives up on it after 3 attempts; its neighbours are consolidated', async () => {
    await log.propose(ingest('bo', S1, ['I work at Siemens.', 'My sister POISON lives in Oslo.', 'I drive a red Volvo.']));
    const embedder = new PoisonEmbedder(new HashingEmbedder(), 'POISON');
    const reports = await drain(worker({ embedder }));
    expect(reports.reduce((n, r) => n + r.failed, 0)).toBe(1);
    expect(reports.reduce((n, r) => n + r.errors, 0)).toBe(3); // the batch, then the event alone twice
    const failed = await listFailed(db, 10);
    expect(failed.map((f) => [f.user_id, f.attempts, f.error])).toEqual([['bo', 3, 'embedding endpoint refused the text']]);
    expect(await pendingSummary(db)).toMatchObject({ pending: 0, failed: 1 });
    expect((await allUnits(db, 'bo')).map((u) => u.content).sort()).toEqual(['I drive a red Volvo.', 'I work at Siemens.']);
  });

  it('reflects on a stream once it has been quiet for 30 minutes, then clears its mark', async () => {
    await log.propose(ingest('cy', S1, ['I booked a flight to Tokyo for May.', 'My budget for the trip is 3000 euros.']));
    const w = worker();
    await drain(w);
    expect(await reflectionsDue(db, 10)).toHaveLength(1);
    expect((await allUnits(db, 'cy')).filter((u) => u.level === 2)).toEqual([]);
    clock = T0 + 31 * 60_000;
    const report = await w.tick();
    expect(report.reflections).toBe(1);
    const [reflection] = (await allUnits(db, 'cy')).filter((u) => u.level === 2);
    expect(reflection).toMatchObject({ subject: `stream:${S1}`, attribute: 'reflection', stream_id: S1 });
    expect(reflection.content).toMatch(/^Conversation of user on 2026-03-01 .*2 messages\./);
    expect(await reflectionsDue(db, 10)).toEqual([]);
    expect((await w.tick()).reflections).toBe(0);
  });

  it('also drains pending entries written before the per-user index existed (older data directories)', async () => {
    await log.propose(ingest('old', S1, ['I live in Rome.', 'My cat is called Nero.']));
    // What an older build left behind: pending entries without their per-user index entries.
    for await (const key of db.pendingByUser.keys()) await db.pendingByUser.del(key);
    await log.propose(ingest('new', S2, ['I play the cello.']));
    const w = worker();
    expect(await w.tick()).toMatchObject({ events: 2, batches: 1 });
    expect((await allUnits(db, 'old')).map((u) => u.content).sort()).toEqual(['I live in Rome.', 'My cat is called Nero.']);
    await drain(w);
    expect((await allUnits(db, 'new')).map((u) => u.content)).toEqual(['I play the cello.']);
  });

  it('stops cleanly: stop() waits for the tick in flight, and no proposal reaches a closed log', async () => {
    await log.propose(ingest('dee', S1, Array.from({ length: 30 }, (_, i) => `Note ${i}: remember the code ${1000 + i}.`)));
    const w = worker({ batchSize: 8 });
    w.start();
    for (let i = 0; i < 200 && (await db.counter('pending')) === 30; i++) await new Promise((r) => setTimeout(r, 5));
    await w.stop();
    const left = await db.counter('pending');
    expect(left).toBeLessThan(30);
    // Nothing was half-written: counters match the records.
    expect(await db.counter('units')).toBe((await allUnits(db, 'dee')).length);
    expect((await allUnits(db, 'dee')).flatMap((u) => u.references).length + (await listDropped(db, 'dee')).length).toBe(30 - left);
  });

  it('plans a trickling user\'s insights on a cadence, not after every batch; a paused one soon after it pauses', async () => {
    const w = worker();
    let planned = 0;
    // 35 batches of one event, 2 s apart (the shard drained between them, the user never quiet for 1 s): a live trickle
    for (let i = 0; i < 35; i++) {
      await log.propose(ingest('fay', S1, [`Day ${i}: I practised the piano for ${20 + i} minutes.`], clock));
      planned += (await w.tick()).l2_planned;
      clock += 2000;
    }
    // 70 s of changes: planned once, when 60 s had passed since the first change
    expect(planned).toBe(1);
    // the conversation pauses: planned once its memory has been quiet for a second, then not again
    clock += 10_000;
    expect((await w.tick()).l2_planned).toBe(1);
    clock += 10_000;
    expect((await w.tick()).l2_planned).toBe(0);
  });

  it('checks for pending entries without their per-user index once, not at every tick', async () => {
    let scans = 0;
    const iterator = db.pending.iterator.bind(db.pending);
    db.pending.iterator = ((...args: Parameters<typeof iterator>) => { scans++; return iterator(...args); }) as typeof db.pending.iterator;
    const w = worker();
    for (let i = 0; i < 5; i++) {
      await log.propose(ingest('gus', S1, [`Note ${i}: the gate code is ${4000 + i}.`], clock));
      await w.tick();
    }
    expect(scans).toBe(1);
    expect(await db.counter('pending')).toBe(0);
  });

  it('polls idle by one counter: no backlog key is read while nothing is pending; new events are read by key, not by a scan', async () => {
    const w = worker();
    await log.propose(ingest('lou', S1, ['I keep bees on the roof.']));
    await drain(w);
    let scans = 0;
    for (const sub of [db.pending, db.pendingByUser]) {
      const keys = sub.keys.bind(sub);
      const iterator = sub.iterator.bind(sub);
      sub.keys = ((...args: Parameters<typeof keys>) => { scans++; return keys(...args); }) as typeof sub.keys;
      sub.iterator = ((...args: Parameters<typeof iterator>) => { scans++; return iterator(...args); }) as typeof sub.iterator;
    }
    for (let i = 0; i < 5; i++) expect((await w.tick()).batches).toBe(0);
    expect(scans).toBe(0);
    await log.propose(ingest('lou', S1, ['The bees made 4 kg of honey.']));
    expect((await w.tick()).events).toBe(1);
    // The backlog's keys are known (PendingKeys, built by the first drain's scan): no walk through the
    // consumed entries' tombstones.
    expect(scans).toBe(0);
  });

  it('reads the user\'s goals and tasks only for a batch that may plan some', async () => {
    let reads = 0;
    const iterator = db.l3ByEvent.iterator.bind(db.l3ByEvent);
    db.l3ByEvent.iterator = ((...args: Parameters<typeof iterator>) => { reads++; return iterator(...args); }) as typeof db.l3ByEvent.iterator;
    const w = worker();
    await log.propose(ingest('hal', S1, ['I had pasta for lunch.', 'The weather in Oslo was grey today.']));
    await drain(w);
    expect(reads).toBe(0);
    await log.propose(ingest('hal', S1, ['My goal is to run a marathon: 1. buy running shoes 2. train three times a week 3. sign up for the race']));
    await drain(w);
    expect(reads).toBe(1);
    expect((await listGoals(db, 'hal')).map((g) => g.content)).toEqual([expect.stringMatching(/marathon/)]);
  });

  it('woken by a trickle, waits a moment so the events arriving meanwhile share one tick', async () => {
    const w = new ConsolidationWorker({
      shard: { id: 0, db, sm, log }, embedder: new HashingEmbedder(), logger: pino({ level: 'silent' }),
      intervalMs: 3_600_000, batchSize: 16, now: () => clock, gatherMs: 2000,
    });
    const tick = w.tick.bind(w);
    const working: number[] = [];
    w.tick = async () => {
      const report = await tick();
      if (report.batches > 0) working.push(report.events);
      return report;
    };
    w.start();
    try {
      for (const user of ['ivy', 'jo', 'kai']) {
        await log.propose(ingest(user, S1, [`${user} adopted a cat named Pixel.`]));
        await new Promise((r) => setTimeout(r, 50));
      }
      for (let i = 0; i < 2000 && (await db.counter('pending')) > 0; i++) await new Promise((r) => setTimeout(r, 5));
      expect(await db.counter('pending')).toBe(0);
    } finally {
      await w.stop();
    }
    // read after stop, which waits for the tick in flight: the pending counter reaches 0 when the tick's
    // command applies, before the tick itself returns and reports (asserted before, it failed 1 run in 3)
    expect(working).toEqual([3]);
  });

  it('ticks as soon as a full batch is pending, without waiting out the gather window; the lag of each batch is measured', async () => {
    const metrics = new Metrics();
    // An hour's window: only a full batch (4 events) can start a tick before the test times out.
    const w = new ConsolidationWorker({
      shard: { id: 0, db, sm, log }, embedder: new HashingEmbedder(), logger: pino({ level: 'silent' }),
      intervalMs: 3_600_000, batchSize: 4, now: () => clock, gatherMs: 3_600_000, metrics,
    });
    const tick = w.tick.bind(w);
    const working: number[] = [];
    w.tick = async () => {
      const report = await tick();
      working.push(report.events);
      return report;
    };
    w.start();
    try {
      for (const user of ['lea', 'max', 'noa']) await log.propose(ingest(user, S1, [`${user} moved to Lisbon last spring.`]));
      await new Promise((r) => setTimeout(r, 50));
      expect(working).toEqual([]); // three of four: the partial batch waits
      await log.propose(ingest('oli', S1, ['oli moved to Lisbon last spring.']));
      for (let i = 0; i < 2000 && (await db.counter('pending')) > 0; i++) await new Promise((r) => setTimeout(r, 5));
      expect(await db.counter('pending')).toBe(0);
    } finally {
      await w.stop();
    }
    expect(working).toEqual([4]);
    // the four events' batches, each observed once: accepted at T0, committed at T0 + 1 s (the virtual clock)
    const lag = (await metrics.registry.getSingleMetricAsString('strata_consolidation_lag_seconds')).split('\n');
    expect(lag).toContain('strata_consolidation_lag_seconds_count{shard="0"} 4');
    expect(lag).toContain('strata_consolidation_lag_seconds_bucket{le="1",shard="0"} 4');
    expect(lag).toContain('strata_consolidation_lag_seconds_bucket{le="0.5",shard="0"} 0');
  });

  it('a full batch whose events all wait out a retry is not spun on: after a tick that found no work, the next waits for the gather window', async () => {
    // A tick that always finds the same backlog and never consumes it: a full batch in retry backoff.
    const w = new ConsolidationWorker({
      shard: { id: 0, db, sm, log }, embedder: new HashingEmbedder(), logger: pino({ level: 'silent' }),
      intervalMs: 3_600_000, batchSize: 2, now: () => clock, gatherMs: 3_600_000,
    });
    let ticks = 0;
    w.tick = async () => {
      ticks++;
      return { batches: 0, events: 0, units: 0, dropped: 0, failed: 0, insights: 0, reflections: 0, l2_planned: 0, errors: 0 };
    };
    w.start();
    try {
      await log.propose(ingest('pia', S1, ['pia plays chess.', 'pia plays go.']));
      for (let i = 0; i < 2000 && ticks === 0; i++) await new Promise((r) => setTimeout(r, 5));
      await new Promise((r) => setTimeout(r, 100));
    } finally {
      await w.stop();
    }
    // the full batch started one tick at once; finding no work, the next waits for the window
    expect(ticks).toBe(1);
  });

  it('is woken by new events instead of sleeping out its idle interval', async () => {
    const w = worker({ intervalMs: 3_600_000 }); // asleep for an hour after start
    w.start();
    try {
      await log.propose(ingest('eve', S1, ['I play the cello.', 'My flat is in Porto.']));
      for (let i = 0; i < 2000 && (await db.counter('pending')) > 0; i++) await new Promise((r) => setTimeout(r, 5));
      expect(await db.counter('pending')).toBe(0);
      expect((await allUnits(db, 'eve')).map((u) => u.content).sort()).toEqual(['I play the cello.', 'My flat is in Porto.']);
    } finally {
      await w.stop();
    }
  });
  it('proposes a tick\'s small batches in one memory.consolidate_users, with the units and vectors they get alone', async () => {
    const lines = {
      ann: ['I live in Porto.', 'My sister is called Rita.'],
      bob: ['I play the cello on Sundays.'],
      cy: ['The deadline is on May 3rd.', 'Our team uses Rust.', 'I prefer tea to coffee.'],
      big: Array.from({ length: 12 }, (_, i) => `Parcel ${i} went to warehouse ${i * 7} on Monday.`),
    };
    /** Each user's units as content and vector bits (ids and times aside), after one tick. */
    async function run(node: { db: StateDb; sm: StateMachine; log: LocalLog }, combineMaxEvents: number) {
      for (const [user, contents] of Object.entries(lines)) await node.log.propose(ingest(user, S1, contents));
      const types: string[] = [];
      node.sm.onApplied((_index, command) => types.push(command.type));
      let n = 0;
      const w = new ConsolidationWorker({
        shard: { id: 0, ...node }, embedder: new HashingEmbedder(), logger: pino({ level: 'silent' }), intervalMs: 10, batchSize: 32,
        now: () => clock, reflectionCheckMs: 0, newId: () => `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`, combineMaxEvents,
      });
      const report = await w.tick();
      const units: Record<string, [string, number[]][]> = {};
      for (const user of Object.keys(lines)) {
        const vectors = await userVectors(node.db, user);
        units[user] = (await allUnits(node.db, user))
          .map((u): [string, number[]] => [u.content, Array.from(new Uint32Array(Float32Array.from(vectors.get(u.id)!.vector).buffer))])
          .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      }
      return { report, units, types: types.filter((t) => t.startsWith('memory.consolidate')).sort(), pending: await node.db.counter('pending') };
    }
    const together = await run({ db, sm, log }, 8);
    const apartDir = join(dir, 'apart');
    const apartDb = await StateDb.open(join(apartDir, 'state'));
    const apartSm = await StateMachine.open(apartDb);
    const apartLog = await LocalLog.open(join(apartDir, 'log'), apartSm);
    try {
      const apart = await run({ db: apartDb, sm: apartSm, log: apartLog }, 0);
      // the three small batches in one command, the large one alone; one command per user without combining
      expect(together.types).toEqual(['memory.consolidate', 'memory.consolidate_users']);
      expect(apart.types).toEqual(['memory.consolidate', 'memory.consolidate', 'memory.consolidate', 'memory.consolidate']);
      expect(together.report).toMatchObject({ batches: 4, events: 18, errors: 0 });
      expect(together.report).toEqual(apart.report);
      expect(together.pending).toBe(0);
      expect(together.units).toEqual(apart.units);
      expect(Object.values(together.units).every((u) => u.length > 0)).toBe(true);
    } finally {
      await apartLog.close();
      await apartDb.close();
    }
  });
});
