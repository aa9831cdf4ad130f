/**
 * Automatic splits and merges (split/auto.ts): the candidates a table and its groups' sizes give, and
 * the scaler's loop over a model of groups made of users, split and merged with the store's own table
 * functions (splitTable, mergeTable, medianPoint): it settles without flapping, keeps one hand-over in
 * flight, waits for sizes reported after the last one ended, and does nothing when turned off.
 */
import pino from 'pino';
import { fnv1a32, freeGroupId, initialRanges, keySpaceEnd, medianPoint, mergeTable, rangeKey, rangesOfGroup, splitTable, type KeyRangeTable } from '@strata/store';
import { AutoScaler, autoCandidates, type AutoSettings } from '../../src/cluster/split/auto';
import { loadConfig } from '../../src/config';

const logger = pino({ level: 'silent' });
const sizes = (o: Record<number, number>) => new Map(Object.entries(o).map(([g, n]) => [Number(g), n]));
const table = (starts: [number, number][]): KeyRangeTable => ({ base: 1, ranges: starts.map(([start, group]) => ({ start, group })) });

describe('autoCandidates', () => {
  const s: AutoSettings = { splitAbove: 1000, mergeBelow: 200 };
  it('splits the groups above the threshold, biggest first, before any merge', () => {
    const t = table([[0, 0], [100, 1], [200, 2], [300, 3]]);
    expect(autoCandidates(t, sizes({ 0: 1500, 1: 50, 2: 2500, 3: 60 }), s)).toEqual([
      { kind: 'split', group: 2, records: 2500 },
      { kind: 'split', group: 0, records: 1500 },
    ]);
  });
  it('merges adjacent pairs both below the floor, the smallest pair first, the bigger group keeping the range; never shard 0', () => {
    const t = table([[0, 0], [100, 1], [200, 2], [300, 3], [400, 4]]);
    expect(autoCandidates(t, sizes({ 0: 10, 1: 20, 2: 150, 3: 30, 4: 199 }), s)).toEqual([
      { kind: 'merge', group: 2, with: 3, records: 180 },
      { kind: 'merge', group: 2, with: 1, records: 170 },
      { kind: 'merge', group: 4, with: 3, records: 229 },
    ].sort((a, b) => a.records - b.records));
    // at the floor is not below it; a group with no reported size is left alone
    expect(autoCandidates(t, sizes({ 1: 200, 2: 10, 3: 10 }), s)).toEqual([{ kind: 'merge', group: 2, with: 3, records: 20 }]);
  });
  it('is off with zero thresholds', () => {
    const t = table([[0, 0], [100, 1], [200, 2]]);
    const big = sizes({ 0: 10 ** 9, 1: 1, 2: 1 });
    expect(autoCandidates(t, big, { splitAbove: 0, mergeBelow: 0 })).toEqual([]);
    expect(autoCandidates(t, big, { splitAbove: 0, mergeBelow: 200 })).toEqual([{ kind: 'merge', group: 1, with: 2, records: 2 }]);
    expect(autoCandidates(t, big, { splitAbove: 1000, mergeBelow: 0 })).toEqual([{ kind: 'split', group: 0, records: 10 ** 9 }]);
  });
});

describe('the configuration', () => {
  it('splits by default, merges only when asked (docs/cluster.md), and refuses a floor above a quarter of the threshold (they would undo each other)', () => {
    const d = loadConfig({ env: {} });
    expect([d.cluster.auto_split_records, d.cluster.auto_merge_records]).toEqual([100_000, 0]);
    const on = loadConfig({ env: { STRATA__CLUSTER__AUTO_MERGE_RECORDS: '20000' } });
    expect(on.cluster.auto_merge_records * 4).toBeLessThanOrEqual(on.cluster.auto_split_records);
    expect(() => loadConfig({ env: { STRATA__CLUSTER__AUTO_SPLIT_RECORDS: '1000', STRATA__CLUSTER__AUTO_MERGE_RECORDS: '251' } })).toThrow(/at most a quarter/);
    const off = loadConfig({ env: { STRATA__CLUSTER__AUTO_SPLIT_RECORDS: '0', STRATA__CLUSTER__AUTO_MERGE_RECORDS: '0' } });
    expect([off.cluster.auto_split_records, off.cluster.auto_merge_records]).toEqual([0, 0]);
  });
});

/**
 * A cluster's groups as users with record counts; the scaler's split/merge begin a hand-over that the
 * model finishes `lag` ticks later (sizes are reported by a round that runs on each tick).
 */
class Model {
  table: KeyRangeTable;
  records = new Map<string, number>();
  inFlight: { done: () => void; at: number } | null = null;
  reportAt = 0;
  reported: Map<number, number> = new Map();
  log: string[] = [];
  splitsOf = new Map<number, number[]>(); // a split's halves

  constructor(users: Map<string, number>) {
    this.table = initialRanges(1);
    this.records = users;
  }

  private readonly keys = new Map<string, number>();
  key(u: string) {
    let k = this.keys.get(u);
    if (k === undefined) this.keys.set(u, (k = rangeKey(fnv1a32(u), this.table.base)));
    return k;
  }

  usersOf(g: number): string[] {
    const r = rangesOfGroup(this.table, g)[0];
    return [...this.records.keys()].filter((u) => r.start <= this.key(u) && this.key(u) < r.end);
  }

  size(g: number) {
    return this.usersOf(g).reduce((n, u) => n + this.records.get(u)!, 0);
  }

  scaler(settings: AutoSettings, lag: number) {
    let now = 0;
    return {
      advance: () => {
        now += 1;
        if (this.inFlight && now - this.inFlight.at >= lag) {
          this.inFlight.done();
          this.inFlight = null;
        }
        // the placement round: sizes of every group with a range, as of now
        this.reported = new Map([...new Set(this.table.ranges.map((r) => r.group))].map((g) => [g, this.size(g)]));
        this.reportAt = now;
      },
      scaler: new AutoScaler({
        settings, logger, now: () => now + 0.5,
        isLeader: () => true,
        busy: () => this.inFlight !== null,
        table: () => this.table,
        sizes: () => ({ at: this.reportAt, records: this.reported }),
        split: async (g) => {
          if (this.inFlight) throw new Error('two hand-overs in flight');
          const r = rangesOfGroup(this.table, g)[0];
          const point = medianPoint(this.usersOf(g).map((u) => this.key(u)), r);
          if (this.usersOf(g).length < 2 || point === null) return false;
          const next = freeGroupId(this.table)!;
          this.inFlight = { at: now, done: () => {
            this.table = splitTable(this.table, { group: g, point, new_group: next });
            this.splitsOf.set(next, [g, next]);
          } };
          this.log.push(`split ${g}`);
          return true;
        },
        merge: async (g, donor) => {
          if (this.inFlight) throw new Error('two hand-overs in flight');
          const halves = this.splitsOf.get(donor) ?? this.splitsOf.get(g);
          if (halves && halves.includes(g) && halves.includes(donor)) throw new Error(`merging back the halves of a split (${g}, ${donor})`);
          this.inFlight = { at: now, done: () => (this.table = mergeTable(this.table, g, donor)) };
          this.log.push(`merge ${donor} into ${g}`);
        },
      }, 1),
    };
  }
}

/** Deterministic pseudo-random numbers (mulberry32). */
function rng(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('AutoScaler', () => {
  it('settles without flapping: writes split the groups, then a purge merges them, one hand-over at a time, never the halves of one split back', async () => {
    for (let seed = 1; seed <= 30; seed++) {
      const random = rng(seed);
      const users = new Map(Array.from({ length: 10 + Math.floor(random() * 200) }, (_, i) => [`u${seed}-${i}`, 1 + Math.floor(random() ** 3 * 400)] as [string, number]));
      const model = new Model(users);
      const settings = { splitAbove: 2000, mergeBelow: 500 };
      const { advance, scaler } = model.scaler(settings, 1 + Math.floor(random() * 4));
      const settle = async () => {
        for (let t = 0; t < 150; t++) {
          advance();
          await scaler.tick();
        }
        return model.log.length;
      };
      const afterWrites = await settle();
      // settled: nothing further decided, however long it runs
      expect(await settle()).toBe(afterWrites);
      expect(model.inFlight).toBeNull();
      const groups = [...new Set(model.table.ranges.map((r) => r.group))];
      for (const g of groups) if (model.size(g) > settings.splitAbove) expect(model.usersOf(g).length).toBe(1); // a hot user stays whole
      const total = [...users.values()].reduce((a, b) => a + b, 0);
      if (total > 4 * settings.splitAbove) expect(groups.length).toBeGreaterThan(2);
      // most users purged: groups fall below the floor and are merged, down to shard 0 and one more
      for (const u of [...users.keys()]) if (random() < 0.9) users.delete(u);
      model.splitsOf.clear(); // with records gone, merging two halves of an earlier split is what should happen
      const beforePurge = model.log.length;
      await settle();
      const merges = model.log.slice(beforePurge);
      expect(merges.every((l) => l.startsWith('merge'))).toBe(true);
      expect(await settle()).toBe(model.log.length);
      const left = [...new Set(model.table.ranges.map((r) => r.group))];
      const ranges = model.table.ranges;
      for (let i = 1; i < ranges.length; i++) {
        const [a, b] = [ranges[i - 1].group, ranges[i].group];
        if (a !== 0 && b !== 0) expect(model.size(a) >= settings.mergeBelow || model.size(b) >= settings.mergeBelow).toBe(true);
      }
      expect(left.length).toBeLessThanOrEqual(groups.length);
      expect(model.table.ranges[0].start).toBe(0);
      expect(model.table.ranges.at(-1)!.start).toBeLessThan(keySpaceEnd(1));
    }
  });

  it('decides nothing while a hand-over is in flight, nor from sizes reported before it ended, nor when not the leader', async () => {
    let busy = true;
    let leader = true;
    let report = { at: 10, records: sizes({ 0: 5000 }) };
    const begun: number[] = [];
    let now = 11;
    const scaler = new AutoScaler({
      settings: { splitAbove: 1000, mergeBelow: 0 }, logger, now: () => now,
      isLeader: () => leader, busy: () => busy, table: () => initialRanges(1), sizes: () => report,
      split: async (g) => (begun.push(g), true), merge: async () => undefined,
    }, 1);
    expect(await scaler.tick()).toBeNull(); // busy at 11
    busy = false;
    now = 12;
    expect(await scaler.tick()).toBeNull(); // the report (10) is older than the hand-over seen at 11
    report = { at: 13, records: sizes({ 0: 5000 }) };
    leader = false;
    now = 14;
    expect(await scaler.tick()).toBeNull(); // not the leader: and a new term waits for a fresher report
    leader = true;
    now = 15;
    expect(await scaler.tick()).toBeNull();
    report = { at: 16, records: sizes({ 0: 5000 }) };
    now = 17;
    expect(await scaler.tick()).toMatchObject({ kind: 'split', group: 0, records: 5000 });
    expect(begun).toEqual([0]);
    expect(scaler.decisions).toHaveLength(1);
    // a round begun while the hand-over ran, after the last tick that saw it busy, may hold a size read
    // before the drop: only a round begun after a tick that found it ended counts
    busy = true;
    now = 20;
    expect(await scaler.tick()).toBeNull();
    report = { at: 20.5, records: sizes({ 0: 5000 }) };
    busy = false;
    now = 21;
    expect(await scaler.tick()).toBeNull();
    now = 22;
    expect(await scaler.tick()).toBeNull();
    report = { at: 21.5, records: sizes({ 0: 5000 }) };
    now = 23;
    expect(await scaler.tick()).toMatchObject({ kind: 'split' });
    expect(begun).toEqual([0, 0]);
    // a group with one user cannot be split: skipped, shown, and the next candidate tried
    const single = new AutoScaler({
      settings: { splitAbove: 1000, mergeBelow: 0 }, logger, now: () => 100,
      isLeader: () => true, busy: () => false, table: () => table([[0, 0], [100, 1]]), sizes: () => ({ at: 99, records: sizes({ 0: 9000, 1: 2000 }) }),
      split: async (g) => g === 1, merge: async () => undefined,
    }, 1);
    expect(await single.tick()).toMatchObject({ kind: 'split', group: 1 });
    expect(single.skipped).toEqual([{ group: 0, reason: expect.stringMatching(/fewer than two users/) }]);
  });

  it('does not start when both thresholds are 0', () => {
    const off = new AutoScaler({
      settings: { splitAbove: 0, mergeBelow: 0 }, logger, isLeader: () => true, busy: () => false, table: () => initialRanges(1), sizes: () => null,
      split: async () => true, merge: async () => undefined,
    }, 1);
    expect(off.enabled).toBe(false);
  });
});
