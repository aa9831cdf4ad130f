/**
 * The placement planner (issue 18): pure and deterministic, no I/O. From the placement, what the
 * leaders observe (who has caught up, who leads) and the failure detector's view of the nodes, it
 * returns the next steps, in order:
 *   1. continue the moves in flight (promote a caught-up learner, then remove the member it replaces;
 *      cancel a move whose learner died or is draining);
 *   2. start repairs: groups with fewer than `rf` members on nodes that are neither dead nor draining
 *      (dead replicas first);
 *   3. balance replicas per node until max − min ≤ `tolerance`;
 *   4. balance leaders per node until max − min ≤ `leaderTolerance` (transfers along augmenting paths).
 * Safety, for every step: at most one step per group per run (each is one committed membership change:
 * no joint consensus); nothing is proposed to a group that cannot commit (no leader or no majority of
 * live, caught-up voters); a learner is promoted only once caught up and only if the group keeps a
 * majority; a voter is removed only when `rf` other voters are live and caught up (so its replacement
 * already is a caught-up voter, and the group never drops below a majority of live voters because of
 * the planner); a leader is removed only after handing leadership over. Throttle: at most `budget`
 * moves in flight cluster-wide and `nodeBudget` learners catching up on one node at a time.
 * Callers run it again after the steps are applied (the simulator: every tick); a run that returns
 * nothing means the placement is healthy and balanced within the tolerances.
 */
import { defaultTolerance, majority, type GroupId, type GroupView, type MoveReason, type NodeId, type NodeStatus, type Step } from './model';
import { mix } from './initial';

export interface PlannerOptions {
  /** replicas per group (default 3) */
  rf?: number;
  /** the failure detector's timeout: a node down this long is dead (same unit as `now`) */
  deadAfter: number;
  /** moves in flight cluster-wide (default 16): each streams a snapshot */
  budget?: number;
  /** learners catching up on one node at once (default 4) */
  nodeBudget?: number;
  /** max − min replicas per node (default max(1, ⌈5% of the mean⌉)) */
  tolerance?: number;
  /** max − min leaders per node (default max(1, ⌈5% of the mean⌉)) */
  leaderTolerance?: number;
  /** leadership transfers per run (default `budget`) */
  leaderBudget?: number;
}

export interface ResolvedOptions {
  rf: number;
  deadAfter: number;
  budget: number;
  nodeBudget: number;
  tolerance: number;
  leaderTolerance: number;
  leaderBudget: number;
}

/** Pure: the options with their defaults, which depend on the cluster's size. */
export function resolveOptions(o: PlannerOptions, groups: number, balanceNodes: number): ResolvedOptions {
  const rf = o.rf ?? 3;
  const budget = o.budget ?? 16;
  return {
    rf,
    deadAfter: o.deadAfter,
    budget,
    nodeBudget: o.nodeBudget ?? 4,
    tolerance: o.tolerance ?? defaultTolerance(groups * rf, balanceNodes),
    leaderTolerance: o.leaderTolerance ?? defaultTolerance(groups, balanceNodes),
    leaderBudget: o.leaderBudget ?? budget,
  };
}

/**
 * What the planner concludes about the nodes and groups. Node ids index plain arrays (they are small
 * integers in practice, and a run looks each one up many times per group).
 */
export class ClusterView {
  private readonly known: boolean[] = [];
  private readonly up: boolean[] = [];
  private readonly dead: boolean[] = [];
  private readonly draining: boolean[] = [];
  private readonly ids: NodeId[];

  constructor(nodes: readonly NodeStatus[], readonly now: number, readonly deadAfter: number) {
    for (const n of nodes) {
      this.known[n.id] = true;
      this.up[n.id] = n.down_since === null;
      this.dead[n.id] = n.down_since !== null && now - n.down_since >= deadAfter;
      this.draining[n.id] = n.draining;
    }
    this.ids = [...new Set(nodes.map((n) => n.id))].sort((a, b) => a - b);
  }

  /** Down for the failure detector's timeout, or no longer in the node set: its replicas are re-created. */
  isDead(n: NodeId): boolean {
    return this.known[n] !== true || this.dead[n] === true;
  }

  isUp(n: NodeId): boolean {
    return this.up[n] === true;
  }

  isDraining(n: NodeId): boolean {
    return this.draining[n] === true;
  }

  /** may receive replicas and leadership: up and not draining */
  isOk(n: NodeId): boolean {
    return this.up[n] === true && this.draining[n] !== true;
  }

  /** its replicas must be re-created elsewhere */
  isLeaving(n: NodeId): boolean {
    return this.isDead(n) || this.draining[n] === true;
  }

  /** counted in replica balance: not dead, not draining (a node that is only suspected counts: it is expected back) */
  inBalance(n: NodeId): boolean {
    return !this.isLeaving(n);
  }

  current(g: GroupView, n: NodeId): boolean {
    return this.up[n] === true && (g.lagging.length === 0 || !g.lagging.includes(n));
  }

  liveCurrentVoters(g: GroupView, except: NodeId | null = null): number {
    let k = 0;
    for (const v of g.voters) if (v !== except && this.current(g, v)) k++;
    return k;
  }

  /** a membership change or transfer can commit: a live leader and a majority of live, caught-up voters */
  canCommit(g: GroupView): boolean {
    return g.leader !== null && g.voters.includes(g.leader) && this.current(g, g.leader) && this.liveCurrentVoters(g) >= majority(g.voters.length);
  }

  nodeIds(): NodeId[] {
    return this.ids;
  }
}

/** A count per node, over an array indexed by node id (see ClusterView). */
export class Counts {
  private readonly c: number[] = [];

  get(n: NodeId): number {
    return this.c[n] ?? 0;
  }

  add(n: NodeId, by: number): void {
    this.c[n] = (this.c[n] ?? 0) + by;
  }

  /** max and min over `nodes` (0 and 0 for none) */
  spread(nodes: readonly NodeId[]): { max: number; min: number } {
    if (nodes.length === 0) return { max: 0, min: 0 };
    let max = -Infinity;
    let min = Infinity;
    for (const n of nodes) {
      const v = this.c[n] ?? 0;
      if (v > max) max = v;
      if (v < min) min = v;
    }
    return { max, min };
  }
}

/** Projected replicas per node: each group's members once its move completes (the learner in, `from` out). */
export function projectedLoad(groups: readonly GroupView[]): Counts {
  const load = new Counts();
  for (const g of groups) {
    const from = g.move ? g.move.from : null;
    for (const v of g.voters) if (v !== from) load.add(v, 1);
    for (const l of g.learners) load.add(l, 1);
  }
  return load;
}

export function leaderCounts(groups: readonly GroupView[]): Counts {
  const leads = new Counts();
  for (const g of groups) if (g.leader !== null) leads.add(g.leader, 1);
  return leads;
}

export function plan(groups: readonly GroupView[], nodes: readonly NodeStatus[], now: number, options: PlannerOptions): Step[] {
  return new Planning(groups, nodes, now, options).run();
}

/** One planner run: working counts that each chosen step updates, so later choices see earlier ones. */
class Planning {
  private readonly view: ClusterView;
  private readonly o: ResolvedOptions;
  private readonly groups: GroupView[];
  private readonly steps: Step[] = [];
  private readonly touched = new Set<GroupId>();
  private readonly load: Counts;
  private readonly leads: Counts;
  private readonly incoming = new Counts();
  private inflight = 0;
  private readonly balanceNodes: NodeId[];
  private readonly okNodes: NodeId[];

  constructor(groups: readonly GroupView[], nodes: readonly NodeStatus[], now: number, options: PlannerOptions) {
    this.groups = [...groups].sort((a, b) => a.id - b.id);
    this.view = new ClusterView(nodes, now, options.deadAfter);
    const ids = this.view.nodeIds();
    this.balanceNodes = ids.filter((n) => this.view.inBalance(n));
    this.okNodes = ids.filter((n) => this.view.isOk(n));
    this.o = resolveOptions(options, groups.length, this.balanceNodes.length);
    this.load = projectedLoad(this.groups);
    this.leads = leaderCounts(this.groups);
    for (const g of this.groups) {
      if (!g.move) continue;
      this.inflight++;
      if (g.learners.includes(g.move.to)) this.incoming.add(g.move.to, 1);
    }
  }

  run(): Step[] {
    this.continueMoves();
    this.repair();
    this.balanceReplicas();
    this.balanceLeaders();
    return this.steps;
  }

  private readonly commits = new Map<GroupId, boolean>();

  /** the view's answer, once per group and run (the inputs do not change during a run) */
  private canCommit(g: GroupView): boolean {
    let c = this.commits.get(g.id);
    if (c === undefined) this.commits.set(g.id, (c = this.view.canCommit(g)));
    return c;
  }

  private emit(step: Step): void {
    if (this.touched.has(step.group)) throw new Error(`planner bug: two steps for group ${step.group}`);
    this.touched.add(step.group);
    this.steps.push(step);
  }

  /** The member a move (or an over-replicated group) gives up: a dead one, else a draining one, else `preferred`, else the most loaded. */
  private victimOf(g: GroupView, preferred: NodeId | null, protect: NodeId | null): NodeId | null {
    const candidates = g.voters.filter((v) => v !== protect);
    const dead = candidates.filter((v) => this.view.isDead(v));
    if (dead.length) return Math.min(...dead);
    const draining = candidates.filter((v) => this.view.isDraining(v));
    if (draining.length) return Math.min(...draining);
    if (preferred !== null && candidates.includes(preferred)) return preferred;
    if (g.voters.length <= this.o.rf) return null;
    return candidates.reduce<NodeId | null>((best, v) => (best === null || this.load.get(v) > this.load.get(best) ? v : best), null);
  }

  /** Removes `victim` when rf other voters are live and caught up; a leader hands over first. */
  private removeSafely(g: GroupView, victim: NodeId): void {
    if (this.view.liveCurrentVoters(g, victim) < this.o.rf) return;
    if (g.leader === victim) {
      const to = this.bestLeader(g, victim);
      if (to !== null) this.transfer(g, to);
      return;
    }
    this.emit({ kind: 'remove', group: g.id, node: victim });
  }

  /** The live, caught-up, non-draining voter leading fewest groups (ties: lowest id). */
  private bestLeader(g: GroupView, except: NodeId): NodeId | null {
    let best: NodeId | null = null;
    for (const v of [...g.voters].sort((a, b) => a - b)) {
      if (v === except || !this.view.isOk(v) || !this.view.current(g, v)) continue;
      if (best === null || this.leads.get(v) < this.leads.get(best)) best = v;
    }
    return best;
  }

  private transfer(g: GroupView, to: NodeId): void {
    this.emit({ kind: 'transfer_leader', group: g.id, to });
    if (g.leader !== null) this.leads.add(g.leader, -1);
    this.leads.add(to, 1);
  }

  /** Phase 1: one step for each move in flight, and clean-up of over-replicated groups. No budget: they hold one already. */
  private continueMoves(): void {
    for (const g of this.groups) {
      if (!g.move && g.learners.length === 0 && g.voters.length <= this.o.rf) continue; // idle: most groups
      if (!this.canCommit(g)) continue;
      const stray = g.learners.find((l) => l !== g.move?.to);
      if (stray !== undefined) {
        this.emit({ kind: 'remove', group: g.id, node: stray });
        continue;
      }
      if (!g.move) {
        if (g.voters.length > this.o.rf) {
          const victim = this.victimOf(g, null, null);
          if (victim !== null) this.removeSafely(g, victim);
        }
        continue;
      }
      const to = g.move.to;
      if (g.learners.includes(to)) {
        if (this.view.isLeaving(to)) this.emit({ kind: 'remove', group: g.id, node: to });
        else if (this.view.current(g, to) && this.view.liveCurrentVoters(g) + 1 >= majority(g.voters.length + 1)) {
          this.emit({ kind: 'promote', group: g.id, node: to });
        }
        continue;
      }
      if (g.voters.includes(to)) {
        // the new member is kept unless it is itself leaving (then it goes first, cancelling the move)
        const victim = this.victimOf(g, g.move.from, this.view.isLeaving(to) ? null : to);
        if (victim !== null) this.removeSafely(g, victim);
      }
    }
  }

  /** Phase 2: groups short of rf members on nodes that stay; dead replicas first, then the least redundant. */
  private repair(): void {
    const needs: { g: GroupView; from: NodeId | null; reason: MoveReason; rank: number }[] = [];
    for (const g of this.groups) {
      if (g.move || this.touched.has(g.id)) continue;
      let staying = 0;
      for (const v of g.voters) if (!this.view.isLeaving(v)) staying++;
      if (staying >= this.o.rf) continue;
      const leaving = g.voters.filter((v) => this.view.isLeaving(v));
      const dead = leaving.filter((v) => this.view.isDead(v));
      const from = dead.length ? Math.min(...dead) : leaving.length ? Math.min(...leaving) : null;
      const reason: MoveReason = from !== null && !dead.length ? 'drain' : 'repair';
      needs.push({ g, from, reason, rank: (reason === 'repair' ? 0 : 1000) + this.view.liveCurrentVoters(g) });
    }
    needs.sort((a, b) => a.rank - b.rank || a.g.id - b.g.id);
    for (const { g, from, reason } of needs) {
      if (this.inflight >= this.o.budget) return;
      if (!this.canCommit(g)) continue;
      const to = this.target(g, this.okNodes);
      if (to === null) continue;
      this.startMove(g, to, from, reason);
    }
  }

  private startMove(g: GroupView, to: NodeId, from: NodeId | null, reason: MoveReason): void {
    this.emit({ kind: 'add_learner', group: g.id, node: to, replaces: from, reason });
    this.inflight++;
    this.incoming.add(to, 1);
    this.load.add(to, 1);
    if (from !== null) this.load.add(from, -1);
  }

  /** Where a new replica of `g` goes: an ok node outside the group with room for a catch-up, least loaded. */
  private target(g: GroupView, candidates: readonly NodeId[]): NodeId | null {
    let best: NodeId | null = null;
    for (const n of candidates) {
      if (g.voters.includes(n) || g.learners.includes(n) || this.incoming.get(n) >= this.o.nodeBudget) continue;
      if (best === null) {
        best = n;
        continue;
      }
      const d = this.load.get(n) - this.load.get(best);
      if (d < 0 || (d === 0 && mix(g.id, n) < mix(g.id, best))) best = n;
    }
    return best;
  }

  /** Phase 3: from the most loaded node to a node with at least two fewer, while max − min exceeds the tolerance. */
  private balanceReplicas(): void {
    if (this.balanceNodes.length === 0 || this.inflight >= this.o.budget) return;
    const first = this.load.spread(this.balanceNodes);
    if (first.max - first.min <= this.o.tolerance) return;
    const byNode = new Map<NodeId, GroupView[]>();
    for (const g of this.groups) for (const v of g.voters) (byNode.get(v) ?? byNode.set(v, []).get(v)!).push(g);
    const exhausted = new Set<NodeId>();
    const okInBalance = this.balanceNodes.filter((n) => this.view.isOk(n));
    while (this.inflight < this.o.budget) {
      const { max, min } = this.load.spread(this.balanceNodes);
      if (max - min <= this.o.tolerance) return;
      const sources = okInBalance.filter((n) => !exhausted.has(n)).sort((a, b) => this.load.get(b) - this.load.get(a) || a - b);
      if (sources.length === 0) return;
      const src = sources[0];
      const dsts = okInBalance
        .filter((n) => this.incoming.get(n) < this.o.nodeBudget && this.load.get(src) - this.load.get(n) >= 2)
        .sort((a, b) => this.load.get(a) - this.load.get(b) || a - b);
      let moved = false;
      for (const dst of dsts) {
        const g = this.movable(byNode.get(src) ?? [], src, dst);
        if (!g) continue;
        this.startMove(g, dst, src, 'balance');
        moved = true;
        break;
      }
      if (!moved) exhausted.add(src);
    }
  }

  /** A healthy, idle group on `src` that `dst` is not in: not led by `src` first (no transfer needed), then the smallest. */
  private movable(candidates: readonly GroupView[], src: NodeId, dst: NodeId): GroupView | null {
    let best: GroupView | null = null;
    const key = (g: GroupView) => [g.leader === src ? 1 : 0, g.bytes ?? 0, g.id];
    for (const g of candidates) {
      if (g.move || this.touched.has(g.id) || g.voters.length !== this.o.rf || g.voters.includes(dst) || g.learners.length) continue;
      if (!this.canCommit(g) || g.voters.some((v) => !this.view.isOk(v) || !this.view.current(g, v))) continue;
      if (best === null) {
        best = g;
        continue;
      }
      const [a, b] = [key(g), key(best)];
      if (a[0] < b[0] || (a[0] === b[0] && (a[1] < b[1] || (a[1] === b[1] && a[2] < b[2])))) best = g;
    }
    return best;
  }

  /** A group whose leadership may move this run: idle, committing, not yet touched. */
  private transferable(g: GroupView): boolean {
    return !g.move && !this.touched.has(g.id) && g.leader !== null && this.canCommit(g);
  }

  /**
   * Phase 4: leaders off draining nodes, then leader balance over the ok nodes. A node with too many
   * leaders may share no group with a node with too few, so transfers follow a shortest augmenting
   * path (s leads g1 with a as voter, a leads g2 with t as voter ...): s loses one, t gains one, the
   * nodes between keep their count.
   */
  private balanceLeaders(): void {
    let left = this.o.leaderBudget;
    for (const g of this.groups) {
      if (left <= 0) return;
      if (g.leader === null || !this.view.isDraining(g.leader) || !this.transferable(g)) continue;
      const to = this.bestLeader(g, g.leader!);
      if (to !== null) {
        this.transfer(g, to);
        left--;
      }
    }
    const nodes = this.okNodes;
    if (nodes.length < 2 || left <= 0) return;
    const first = this.leads.spread(nodes);
    if (first.max - first.min <= this.o.leaderTolerance) return;
    const ledBy = new Map<NodeId, GroupView[]>();
    for (const g of this.groups) if (g.leader !== null) (ledBy.get(g.leader) ?? ledBy.set(g.leader, []).get(g.leader)!).push(g);
    while (left > 0) {
      const { max, min } = this.leads.spread(nodes);
      if (max - min <= this.o.leaderTolerance) return;
      const sources = [...nodes].sort((a, b) => this.leads.get(b) - this.leads.get(a) || a - b);
      let path: { g: GroupView; to: NodeId }[] | null = null;
      // Nodes reached by a failed search from a source with at least as many leaders reach no node
      // with two fewer than any later (smaller) source either: later searches skip them.
      const dead = new Set<NodeId>();
      for (const s of sources) {
        if (this.leads.get(s) - min < 2) break;
        if (dead.has(s)) continue;
        path = this.augmentingPath(s, ledBy, dead);
        if (path) break;
      }
      if (!path || path.length > left) return;
      for (const { g, to } of path) {
        const from = g.leader!;
        this.transfer(g, to);
        ledBy.set(from, ledBy.get(from)!.filter((x) => x !== g));
        left--;
      }
    }
  }

  /** BFS from `s` over "u leads g, v is an eligible voter of g" to a node with at least two leaders fewer than `s`. */
  private augmentingPath(s: NodeId, ledBy: Map<NodeId, GroupView[]>, dead: Set<NodeId>): { g: GroupView; to: NodeId }[] | null {
    const want = this.leads.get(s) - 2;
    const parent = new Map<NodeId, { prev: NodeId; g: GroupView } | null>([[s, null]]);
    const queue = [s];
    for (let i = 0; i < queue.length; i++) {
      const u = queue[i];
      for (const g of ledBy.get(u) ?? []) {
        if (!this.transferable(g)) continue;
        for (const v of g.voters) {
          if (parent.has(v) || dead.has(v) || !this.view.isOk(v) || !this.view.current(g, v)) continue;
          parent.set(v, { prev: u, g });
          if (this.leads.get(v) <= want) {
            const path: { g: GroupView; to: NodeId }[] = [];
            for (let at: NodeId = v; parent.get(at); at = parent.get(at)!.prev) path.unshift({ g: parent.get(at)!.g, to: at });
            return path;
          }
          queue.push(v);
        }
      }
    }
    for (const n of queue) dead.add(n);
    return null;
  }
}
