/**
 * The placement planner (issue 18) as properties: every step it emits is safe against the state it is
 * applied to (under arbitrary crashes, not only those RF 3 promises to survive), it is deterministic
 * and leaves its input alone, and from any placement with all nodes up it converges to a balanced one
 * and then stays put. Then the simulator: small clusters keep every invariant, and its checker reports
 * a planted planner bug (removing a member before its replacement has caught up).
 */
import fc from 'fast-check';
import { seededRandom } from '@strata/raft';
import { initialPlacement } from '../../src/cluster/placement/initial';
import { applyStep, defaultTolerance, majority, type GroupView, type NodeId, type NodeStatus, type Step } from '../../src/cluster/placement/model';
import { leaderCounts, plan, projectedLoad, type PlannerOptions } from '../../src/cluster/placement/planner';
import { runPlacementSim } from '../../src/cluster/placement/sim';

type State = { groups: GroupView[]; nodes: NodeStatus[]; now: number };

const DEAD_AFTER = 10;
const RUNS = { numRuns: 60, seed: 18 };

function fresh(groups: number, nodes: number, rf: number): State {
  const ids = Array.from({ length: nodes }, (_, i) => i + 1);
  return {
    groups: initialPlacement(groups, ids, rf).map((g) => ({ ...g, lagging: [] })),
    nodes: ids.map((id) => ({ id, down_since: null, draining: false })),
    now: 0,
  };
}

/** The group after a committed step, with what the leader observes kept up to date (a new learner lags). */
function apply(g: GroupView, step: Step): GroupView {
  const next = applyStep(g, step);
  let lagging = g.lagging.filter((n) => next.voters.includes(n) || next.learners.includes(n));
  if (step.kind === 'add_learner') lagging = [...lagging, step.node];
  return { ...next, lagging, bytes: g.bytes };
}

function checker(state: State, rf: number, budget: number) {
  const status = new Map(state.nodes.map((n) => [n.id, n]));
  const up = (n: NodeId) => status.get(n)?.down_since === null;
  const current = (g: GroupView, n: NodeId) => up(n) && !g.lagging.includes(n);
  const live = (g: GroupView, except: NodeId | null = null) => g.voters.filter((v) => v !== except && current(g, v)).length;
  const quorate = (g: GroupView) => live(g) >= majority(g.voters.length);
  /** Throws naming the rule when `step` is unsafe for `g`; returns the group after it. */
  return (g: GroupView, step: Step, inflight: number): GroupView => {
    expect(g.leader !== null && current(g, g.leader) && quorate(g)).toBe(true); // it can commit
    switch (step.kind) {
      case 'add_learner':
        expect(up(step.node) && !status.get(step.node)!.draining).toBe(true);
        expect(g.voters.includes(step.node) || g.learners.includes(step.node)).toBe(false);
        expect(g.move).toBeNull();
        expect(inflight).toBeLessThan(budget);
        break;
      case 'promote':
        expect(g.learners.includes(step.node) && current(g, step.node)).toBe(true);
        break;
      case 'remove':
        if (g.voters.includes(step.node)) {
          expect(live(g, step.node)).toBeGreaterThanOrEqual(rf); // the replacement is a caught-up voter already
          expect(g.leader).not.toBe(step.node); // leadership is handed over first
        } else expect(g.learners.includes(step.node)).toBe(true);
        break;
      case 'transfer_leader':
        expect(g.voters.includes(step.to) && current(g, step.to)).toBe(true);
        break;
    }
    const next = apply(g, step);
    expect(quorate(next)).toBe(true); // never below a majority of live caught-up voters
    return next;
  };
}

/** Applies one planner run to the state, checking each step against the state it meets. */
function applyChecked(state: State, steps: Step[], o: Required<Pick<PlannerOptions, 'rf' | 'budget'>>): void {
  const check = checker(state, o.rf, o.budget);
  const seen = new Set<number>();
  let inflight = state.groups.filter((g) => g.move).length;
  for (const step of steps) {
    expect(seen.has(step.group)).toBe(false); // one change per group at a time
    seen.add(step.group);
    const i = state.groups.findIndex((g) => g.id === step.group);
    const before = state.groups[i];
    state.groups[i] = check(before, step, inflight);
    if (step.kind === 'add_learner') inflight++;
  }
}

describe('initial placement', () => {
  it('spreads replicas within one per node, distinct members, deterministically (64 groups on 5 nodes, and arbitrary sizes)', () => {
    const p = initialPlacement(64, [5, 1, 4, 2, 3], 3);
    expect(p).toEqual(initialPlacement(64, [1, 2, 3, 4, 5], 3));
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 200 }), fc.integer({ min: 1, max: 30 }), fc.integer({ min: 1, max: 5 }), (groups, nodes, rf) => {
        const ids = Array.from({ length: nodes }, (_, i) => i + 1);
        const placed = initialPlacement(groups, ids, rf);
        const load = projectedLoad(placed.map((g) => ({ ...g, lagging: [] })));
        const { max, min } = load.spread(ids);
        expect(max - min).toBeLessThanOrEqual(1);
        for (const g of placed) {
          expect(new Set(g.voters).size).toBe(Math.min(rf, nodes));
          expect(g.voters).toContain(g.leader);
        }
      }),
      RUNS,
    );
  });
});

describe('planner safety', () => {
  it('every step is safe against the state it meets, under arbitrary crashes, returns, joins, drains and catch-ups', () => {
    fc.assert(
      fc.property(
        fc.record({ seed: fc.integer({ min: 1, max: 2 ** 30 }), nodes: fc.integer({ min: 3, max: 9 }), groups: fc.integer({ min: 1, max: 40 }), rounds: fc.integer({ min: 5, max: 60 }), budget: fc.integer({ min: 1, max: 8 }) }),
        ({ seed, nodes, groups, rounds, budget }) => {
          const rnd = seededRandom(seed);
          const state = fresh(groups, nodes, 3);
          const o = { rf: 3, deadAfter: DEAD_AFTER, budget, nodeBudget: 2 };
          let nextId = nodes + 1;
          for (let r = 0; r < rounds; r++) {
            state.now += 1 + Math.floor(rnd() * 6);
            // the world moves: any node may go down or come back, with no regard to the placement
            for (const n of state.nodes) {
              const x = rnd();
              if (n.down_since === null && x < 0.08) n.down_since = state.now;
              else if (n.down_since !== null && x < 0.3) n.down_since = null;
              else if (x > 0.98) n.draining = true;
            }
            if (rnd() < 0.1) state.nodes.push({ id: nextId++, down_since: null, draining: false });
            state.groups = state.groups.map((g) => {
              const up = (v: NodeId) => state.nodes.find((n) => n.id === v)?.down_since === null;
              const lagging = g.lagging.filter(() => rnd() < 0.5); // catch-ups finish
              let leader = g.leader !== null && up(g.leader) ? g.leader : null;
              if (leader === null) {
                const candidates = g.voters.filter((v) => up(v) && !lagging.includes(v));
                if (candidates.length >= majority(g.voters.length)) leader = candidates[Math.floor(rnd() * candidates.length)];
              }
              return { ...g, lagging, leader };
            });
            applyChecked(state, plan(state.groups, state.nodes, state.now, o), o);
          }
        },
      ),
      RUNS,
    );
  });
});

describe('planner determinism', () => {
  it('the same input gives the same steps whatever the order of groups and nodes, and the input is left alone', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 30 }), fc.integer({ min: 3, max: 12 }), fc.integer({ min: 1, max: 64 }), (seed, nodes, groups) => {
        const rnd = seededRandom(seed);
        const state = fresh(groups, nodes, 3);
        for (const n of state.nodes) {
          if (rnd() < 0.2) n.down_since = -Math.floor(rnd() * 2 * DEAD_AFTER);
          else if (rnd() < 0.1) n.draining = true;
        }
        state.nodes.push({ id: nodes + 1, down_since: null, draining: false });
        const snapshot = JSON.stringify(state);
        const o = { deadAfter: DEAD_AFTER, budget: 6 };
        const first = plan(state.groups, state.nodes, 0, o);
        expect(JSON.stringify(state)).toBe(snapshot);
        expect(plan([...state.groups].reverse(), [...state.nodes].reverse(), 0, o)).toEqual(first);
        expect(plan(JSON.parse(snapshot).groups, JSON.parse(snapshot).nodes, 0, o)).toEqual(first);
      }),
      RUNS,
    );
  });
});

/**
 * The smallest leader spread (max − min leaders per node over `nodes`) any choice of one leader among
 * each group's voters achieves: exhaustive, for small cases.
 */
function bestLeaderSpread(groups: GroupView[], nodes: NodeId[]): number {
  const counts = new Map(nodes.map((n) => [n, 0]));
  let best = Infinity;
  const walk = (i: number) => {
    if (i === groups.length) {
      const cs = [...counts.values()];
      best = Math.min(best, Math.max(...cs) - Math.min(...cs));
      return;
    }
    for (const v of groups[i].voters) {
      counts.set(v, counts.get(v)! + 1);
      walk(i + 1);
      counts.set(v, counts.get(v)! - 1);
    }
  };
  walk(0);
  return best;
}

/** Plans and applies until the planner has nothing to do (catch-ups finish between runs); returns the runs. */
function converge(state: State, o: { rf: number; deadAfter: number; budget: number; nodeBudget: number }): number {
  let rounds = 0;
  for (;;) {
    const steps = plan(state.groups, state.nodes, 0, o);
    if (steps.length === 0) return rounds;
    applyChecked(state, steps, o);
    state.groups = state.groups.map((g) => ({ ...g, lagging: [] }));
    expect(++rounds).toBeLessThan(2000);
  }
}

describe('planner convergence', () => {
  it('leaders: within tolerance, or the best any leader choice allows on that replica placement (exhaustive, small cases)', () => {
    fc.assert(
      fc.property(
        fc.record({ nodes: fc.integer({ min: 3, max: 7 }), groups: fc.integer({ min: 1, max: 9 }), joins: fc.integer({ min: 0, max: 2 }), budget: fc.integer({ min: 1, max: 4 }) }),
        ({ nodes, groups, joins, budget }) => {
          const state = fresh(groups, nodes, 3);
          for (let j = 0; j < joins; j++) state.nodes.push({ id: nodes + 1 + j, down_since: null, draining: false });
          converge(state, { rf: 3, deadAfter: DEAD_AFTER, budget, nodeBudget: 2 });
          const ids = state.nodes.map((n) => n.id);
          const led = leaderCounts(state.groups).spread(ids);
          expect(led.max - led.min).toBeLessThanOrEqual(Math.max(defaultTolerance(groups, ids.length), bestLeaderSpread(state.groups, ids)));
        },
      ),
      RUNS,
    );
  });

  it('replicas: with every node up it reaches replicas within tolerance, every group at rf off draining nodes, then plans nothing', () => {
    fc.assert(
      fc.property(
        fc.record({ seed: fc.integer({ min: 1, max: 2 ** 30 }), nodes: fc.integer({ min: 3, max: 12 }), groups: fc.integer({ min: 1, max: 64 }), joins: fc.integer({ min: 0, max: 3 }), drains: fc.integer({ min: 0, max: 2 }), budget: fc.integer({ min: 1, max: 16 }) }),
        ({ seed, nodes, groups, joins, drains, budget }) => {
          const rnd = seededRandom(seed);
          const state = fresh(groups, nodes, 3);
          for (let j = 0; j < joins; j++) state.nodes.push({ id: nodes + 1 + j, down_since: null, draining: false });
          // drains keep at least rf nodes that stay
          for (let d = 0; d < drains && state.nodes.filter((n) => !n.draining).length > 3; d++) state.nodes[Math.floor(rnd() * state.nodes.length)].draining = true;
          converge(state, { rf: 3, deadAfter: DEAD_AFTER, budget, nodeBudget: 2 });
          const staying = state.nodes.filter((n) => !n.draining).map((n) => n.id);
          const rep = projectedLoad(state.groups).spread(staying);
          expect(rep.max - rep.min).toBeLessThanOrEqual(defaultTolerance(groups * 3, staying.length));
          for (const g of state.groups) {
            expect(g.voters.length).toBe(3);
            expect(g.move).toBeNull();
            expect(g.voters.some((v) => state.nodes.find((n) => n.id === v)!.draining)).toBe(false);
          }
        },
      ),
      RUNS,
    );
  });
});

describe('placement simulator', () => {
  const small = { nodes: 20, groups: 100, steps: 1500, budget: 8 };

  it.each([1, 2, 3])('seed %i: 20 nodes, 100 groups, crashes, joins and drains: every invariant holds and the cluster ends balanced', (seed) => {
    const r = runPlacementSim({ seed, ...small });
    expect(r.first_violations).toEqual([]);
    expect(r.ok).toBe(true);
    expect(r.events.crashes).toBeGreaterThan(0);
    expect(r.moves.repair + r.moves.drain + r.moves.balance).toBeGreaterThan(0);
    expect(r.quorum.max_loss_ticks).toBeLessThanOrEqual(60);
    expect(r.settle_ticks).not.toBeNull();
    expect(r.final.replicas_max - r.final.replicas_min).toBeLessThanOrEqual(r.final.tolerance);
    expect(r.final.leaders_max - r.final.leaders_min).toBeLessThanOrEqual(r.final.leader_tolerance);
    const { ms: _ms, ...again } = runPlacementSim({ seed, ...small });
    const { ms: _ms2, ...first } = r;
    expect(again).toEqual(first); // a seed replays the run
  });

  it('reports a planted planner that removes a member before adding its replacement', () => {
    const r = runPlacementSim({ seed: 1, ...small, plant: 'remove_before_add' });
    expect(r.ok).toBe(false);
    const kinds = new Set(r.first_violations.map((v) => v.kind));
    expect(kinds.has('removal')).toBe(true);
  });
});
