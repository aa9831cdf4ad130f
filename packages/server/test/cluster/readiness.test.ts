/** The readiness rule of /readyz (cluster/readiness.ts), as a load balancer depends on it. */
import { judgeReadiness, Readiness, type ReadinessGroup } from '../../src/cluster/readiness';

const groups = (known: boolean[], serves = known.map(() => true)): ReadinessGroup[] => known.map((leaderKnown, id) => ({ id, serves: serves[id], leaderKnown }));

describe('judgeReadiness', () => {
  it('stays ready while one of four groups elects (no leader known, none within the grace)', () => {
    expect(judgeReadiness(groups([true, false, true, true]), new Map(), 10_000, 5000, false)).toEqual({ ready: true, reason: null });
  });

  it('counts a group whose leader was known within the grace; not beyond it', () => {
    const g = groups([false]);
    expect(judgeReadiness(g, new Map([[0, 6000]]), 10_000, 5000, false).ready).toBe(true);
    expect(judgeReadiness(g, new Map([[0, 4000]]), 10_000, 5000, false)).toMatchObject({ ready: false, reason: expect.stringContaining('0 of the 1') });
  });

  it('needs more than half of the groups it serves, and ignores groups it does not serve', () => {
    expect(judgeReadiness(groups([true, false, false, true]), new Map(), 10_000, 5000, false).ready).toBe(false);
    expect(judgeReadiness(groups([true, false, false, true], [true, false, false, true]), new Map(), 10_000, 5000, false).ready).toBe(true);
  });

  it('strict: a leader known right now for every group served', () => {
    expect(judgeReadiness(groups([true, true, false]), new Map([[2, 9999]]), 10_000, 5000, true)).toMatchObject({ ready: false, reason: expect.stringContaining('shard 2') });
    expect(judgeReadiness(groups([true, true, true]), new Map(), 10_000, 5000, true).ready).toBe(true);
  });

  it('a node that never knew a leader is not ready', () => {
    expect(judgeReadiness(groups([false, false]), new Map(), 10_000, 5000, false).ready).toBe(false);
  });
});

describe('Readiness', () => {
  it('remembers when each group last had a leader, and refuses a node that is closed, stopped by a failure or not a member', () => {
    let now = 1000;
    let known = [true, true];
    let member: string | null = null;
    let open = true;
    let failed: string | null = null;
    const r = new Readiness({ open: () => open, failed: () => failed, notMember: () => member, groups: () => groups(known) }, 5000, () => now);
    expect(r.check().ready).toBe(true);
    known = [false, false];
    now = 4000;
    expect(r.check().ready).toBe(true); // both electing, within the grace
    expect(r.check(true).ready).toBe(false);
    now = 7000;
    expect(r.check().ready).toBe(false);
    known = [true, true];
    member = 'it was removed from the cluster.';
    expect(r.check()).toEqual({ ready: false, reason: 'it was removed from the cluster.' });
    member = null;
    failed = 'it stopped serving after a storage or apply failure.';
    expect(r.check()).toEqual({ ready: false, reason: 'it stopped serving after a storage or apply failure.' });
    failed = null;
    expect(r.check().ready).toBe(true);
    open = false;
    expect(r.check().ready).toBe(false);
  });
});
