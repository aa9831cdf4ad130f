import {
  decayFactor, effectiveImportance, forgettableImportance, importanceAnchorMs, retrievalDelta, type ForgettableUnit,
} from '../../src/retrieval/decay';
import { fuse } from '../../src/retrieval/fusion';
import type { RetrievalUnit } from '../../src/retrieval/types';

const DAY = 86_400_000;
const T0 = '2026-01-01T00:00:00.000Z';
const t0 = Date.parse(T0);
const iso = (ms: number) => new Date(ms).toISOString();

describe('decayFactor', () => {
  it('halves every half-life', () => {
    expect(decayFactor(30 * DAY, 30)).toBe(0.5);
    expect(decayFactor(60 * DAY, 30)).toBe(0.25);
    expect(decayFactor(90 * DAY, 30)).toBe(0.125);
    expect(decayFactor(15 * DAY, 30)).toBeCloseTo(Math.SQRT1_2, 12);
  });

  it('is 1 at age 0, for times in the future, and when decay is off (half-life ≤ 0 or infinite)', () => {
    expect(decayFactor(0, 30)).toBe(1);
    expect(decayFactor(-5 * DAY, 30)).toBe(1);
    expect(decayFactor(400 * DAY, 0)).toBe(1);
    expect(decayFactor(400 * DAY, -1)).toBe(1);
    expect(decayFactor(400 * DAY, Infinity)).toBe(1);
    expect(decayFactor(NaN, 30)).toBe(1);
  });
});

describe('effectiveImportance', () => {
  it('decays stored importance from the transaction time', () => {
    expect(effectiveImportance({ importance: 0.8, transaction_time: T0 }, t0 + 30 * DAY, 30)).toBe(0.4);
    expect(effectiveImportance({ importance: 0.6, transaction_time: T0 }, t0 + 60 * DAY, 30)).toBe(0.15);
    expect(effectiveImportance({ importance: 0.6, transaction_time: T0 }, t0, 30)).toBe(0.6);
  });

  it('restarts from the last retrieval when it is later', () => {
    const unit = { importance: 0.8, transaction_time: T0, last_retrieved_at: iso(t0 + 20 * DAY) };
    expect(importanceAnchorMs(unit)).toBe(t0 + 20 * DAY);
    expect(effectiveImportance(unit, t0 + 50 * DAY, 30)).toBe(0.4);
    // an older last retrieval (clock skew between nodes) does not move the anchor back
    expect(importanceAnchorMs({ ...unit, last_retrieved_at: iso(t0 - DAY) })).toBe(t0);
    expect(importanceAnchorMs({ ...unit, last_retrieved_at: null })).toBe(t0);
  });

  it('clamps stored values to [0, 1] and does not guess without a usable time', () => {
    expect(effectiveImportance({ importance: 1.7, transaction_time: T0 }, t0 + 30 * DAY, 30)).toBe(0.5);
    expect(effectiveImportance({ importance: -1, transaction_time: T0 }, t0, 30)).toBe(0);
    expect(effectiveImportance({ importance: NaN, transaction_time: T0 }, t0, 30)).toBe(0);
    expect(effectiveImportance({ importance: 0.7, transaction_time: 'not a time' }, t0 + 300 * DAY, 30)).toBe(0.7);
  });
});

describe('retrievalDelta', () => {
  it('closes `gain` of the gap to 1 per retrieval, rounded to 3 decimals', () => {
    expect(retrievalDelta(0.4, 1, 0.05)).toBe(0.03); // 1 − 0.6·0.95 = 0.43
    expect(retrievalDelta(0.4, 2, 0.05)).toBe(0.059); // 1 − 0.6·0.95² = 0.4585
    expect(retrievalDelta(0.5, 2, 0.1)).toBe(0.095); // 1 − 0.5·0.81 = 0.595
    expect(retrievalDelta(0.9, 3, 0.05)).toBe(0.014); // 1 − 0.1·0.857375 = 0.914…
  });

  it('never lifts above 1 and is 0 without retrievals or gain', () => {
    expect(retrievalDelta(1, 5, 0.1)).toBe(0);
    expect(retrievalDelta(0.999, 1, 0.05)).toBe(0);
    expect(retrievalDelta(0.4, 0, 0.05)).toBe(0);
    expect(retrievalDelta(0.4, 3, 0)).toBe(0);
    expect(retrievalDelta(0, 1, 1)).toBe(1);
  });
});

describe('forgettableImportance', () => {
  const settings = { below: 0.05, minAgeDays: 30, halfLifeDays: 30 };
  const unit = (extra: Partial<ForgettableUnit> = {}): ForgettableUnit =>
    ({ importance: 0.4, transaction_time: T0, level: 1, org_id: null, retired_at: null, ...extra });

  it('is the effective importance of an old, faded, current L1 unit', () => {
    // 0.4 · 0.5^(120/30) = 0.025 < 0.05
    expect(forgettableImportance(unit(), t0 + 120 * DAY, settings)).toBe(0.025);
  });

  it('is null above the threshold, before the minimum age, for L2, retired and org units', () => {
    expect(forgettableImportance(unit(), t0 + 90 * DAY, settings)).toBeNull(); // 0.05: not below
    expect(forgettableImportance(unit({ importance: 0.01 }), t0 + 29 * DAY, settings)).toBeNull(); // too young
    expect(forgettableImportance(unit({ level: 2 }), t0 + 400 * DAY, settings)).toBeNull();
    expect(forgettableImportance(unit({ retired_at: T0 }), t0 + 400 * DAY, settings)).toBeNull();
    expect(forgettableImportance(unit({ org_id: 'acme' }), t0 + 400 * DAY, settings)).toBeNull();
  });

  it('counts the minimum age from the last retrieval', () => {
    const used = unit({ importance: 0.01, last_retrieved_at: iso(t0 + 100 * DAY) });
    expect(forgettableImportance(used, t0 + 120 * DAY, settings)).toBeNull();
    expect(forgettableImportance(used, t0 + 130 * DAY, settings)).toBe(0.005);
  });
});

describe('fusion with importance decay', () => {
  const u = (id: string, importance: number, extra: Partial<RetrievalUnit> = {}): RetrievalUnit => ({
    id, user_id: 'u', stream_id: 's', org_id: null, agent_id: null, level: 1, memory_type: 'factual', content: `content ${id}`,
    valid_time: T0, transaction_time: T0, importance, subject: null, attribute: null, retired_at: null, superseded_by: null, ...extra,
  });

  it('ranks by effective importance: a recently retrieved unit beats a faded one of higher stored importance', () => {
    const units = new Map([
      ['a', u('a', 0.9)],
      ['b', u('b', 0.5, { last_retrieved_at: iso(t0 + 60 * DAY) })],
    ]);
    const run = (importanceHalfLifeDays?: number) => fuse({
      lists: [{ name: 'text', weight: 1, items: [{ id: 'a' }, { id: 'b' }] }, { name: 'vector', weight: 1, items: [{ id: 'b' }, { id: 'a' }] }],
      getUnit: (id) => units.get(id),
      accept: () => true,
      options: { now: t0 + 60 * DAY, importanceHalfLifeDays, recencyWeight: 0, importanceWeight: 0.2, graphDepth: 0, dedupe: false },
    });
    const stored = run(undefined);
    expect(stored.map((r) => r.unit.id)).toEqual(['a', 'b']);
    expect(stored[0].signals.importance).toBe(0.9);
    const decayed = run(30);
    expect(decayed.map((r) => r.unit.id)).toEqual(['b', 'a']);
    expect(decayed.find((r) => r.unit.id === 'a')!.signals.importance).toBe(0.225); // 0.9 · 0.25
    expect(decayed.find((r) => r.unit.id === 'b')!.signals.importance).toBe(0.5);
  });
});
