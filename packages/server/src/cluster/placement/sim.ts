/**
 * The placement simulator (issue 18): the planner against a seeded cluster of shard groups with
 * crashes, returns, joins and drains, in ticks of one simulated second. No I/O; a seed replays a run.
 *
 * Model. A learner catches up by snapshot in ⌈group MB / bandwidth⌉ ticks while its node is up and
 * its group has a leader; a voter returning from a short crash replays the log within the tick, from a
 * crash past the failure detector's timeout it needs the snapshot time. A group whose leader's node is
 * down is leaderless for one tick, then elects a live, caught-up voter. A step is refused (not applied)
 * when its group cannot commit. A node down for `detect` ticks is dead to the planner.
 *
 * Fault model (what RF 3 promises to survive: f = ⌊(rf − 1)/2⌋ members of a group out at once):
 * a crash is "guarded": refused when some group of the node would then have more than f voters that
 * are not live and caught up. A share of short crashes (`overlap`) is "unguarded": placed anywhere,
 * one at a time and only while every group has a quorum, so they do make groups lose quorum, but a
 * loss never outlasts the crash, and crashes of this kind are shorter than the detector's timeout.
 *
 * Checks, every tick, independent of the planner's own code:
 *   quorum      a group below a majority of live, caught-up voters while at most f voters are out:
 *               only the planner can cause that (it removed or promoted too early);
 *   outage      a group below quorum for longer than `detect` ticks;
 *   removal     a voter removed while fewer than rf other voters were live and caught up, i.e. before
 *               its replacement was a caught-up voter;
 *   promotion   a learner promoted before it caught up;
 *   recoverable the voters on nodes not lost for good are fewer than a majority (the group could
 *               never commit again without unsafe recovery), or none of them is caught up (its
 *               acknowledged data is gone);
 *   throttle    more than `budget` moves in flight, more than `nodeBudget` catch-ups into one node,
 *               two steps for one group in one planner run;
 *   balance     at the end (after a quiet period) replicas per node max − min > tolerance, leaders
 *               max − min > leader tolerance, or a group not at rf healthy voters.
 */
import { seededRandom } from '@strata/raft';
import { initialPlacement } from './initial';
import { applyStep, defaultTolerance, faultTolerance, majority, type GroupId, type GroupView, type NodeId, type NodeStatus, type Step } from './model';
import { plan, type PlannerOptions } from './planner';

export interface PlacementSimOptions {
  seed: number;
  /** initial nodes */
  nodes: number;
  groups: number;
  rf: number;
  /** ticks of one simulated second */
  steps: number;
  /** the failure detector's timeout (ticks) */
  detect: number;
  budget: number;
  nodeBudget: number;
  /** snapshot transfer speed, MB per tick */
  bandwidth: number;
  /** per tick: chance of a crash, a join, the start of a drain */
  crashRate: number;
  joinRate: number;
  drainRate: number;
  /** share of crashes that outlast the detector (the node is declared dead) */
  longShare: number;
  /** share of those long crashes after which the node comes back (empty, a fill target) */
  returnShare: number;
  /** share of short crashes that ignore the placement (make groups lose quorum for their duration) */
  overlap: number;
  /** no new event from this tick on (default 60% of steps): the rest is the quiet period that must end balanced */
  eventsUntil?: number;
  /** a planted planner bug, for the checker's own test */
  plant?: 'remove_before_add' | null;
}

export const DEFAULT_SIM: Omit<PlacementSimOptions, 'seed'> = {
  nodes: 100, groups: 1000, rf: 3, steps: 2400, detect: 60, budget: 32, nodeBudget: 4, bandwidth: 100,
  crashRate: 0.03, joinRate: 0.006, drainRate: 0.004, longShare: 0.4, returnShare: 0.3, overlap: 0.25,
};

export interface Violation {
  tick: number;
  kind: 'quorum' | 'outage' | 'removal' | 'promotion' | 'recoverable' | 'throttle' | 'balance';
  group: GroupId | null;
  detail: string;
}

export interface PlacementSimReport {
  seed: number;
  ok: boolean;
  violations: number;
  first_violations: Violation[];
  events: { crashes: number; crashes_unguarded: number; crashes_refused: number; long_crashes: number; returns: number; joins: number; drains: number; last_event_tick: number };
  moves: { repair: number; drain: number; balance: number; promotions: number; removals: number; cancels: number; transfers: number; refused_steps: number };
  quorum: { loss_episodes: number; max_loss_ticks: number; loss_group_ticks: number };
  /** from the crash (not from the declaration) to the dead replica's replacement, in ticks */
  repair: { episodes: number; max_ticks_from_crash: number; mean_ticks_from_crash: number };
  joins: { fill_ticks: number[]; max_fill_ticks: number | null };
  settle_ticks: number | null;
  final: { nodes: number; replicas_min: number; replicas_max: number; leaders_min: number; leaders_max: number; tolerance: number; leader_tolerance: number; in_flight: number };
  ms: number;
}

interface SimNode {
  id: NodeId;
  up: boolean;
  downSince: number | null;
  draining: boolean;
  /** down and never coming back */
  lost: boolean;
  returnAt: number | null;
  unguarded: boolean;
  joinedAt: number | null;
  filled: boolean;
}

interface SimGroup extends GroupView {
  lagging: NodeId[];
  bytes: number;
  /** ticks of catch-up left per lagging member */
  catchUp: Map<NodeId, number>;
}

const MAX_KEPT = 20;

export function runPlacementSim(partial: Partial<PlacementSimOptions> & { seed: number }): PlacementSimReport {
  return new PlacementSim({ ...DEFAULT_SIM, ...partial }).run();
}

class PlacementSim {
  private readonly rnd: () => number;
  private readonly nodes = new Map<NodeId, SimNode>();
  /** the same nodes indexed by id, for the per-group loops */
  private readonly byId: (SimNode | undefined)[] = [];
  private groups: SimGroup[];
  private nextId: number;
  private readonly f: number;
  private readonly eventsUntil: number;
  private readonly violations: Violation[] = [];
  private violationCount = 0;
  private readonly flagged = new Set<string>();
  private readonly lossStart = new Map<GroupId, number>();
  private readonly repairStart = new Map<GroupId, number>();
  private readonly repairs: number[] = [];
  private readonly fills: number[] = [];
  private load = new Map<NodeId, number>();
  private leads = new Map<NodeId, number>();
  private settledAt: number | null = null;
  /** something the planner or the checks read changed this tick */
  private dirty = false;
  private balanced = false;
  private applied = false;
  private crashed = false;
  private readonly leaderless = new Set<GroupId>();
  private readonly catching = new Set<GroupId>();
  private readonly r: PlacementSimReport;

  constructor(private readonly o: PlacementSimOptions) {
    // spread the seed so that nearby seeds start far apart (as raft's simulator does)
    this.rnd = seededRandom((o.seed * 0x9e3779b1) >>> 0 || 0x6d2b79f5);
    this.f = faultTolerance(o.rf);
    this.eventsUntil = o.eventsUntil ?? Math.floor(o.steps * 0.6);
    const ids = Array.from({ length: o.nodes }, (_, i) => i + 1);
    for (const id of ids) this.addNode({ id, up: true, downSince: null, draining: false, lost: false, returnAt: null, unguarded: false, joinedAt: null, filled: true });
    this.nextId = o.nodes + 1;
    // group sizes: many small, a few large (20 MB .. ~2 GB)
    // (an object literal, not a spread: V8 keeps literal objects in fast mode, and the loops over 1,000 groups feel it)
    this.groups = initialPlacement(o.groups, ids, o.rf).map((g) => ({
      id: g.id, voters: g.voters, learners: g.learners, leader: g.leader, move: g.move,
      lagging: [], bytes: 20 + Math.floor(2000 * this.rnd() ** 3), catchUp: new Map(),
    }));
    this.r = {
      seed: o.seed, ok: true, violations: 0, first_violations: [],
      events: { crashes: 0, crashes_unguarded: 0, crashes_refused: 0, long_crashes: 0, returns: 0, joins: 0, drains: 0, last_event_tick: 0 },
      moves: { repair: 0, drain: 0, balance: 0, promotions: 0, removals: 0, cancels: 0, transfers: 0, refused_steps: 0 },
      quorum: { loss_episodes: 0, max_loss_ticks: 0, loss_group_ticks: 0 },
      repair: { episodes: 0, max_ticks_from_crash: 0, mean_ticks_from_crash: 0 },
      joins: { fill_ticks: [], max_fill_ticks: null },
      settle_ticks: null,
      final: { nodes: 0, replicas_min: 0, replicas_max: 0, leaders_min: 0, leaders_max: 0, tolerance: 0, leader_tolerance: 0, in_flight: 0 },
      ms: 0,
    };
  }

  run(): PlacementSimReport {
    const started = Date.now();
    for (let t = 0; t < this.o.steps; t++) {
      // steps applied last tick changed the placement: the planner looks again
      this.dirty = this.applied;
      this.applied = false;
      this.events(t);
      this.raft();
      this.decommission();
      // The planner is a pure function of the placement, the observations and which nodes are dead:
      // on a tick where none of them changed it would answer what it answered last tick (nothing, or
      // steps refused again), so it runs, and the checks walk the groups, only when something did.
      if (this.dirty || this.detectorFires(t)) {
        this.execute(this.planStep(t), t);
        this.check(t);
      } else this.checkQuiet(t);
    }
    this.finish();
    this.r.ms = Date.now() - started;
    return this.r;
  }

  // ---- randomness ---------------------------------------------------------------------------------

  private int(n: number): number {
    return Math.floor(this.rnd() * n);
  }

  private pick<T>(xs: readonly T[]): T | undefined {
    return xs.length ? xs[this.int(xs.length)] : undefined;
  }

  // ---- the world ----------------------------------------------------------------------------------

  private addNode(n: SimNode): void {
    this.nodes.set(n.id, n);
    this.byId[n.id] = n;
  }

  private isDead(n: SimNode, t: number): boolean {
    return n.downSince !== null && t - n.downSince >= this.o.detect;
  }

  private current(g: SimGroup, id: NodeId): boolean {
    return this.byId[id]?.up === true && (g.lagging.length === 0 || !g.lagging.includes(id));
  }

  private outVoters(g: SimGroup, except: NodeId | null = null): number {
    let k = 0;
    for (const v of g.voters) if (v !== except && !this.current(g, v)) k++;
    return k;
  }

  private hasQuorum(g: SimGroup): boolean {
    return g.voters.length - this.outVoters(g) >= majority(g.voters.length);
  }

  private canCommit(g: SimGroup): boolean {
    return g.leader !== null && this.current(g, g.leader) && this.hasQuorum(g);
  }

  private lag(g: SimGroup, id: NodeId, ticks: number): void {
    if (!g.lagging.includes(id)) g.lagging.push(id);
    g.catchUp.set(id, Math.max(ticks, g.catchUp.get(id) ?? 0));
    this.catching.add(g.id);
  }

  private snapshotTicks(g: SimGroup): number {
    return Math.max(1, Math.ceil(g.bytes / this.o.bandwidth));
  }

  private event(t: number): void {
    this.r.events.last_event_tick = t;
    this.dirty = true;
  }

  /** a node crosses the failure detector's timeout at `t` (the planner now sees it dead) */
  private detectorFires(t: number): boolean {
    for (const n of this.nodes.values()) if (n.downSince !== null && t - n.downSince === this.o.detect) return true;
    return false;
  }

  private events(t: number): void {
    for (const n of this.nodes.values()) {
      if (n.returnAt !== t) continue;
      const downFor = t - n.downSince!;
      n.up = true;
      n.downSince = null;
      n.returnAt = null;
      n.unguarded = false;
      this.r.events.returns++;
      this.event(t);
      for (const g of this.groups) {
        // after a short crash the node replays its log within the tick; after a long one the log it
        // needs is compacted away and it waits for a snapshot from the leader
        if (downFor >= this.o.detect && (g.voters.includes(n.id) || g.learners.includes(n.id))) this.lag(g, n.id, this.snapshotTicks(g));
      }
    }
    if (t >= this.eventsUntil) return;
    if (this.rnd() < this.o.crashRate) this.crash(t);
    if (this.rnd() < this.o.joinRate) {
      const id = this.nextId++;
      this.addNode({ id, up: true, downSince: null, draining: false, lost: false, returnAt: null, unguarded: false, joinedAt: t, filled: false });
      this.r.events.joins++;
      this.event(t);
    }
    if (this.rnd() < this.o.drainRate) {
      const ok = [...this.nodes.values()].filter((n) => n.up && !n.draining);
      const draining = [...this.nodes.values()].filter((n) => n.draining).length;
      const victim = this.pick(ok);
      if (victim && draining < 2 && ok.length > this.o.rf + 2) {
        victim.draining = true;
        this.r.events.drains++;
        this.event(t);
      }
    }
  }

  private crash(t: number): void {
    const up = [...this.nodes.values()].filter((n) => n.up);
    const n = this.pick(up);
    if (!n) return;
    const unguardedAllowed = this.rnd() < this.o.overlap && ![...this.nodes.values()].some((x) => x.unguarded) && this.groups.every((g) => this.hasQuorum(g));
    const long = !unguardedAllowed && this.rnd() < this.o.longShare;
    if (!unguardedAllowed) {
      // guarded: no group of the node may end up with more than f voters out
      for (const g of this.groups) {
        if (g.voters.includes(n.id) && this.outVoters(g, n.id) + 1 > this.f) {
          this.r.events.crashes_refused++;
          return;
        }
      }
    }
    n.up = false;
    n.downSince = t;
    this.crashed = true;
    n.unguarded = unguardedAllowed;
    if (long) {
      this.r.events.long_crashes++;
      n.returnAt = this.rnd() < this.o.returnShare ? t + this.o.detect + 1 + this.int(300) : null;
      n.lost = n.returnAt === null;
    } else {
      n.returnAt = t + 1 + this.int(this.o.detect - 1);
    }
    this.r.events.crashes++;
    if (unguardedAllowed) this.r.events.crashes_unguarded++;
    this.event(t);
  }

  /**
   * Elections (groups that lost their leader on an earlier tick), leader loss (after a crash), and
   * catch-up progress. Only the groups concerned are visited: most ticks touch few of them.
   */
  private raft(): void {
    for (const id of [...this.leaderless]) {
      const g = this.groups[id];
      if (g.leader === null && this.hasQuorum(g)) {
        g.leader = this.pick(g.voters.filter((v) => this.current(g, v))) ?? null;
        this.dirty = true;
      }
      if (g.leader !== null) this.leaderless.delete(id);
    }
    if (this.crashed) {
      this.crashed = false;
      for (const g of this.groups) {
        if (g.leader === null || this.byId[g.leader]?.up === true) continue;
        g.leader = null; // elected next tick
        this.leaderless.add(g.id);
        this.dirty = true;
      }
    }
    for (const id of [...this.catching]) {
      const g = this.groups[id];
      if (g.leader === null) continue;
      for (const [node, left] of g.catchUp) {
        if (this.byId[node]?.up !== true) continue;
        if (left <= 1) {
          g.catchUp.delete(node);
          g.lagging = g.lagging.filter((x) => x !== node);
          this.dirty = true;
        } else g.catchUp.set(node, left - 1);
      }
      if (g.catchUp.size === 0) this.catching.delete(id);
    }
  }

  /** A drained node that holds nothing leaves the node set; so does a node lost for good once empty. */
  private decommission(): void {
    for (const n of [...this.nodes.values()]) {
      if (!(n.draining || n.lost) || (this.load.get(n.id) ?? 0) > 0) continue;
      if (this.groups.some((g) => g.voters.includes(n.id) || g.learners.includes(n.id))) continue;
      this.nodes.delete(n.id);
      this.dirty = true;
      this.byId[n.id] = undefined;
    }
  }

  // ---- the planner and the executor ---------------------------------------------------------------

  private planStep(t: number): Step[] {
    const statuses: NodeStatus[] = [...this.nodes.values()].map((n) => ({ id: n.id, down_since: n.downSince, draining: n.draining }));
    const opts: PlannerOptions = { rf: this.o.rf, deadAfter: this.o.detect, budget: this.o.budget, nodeBudget: this.o.nodeBudget };
    const steps = plan(this.groups, statuses, t, opts);
    if (this.o.plant !== 'remove_before_add') return steps;
    // the planted bug: the replaced member leaves first (the next runs see the group short and add one)
    return steps.map((s) => {
      if (s.kind !== 'add_learner' || s.replaces === null) return s;
      const g = this.groups[s.group];
      return g.voters.includes(s.replaces) ? { kind: 'remove', group: s.group, node: s.replaces } : s;
    });
  }

  private violate(t: number, kind: Violation['kind'], group: GroupId | null, detail: string): void {
    this.violationCount++;
    this.r.ok = false;
    if (this.violations.length < MAX_KEPT) this.violations.push({ tick: t, kind, group, detail });
  }

  /** Once per group and kind until it clears (a state that lasts is one violation, not one per tick). */
  private violateOnce(t: number, kind: Violation['kind'], group: GroupId, detail: string): void {
    const key = `${kind}/${group}`;
    if (this.flagged.has(key)) return;
    this.flagged.add(key);
    this.violate(t, kind, group, detail);
  }

  private execute(steps: Step[], t: number): void {
    const seen = new Set<GroupId>();
    for (const step of steps) {
      const g = this.groups[step.group];
      if (seen.has(step.group)) this.violate(t, 'throttle', step.group, 'two steps for one group in one planner run');
      seen.add(step.group);
      if (!this.canCommit(g)) {
        this.r.moves.refused_steps++;
        continue;
      }
      switch (step.kind) {
        case 'add_learner': {
          const node = this.nodes.get(step.node);
          if (!node || !node.up || g.voters.includes(step.node) || g.learners.includes(step.node)) {
            this.r.moves.refused_steps++;
            continue;
          }
          this.r.moves[step.reason]++;
          this.lag(g, step.node, this.snapshotTicks(g));
          break;
        }
        case 'promote':
          if (!g.learners.includes(step.node)) {
            this.r.moves.refused_steps++;
            continue;
          }
          if (g.lagging.includes(step.node)) this.violate(t, 'promotion', g.id, `promoted ${step.node} before it caught up`);
          this.r.moves.promotions++;
          break;
        case 'remove':
          if (g.learners.includes(step.node)) {
            this.r.moves.cancels++;
            g.catchUp.delete(step.node);
            g.lagging = g.lagging.filter((x) => x !== step.node);
          } else if (g.voters.includes(step.node)) {
            const others = g.voters.length - 1 - this.outVoters(g, step.node);
            if (others < this.o.rf) this.violate(t, 'removal', g.id, `removed voter ${step.node} of [${g.voters}] with ${others} other live caught-up voters (< rf ${this.o.rf})`);
            this.r.moves.removals++;
            g.catchUp.delete(step.node);
            g.lagging = g.lagging.filter((x) => x !== step.node);
          } else {
            this.r.moves.refused_steps++;
            continue;
          }
          break;
        case 'transfer_leader':
          if (!g.voters.includes(step.to) || !this.current(g, step.to)) {
            this.r.moves.refused_steps++;
            continue;
          }
          this.r.moves.transfers++;
          break;
      }
      // the sim's group object is updated in place with the committed placement
      const next = applyStep(g, step);
      g.voters = next.voters;
      g.learners = next.learners;
      g.leader = next.leader;
      g.move = next.move;
      if (g.leader === null) this.leaderless.add(g.id);
      this.applied = true;
    }
    let inflight = 0;
    const incoming = new Map<NodeId, number>();
    for (const g of this.groups) {
      if (!g.move) continue;
      inflight++;
      if (g.learners.includes(g.move.to)) incoming.set(g.move.to, (incoming.get(g.move.to) ?? 0) + 1);
    }
    if (inflight > this.o.budget) this.violate(t, 'throttle', null, `${inflight} moves in flight (budget ${this.o.budget})`);
    for (const [n, k] of incoming) if (k > this.o.nodeBudget) this.violate(t, 'throttle', null, `${k} catch-ups into node ${n} (node budget ${this.o.nodeBudget})`);
  }

  // ---- the checks ---------------------------------------------------------------------------------

  private check(t: number): void {
    const load = new Map<NodeId, number>();
    const leads = new Map<NodeId, number>();
    let healthy = true;
    let inflight = 0;
    for (const g of this.groups) {
      for (const v of g.voters) load.set(v, (load.get(v) ?? 0) + 1);
      for (const l of g.learners) load.set(l, (load.get(l) ?? 0) + 1);
      if (g.leader !== null) leads.set(g.leader, (leads.get(g.leader) ?? 0) + 1);
      if (g.move) inflight++;
      // one pass over the voters: out (not live or not caught up), kept (on a node not lost for good),
      // dead (down past the detector, or gone), good (neither dead, draining nor lagging)
      let out = 0;
      let kept = 0;
      let keptCurrent = 0;
      let good = 0;
      let deadVoter = false;
      for (const v of g.voters) {
        const n = this.byId[v];
        const lagging = g.lagging.length > 0 && g.lagging.includes(v);
        if (!n?.up || lagging) out++;
        if (n && !n.lost) {
          kept++;
          if (!lagging) keptCurrent++;
        }
        if (!n || this.isDead(n, t)) deadVoter = true;
        else if (!n.draining && !lagging) good++;
      }
      const maj = majority(g.voters.length);
      if (g.voters.length - out < maj) {
        if (out <= this.f) this.violateOnce(t, 'quorum', g.id, `voters [${g.voters}] with only ${out} out have no majority of live caught-up voters`);
        if (!this.lossStart.has(g.id)) {
          this.lossStart.set(g.id, t);
          this.r.quorum.loss_episodes++;
        }
        const ticks = t - this.lossStart.get(g.id)! + 1;
        this.r.quorum.loss_group_ticks++;
        this.r.quorum.max_loss_ticks = Math.max(this.r.quorum.max_loss_ticks, ticks);
        if (ticks > this.o.detect) this.violateOnce(t, 'outage', g.id, `below quorum for more than ${this.o.detect} ticks`);
      } else if (this.lossStart.size > 0 && this.lossStart.has(g.id)) {
        this.lossStart.delete(g.id);
        this.flagged.delete(`quorum/${g.id}`);
        this.flagged.delete(`outage/${g.id}`);
      }
      if (kept < maj || keptCurrent === 0) {
        this.violateOnce(t, 'recoverable', g.id, `voters [${g.voters}]: ${kept} on nodes not lost, ${keptCurrent} of them caught up`);
      }
      if (deadVoter || good < this.o.rf || g.move) healthy = false;
      if (deadVoter) {
        if (!this.repairStart.has(g.id)) this.repairStart.set(g.id, t);
      } else if (this.repairStart.has(g.id)) {
        this.repairs.push(t - this.repairStart.get(g.id)! + this.o.detect);
        this.repairStart.delete(g.id);
      }
    }
    this.load = load;
    this.leads = leads;
    const balanceNodes = [...this.nodes.values()].filter((n) => !this.isDead(n, t) && !n.draining && !n.lost);
    const okNodes = balanceNodes.filter((n) => n.up);
    const rep = this.spread(load, balanceNodes.map((n) => n.id));
    const led = this.spread(leads, okNodes.map((n) => n.id));
    const tol = defaultTolerance(this.o.groups * this.o.rf, balanceNodes.length);
    const ltol = defaultTolerance(this.o.groups, balanceNodes.length);
    for (const n of balanceNodes) {
      if (n.filled || n.joinedAt === null) continue;
      if ((load.get(n.id) ?? 0) >= rep.max - tol) {
        n.filled = true;
        this.fills.push(t - n.joinedAt);
      }
    }
    const balanced = (this.balanced = healthy && okNodes.length === balanceNodes.length && rep.max - rep.min <= tol && led.max - led.min <= ltol);
    if (t > this.r.events.last_event_tick && t >= this.eventsUntil) {
      if (balanced && this.settledAt === null) this.settledAt = t;
      if (!balanced) this.settledAt = null;
    }
    this.r.final = { nodes: balanceNodes.length, replicas_min: rep.min, replicas_max: rep.max, leaders_min: led.min, leaders_max: led.max, tolerance: tol, leader_tolerance: ltol, in_flight: inflight };
    if (t === this.o.steps - 1 && !balanced) {
      this.violate(t, 'balance', null, `not settled at the end: replicas ${rep.min}..${rep.max} (tolerance ${tol}), leaders ${led.min}..${led.max} (tolerance ${ltol}), ${inflight} moves in flight, all healthy: ${healthy}`);
    }
  }

  /** The checks of a tick where nothing changed: only the clocks of the open quorum losses advance. */
  private checkQuiet(t: number): void {
    for (const [g, start] of this.lossStart) {
      const ticks = t - start + 1;
      this.r.quorum.loss_group_ticks++;
      this.r.quorum.max_loss_ticks = Math.max(this.r.quorum.max_loss_ticks, ticks);
      if (ticks > this.o.detect) this.violateOnce(t, 'outage', g, `below quorum for more than ${this.o.detect} ticks`);
    }
    if (this.balanced && this.settledAt === null && t > this.r.events.last_event_tick && t >= this.eventsUntil) this.settledAt = t;
    if (t === this.o.steps - 1 && !this.balanced) this.check(t);
  }

  private spread(counts: Map<NodeId, number>, ids: NodeId[]): { min: number; max: number } {
    if (!ids.length) return { min: 0, max: 0 };
    const cs = ids.map((id) => counts.get(id) ?? 0);
    return { min: Math.min(...cs), max: Math.max(...cs) };
  }

  private finish(): void {
    this.r.violations = this.violationCount;
    this.r.first_violations = this.violations;
    this.r.repair = {
      episodes: this.repairs.length,
      max_ticks_from_crash: this.repairs.length ? Math.max(...this.repairs) : 0,
      mean_ticks_from_crash: this.repairs.length ? Math.round(this.repairs.reduce((a, b) => a + b, 0) / this.repairs.length) : 0,
    };
    this.r.joins = { fill_ticks: this.fills, max_fill_ticks: this.fills.length ? Math.max(...this.fills) : null };
    this.r.settle_ticks = this.settledAt === null ? null : this.settledAt - this.r.events.last_event_tick;
  }
}
