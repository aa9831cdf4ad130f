/**
 * The store simulator, bounded: three replicas of the real state machine on real LevelDB apply one
 * seeded command stream with crashes, restarts and snapshot installs and must end identical. The long
 * hunt is `npm run sim:store`. The last tests plant faults and show the checks catch them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StateDb, StateMachine, type Command } from '../../src';
import { checkState } from '../../src/sim/check';
import { digestPairs, dumpState, firstDifference } from '../../src/sim/image';
import { passed, runStoreSim, type StoreSimReport } from '../../src/sim/run';
import { COMMAND_KINDS } from '../../src/sim/workload';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'strata-store-sim-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SEEDS = [1, 2, 3];
const STEPS = 150;

describe('store simulator: three replicas, one command stream', () => {
  const reports: StoreSimReport[] = [];

  test.each(SEEDS)('seed %i: identical state images, answers and effects, consistent indexes', async (seed) => {
    const r = await runStoreSim({ seed, steps: STEPS, dir: join(dir, `s${seed}`), checkEvery: 50 });
    reports.push(r);
    expect(r.divergence).toBeNull();
    expect(r.answer_mismatch).toBeNull();
    expect(r.violations).toEqual([]);
    expect(passed(r)).toBe(true);
    expect(r.checkpoints).toBeGreaterThanOrEqual(STEPS / 50);
  });

  test('the seeds cover every command type and every fault', () => {
    const seen = new Set(reports.flatMap((r) => Object.keys(r.commands)));
    for (const kind of COMMAND_KINDS) expect(seen).toContain(kind);
    const sum = (f: (r: StoreSimReport) => number) => reports.reduce((s, r) => s + f(r), 0);
    expect(sum((r) => r.crashes)).toBeGreaterThan(0);
    expect(sum((r) => r.restarts)).toBeGreaterThan(0);
    expect(sum((r) => r.snapshot_installs)).toBeGreaterThan(0);
    expect(sum((r) => r.torn_installs)).toBeGreaterThan(0);
    expect(sum((r) => r.term_changes)).toBeGreaterThan(0);
    // deterministic refusals and stale compare-and-sets are in the stream too, not only happy paths
    expect(sum((r) => r.refused)).toBeGreaterThan(0);
    expect(sum((r) => r.stale)).toBeGreaterThan(0);
  });

  test('a seed replays: the same seed gives the same final state', async () => {
    const a = await runStoreSim({ seed: 7, steps: 60, dir: join(dir, 'r1'), checkEvery: 60 });
    const b = await runStoreSim({ seed: 7, steps: 60, dir: join(dir, 'r2'), checkEvery: 60 });
    expect(passed(a) && passed(b)).toBe(true);
    expect(b.digest).toBe(a.digest);
    expect(b.commands).toEqual(a.commands);
  });
});

describe('the checks catch what they are for', () => {
  test('a replica whose apply sees another clock diverges, and the first differing key is named', async () => {
    const r = await runStoreSim({ seed: 1, steps: 150, dir: join(dir, 'plant'), checkEvery: 25, plant: 'clock' });
    expect(passed(r)).toBe(false);
    // the planted replica (2) differs from the two others: either in its state image or in an answer
    if (r.divergence) {
      expect(r.divergence.digests[0]).toBe(r.divergence.digests[1]);
      expect(r.divergence.digests[2]).not.toBe(r.divergence.digests[0]);
      const first = r.divergence.first!;
      expect(first.at[2].key).toBe(first.at[0].key);
      expect(first.at[2].value).not.toBe(first.at[0].value);
    } else {
      expect(r.answer_mismatch).not.toBeNull();
    }
  });

  test('firstDifference names the first key where dumps part, and digests differ', async () => {
    const dbs = await Promise.all([0, 1].map((i) => StateDb.open(join(dir, `diff${i}`))));
    await dbs[0].meta.put('a', 1);
    await dbs[1].meta.put('a', 1);
    await dbs[0].meta.put('b', 2);
    await dbs[1].meta.put('b', 3);
    await dbs[1].meta.put('c', 4);
    const dumps = await Promise.all(dbs.map(dumpState));
    expect(digestPairs(dumps[0])).not.toBe(digestPairs(dumps[1]));
    const diff = firstDifference(dumps)!;
    expect(diff.position).toBe(1);
    expect(diff.at.map((p) => `${p.key}=${p.value}`)).toEqual(['!meta!b=2', '!meta!b=3']);
    await Promise.all(dbs.map((db) => db.close()));
  });

  test('checkState reports an edge left behind without its adjacency, and a counter that disagrees', async () => {
    const db = await StateDb.open(join(dir, 'check'));
    const sm = await StateMachine.open(db);
    expect(await checkState(db)).toEqual([]);
    const T = '2026-01-01T00:00:00.000Z';
    const ingest: Command = {
      type: 'events.ingest', user_id: 'u', stream_id: 's', at: T, idempotency: null, assets: [],
      events: [{ event_id: 'e1', user_id: 'u', stream_id: 's', content: 'x', content_type: 'text', org_id: null, agent_id: null, role: null, level: null, parent_id: null, task_status: null, task_progress: null, valid_time: T, transaction_time: T, metadata: null, assets: [] }],
    };
    await sm.apply(1, ingest);
    expect(await checkState(db)).toEqual([]);
    // Writes around apply, as a buggy handler would leave them.
    await db.edges.put('u\x00ed', { edge_id: 'ed', user_id: 'u', source_id: 'a', target_id: 'b', relation: 'RelatedTo', weight: 1, created_at: T });
    await db.meta.put('counter\x00pending', 5);
    const problems = await checkState(db);
    expect(problems).toContain('counter pending is 5 but 1 records exist');
    expect(problems).toContain('edge ed touches missing unit a');
    expect(problems).toContain('edge ed: adjacency under a missing or wrong');
    await db.close();
  });
});
