import { DEFAULT_INSIGHTS_CADENCE, insightsDueNow } from '../../src/workers/insights-cadence';

describe('insightsDueNow (when a user\'s insights are planned)', () => {
  const c = { quietMs: 1000, intervalMs: 10_000, maxDelayMs: 60_000 };

  it('waits for the user\'s memory to be quiet and the shard drained', () => {
    expect(insightsDueNow({ first: 0, last: 500 }, undefined, 1000, true, c)).toBe(false);
    expect(insightsDueNow({ first: 0, last: 500 }, undefined, 1500, true, c)).toBe(true);
    expect(insightsDueNow({ first: 0, last: 500 }, undefined, 1500, false, c)).toBe(false);
  });

  it('plans a user at most once per interval while it keeps changing', () => {
    expect(insightsDueNow({ first: 20_000, last: 20_000 }, 15_000, 22_000, true, c)).toBe(false);
    expect(insightsDueNow({ first: 20_000, last: 20_000 }, 15_000, 25_000, true, c)).toBe(true);
  });

  it('plans at the latest maxDelayMs after the first change, busy shard or not', () => {
    expect(insightsDueNow({ first: 0, last: 59_999 }, 59_000, 59_999, false, c)).toBe(false);
    expect(insightsDueNow({ first: 0, last: 59_999 }, 59_000, 60_000, false, c)).toBe(true);
  });

  it('has defaults that keep a paused conversation\'s insights close behind it', () => {
    expect(DEFAULT_INSIGHTS_CADENCE.quietMs).toBeLessThan(DEFAULT_INSIGHTS_CADENCE.intervalMs);
    expect(DEFAULT_INSIGHTS_CADENCE.intervalMs).toBeLessThan(DEFAULT_INSIGHTS_CADENCE.maxDelayMs);
  });
});
