/**
 * The placement loop (docs/cluster.md "Placement"), run by the leader of shard 0 only: every
 * `cluster.placement_interval_ms` it asks each node for its view of the groups it holds (a signed
 * `GET /v1/cluster/status`), keeps a failure detector from who answered, records what the groups'
 * leaders report in the directory (a `cluster.placement` command in shard 0), runs the pure planner,
 * and carries out its steps: each one membership change on the group's leader
 * (`POST /v1/cluster/groups/:id/steps`), recorded in the directory once it committed. A new leader of
 * shard 0 picks up where the last one stopped: the moves in flight are in the directory.
 */
import type { Logger } from 'pino';
import type { GroupPlacementRecord, PlacementDrop } from '@strata/store';
import type { Forwarder } from '../forward';
import type { PeerSigner } from '../peer-auth';
import type { ClusterRuntime } from '../runtime';
import type { Shard } from '../../shards';
import type { PlacementDirectory } from './directory';
import { applyStep, type GroupView, type NodeStatus, type Step } from './model';
import { plan } from './planner';

/** One group as a node reports it in `GET /v1/cluster/status`. */
export interface ReportedShard {
  shard_id: number;
  leader: number | null;
  term: number;
  role: string;
  commit_index: number;
  /** the index of the membership in force (absent from nodes before this field) */
  conf_index?: number;
  members: { node_id: number; url: string | null; voter: boolean; match_index: number | null }[];
  /** records (events and memory units) in the reporting node's replica; absent from nodes before this field */
  records?: number | null;
  /** of a retired group only: whether the replica's webhook outbox is empty (it may then be removed) */
  outbox_empty?: boolean;
}

/** A member this many entries behind the leader's commit index still counts as caught up (writes go on while it is sampled). */
export const LAG_SLACK = 256;

/**
 * Pure: the group as its leader reports it (the report of the highest term that claims leadership).
 * `confIndex`: the index of its membership when that is committed (every node it does not name was
 * removed at or before it), else null (a change in flight, or a node that does not report it).
 */
export function observedGroup(groupId: number, reports: readonly ReportedShard[][]): { leader: number; voters: number[]; learners: number[]; lagging: number[]; confIndex: number | null } | null {
  let best: ReportedShard | null = null;
  for (const shards of reports) {
    for (const s of shards) if (s.shard_id === groupId && s.role === 'leader' && (best === null || s.term > best.term)) best = s;
  }
  if (!best || best.leader === null) return null;
  const commit = best.commit_index;
  const ids = (voter: boolean) => best!.members.filter((m) => m.voter === voter).map((m) => m.node_id).sort((a, b) => a - b);
  const lagging = best.members
    .filter((m) => m.node_id !== best!.leader && (m.match_index === null || commit - m.match_index > LAG_SLACK))
    .map((m) => m.node_id);
  const confIndex = typeof best.conf_index === 'number' && best.conf_index > 0 && best.conf_index <= commit ? best.conf_index : null;
  return { leader: best.leader, voters: ids(true), learners: ids(false), lagging, confIndex };
}

/**
 * Pure: the members a group's leader no longer names although the directory's record does: removed by a
 * committed membership entry whose step answer was lost (it timed out, or leadership moved, while the
 * change committed; or a former leader of shard 0 made the step and did not record it). Each gets a drop
 * at `confIndex`, the membership in force, which removed it or came after its removal: the node decides
 * from its own replica against it as against the removal's own index (replica-drop.ts). While that
 * membership is not committed (`confIndex` null) nothing is decided: `hold`, the record keeps its members
 * for one more round, so the next round still sees them go.
 */
export function removedMembers(
  recorded: Pick<GroupPlacementRecord, 'voters' | 'learners'> | null,
  seen: { voters: readonly number[]; learners: readonly number[]; confIndex: number | null } | null,
): { gone: number[]; index: number | null; hold: boolean } {
  if (!recorded || !seen) return { gone: [], index: null, hold: false };
  const gone = [...recorded.voters, ...recorded.learners].filter((n) => !seen.voters.includes(n) && !seen.learners.includes(n));
  if (gone.length === 0) return { gone, index: null, hold: false };
  return seen.confIndex === null ? { gone: [], index: null, hold: true } : { gone, index: seen.confIndex, hold: false };
}

/** Pure: each group's report by its leader (the report of the highest term that claims leadership). */
export function leaderReports(reports: readonly (ReportedShard[] | null)[]): Map<number, ReportedShard> {
  const best = new Map<number, ReportedShard>();
  for (const shards of reports) {
    for (const s of shards ?? []) {
      if (s.role !== 'leader') continue;
      const had = best.get(s.shard_id);
      if (!had || s.term > had.term) best.set(s.shard_id, s);
    }
  }
  return best;
}

/** Pure: each group's records as its leader reports them. */
export function reportedSizes(reports: readonly (ReportedShard[] | null)[]): Map<number, number> {
  return new Map([...leaderReports(reports)].flatMap(([g, s]) => (typeof s.records === 'number' ? [[g, s.records] as [number, number]] : [])));
}

/** Pure: the recorded move if it is still under way in the observed membership, else null. */
export function liveMove(move: GroupPlacementRecord['move'], voters: readonly number[], learners: readonly number[]): GroupPlacementRecord['move'] {
  if (!move) return null;
  if (!voters.includes(move.to) && !learners.includes(move.to)) return null; // never started, or cancelled
  if (voters.includes(move.to) && (move.from === null || !voters.includes(move.from))) return null; // done
  return move;
}

const sameRecord = (a: GroupPlacementRecord | null, b: GroupPlacementRecord) => a !== null && JSON.stringify(a) === JSON.stringify(b);

/** A record with these drops (none: the field is left out, as records were before drops existed). */
function withDrops(r: GroupPlacementRecord, drops: readonly PlacementDrop[]): GroupPlacementRecord {
  const { drops: _old, ...rest } = r;
  return drops.length ? { ...rest, drops: [...drops] } : rest;
}

/**
 * Pure: the drops of a group after a round: those settled (the node answered for good, or it left the
 * cluster and stayed silent too long) go, those of nodes that are members of the group again go (their
 * replica is in use), and a node just removed again gets the newer index (it covers the older).
 */
export function nextDrops(current: readonly PlacementDrop[], settled: ReadonlySet<PlacementDrop>, members: readonly number[], added: readonly PlacementDrop[]): PlacementDrop[] {
  const byNode = new Map<number, PlacementDrop>();
  for (const d of [...current.filter((d) => !settled.has(d) && !members.includes(d.node)), ...added]) {
    const had = byNode.get(d.node);
    if (!had || had.index < d.index) byNode.set(d.node, d);
  }
  return [...byNode.values()].sort((a, b) => a.node - b.node);
}

/**
 * Pure: whether a node's answer to a drop settles it (docs/cluster.md "Disk reclaimed"). `answer` is null
 * when the node could not be reached; `silentMs` how long it has not answered. Settled: it dropped its
 * replica or is a member again; or it left the cluster and has no such group at all (404: it never opened
 * it — a group a split placed on it while it was being removed, whose begin it never applied, as its
 * shard 0 no longer receives anything; it answered 404 every round, so the drop stayed for good and the
 * placement never settled, test/cluster/elastic.test.ts), or it left and has been silent for `deadAfterMs`.
 */
export function dropSettled(answer: { status: number; body: unknown } | null, inCluster: boolean, silentMs: number, deadAfterMs: number): boolean {
  if (answer === null) return !inCluster && silentMs >= deadAfterMs;
  const status = answer.status === 200 ? (answer.body as { status?: string } | null)?.status : undefined;
  if (status === 'dropped' || status === 'member') return true;
  return answer.status === 404 && !inCluster;
}

export interface ExecutorDeps {
  rt: ClusterRuntime;
  meta: Shard;
  directory: PlacementDirectory;
  fwd: Forwarder;
  signer: PeerSigner;
  /** this node's own report (what `GET /v1/cluster/status` answers) */
  localStatus: () => Promise<{ shards: ReportedShard[] }>;
  logger: Logger;
  onStep?: (step: Step, outcome: 'done' | 'failed') => void;
  /**
   * Every live group id (the key-range directory's), open on this node or not: a replica moved off this
   * node is closed here, and the groups it placed elsewhere are still this loop's (default: the open ones).
   */
  groupIds?: () => number[];
}

/** What the last round saw and did (for `GET /v1/cluster/status` and the metrics). */
export interface PlacementRound {
  at: string;
  nodes: { node_id: number; up: boolean; down_since: string | null }[];
  steps: (Step & { outcome: 'done' | 'failed'; error?: string })[];
  moves_in_flight: number;
  under_replicated: number;
}

export class PlacementExecutor {
  private readonly downSince = new Map<number, number>();
  /** members of placed groups that are no longer in the node set, with their URLs (from the last round) */
  private readonly leaving = new Map<number, string>();
  /** nodes asked to drop a replica that did not answer, since when (a node gone from the cluster is given up on) */
  private readonly dropUnanswered = new Map<number, number>();
  /** every node's URL as the groups' members name it in any report seen (a node that left every group is still reached for its drops) */
  private readonly urls = new Map<number, string>();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  last: PlacementRound | null = null;
  /** the groups' sizes their leaders reported in the last round (automatic splits and merges read them: split/auto.ts) */
  sizes: { at: number; records: Map<number, number> } | null = null;
  /** retired groups whose leader reported an empty webhook outbox in the last round (they may be removed: split/driver.ts) */
  outboxEmpty = new Set<number>();

  constructor(private readonly deps: ExecutorDeps) {}

  start(): void {
    const every = this.deps.rt.config.cluster.placement_interval_ms;
    const loop = () => {
      if (this.stopped) return;
      this.running = this.round()
        .catch((err) => this.deps.logger.warn({ err: (err as Error).message }, 'placement round failed'))
        .finally(() => {
          this.running = null;
          if (!this.stopped) this.timer = setTimeout(loop, every);
        });
    };
    this.timer = setTimeout(loop, every);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  /** One round; does nothing unless this node leads shard 0 and there are placed groups. */
  async round(now = Date.now()): Promise<void> {
    const { rt, meta } = this.deps;
    // every live group (a split adds groups while the cluster runs; one moved off this node is not open here)
    const groupIds = (this.deps.groupIds?.() ?? rt.shardIds()).filter((g) => g !== 0);
    // with shard 0 alone there is nothing to place: the nodes are asked only for the sizes automatic splits read
    if (!meta.log.isLeader() || (groupIds.length === 0 && rt.config.cluster.auto_split_records === 0)) {
      this.downSince.clear(); // a future term as leader starts from fresh observations
      this.leaving.clear();
      this.last = null;
      this.sizes = null;
      this.outboxEmpty = new Set();
      return;
    }
    // The node set is shard 0's voters. A node removed from it that still holds replicas of other
    // groups (seen in their members last round) is asked too and counts as draining: while it answers,
    // its groups hand leadership over and move away from it in order, instead of waiting for it to die.
    const nodes = rt.group(0).status().members.filter((m) => m.voter).map((m) => m.id);
    const leaving = [...this.leaving.keys()].filter((id) => !nodes.includes(id));
    const polled = [...nodes, ...leaving];
    const reports = await Promise.all(polled.map((id) => this.report(id, now)));
    this.sizes = { at: now, records: reportedSizes(reports) };
    this.outboxEmpty = new Set([...leaderReports(reports)].filter(([, s]) => s.outbox_empty === true).map(([g]) => g));
    if (groupIds.length === 0) {
      this.last = null; // only shard 0 (a cluster started with the defaults): nothing to place, the sizes are what was asked
      return;
    }
    const nodeStatus: NodeStatus[] = polled.map((id) => ({ id, down_since: this.downSince.get(id) ?? null, draining: !nodes.includes(id) }));
    this.leaving.clear();
    for (const shards of reports) {
      for (const s of shards ?? []) {
        for (const m of s.members) if (m.url && m.node_id !== rt.config.cluster.node_id) this.urls.set(m.node_id, m.url);
        if (s.shard_id === 0 || s.role !== 'leader') continue;
        for (const m of s.members) if (!nodes.includes(m.node_id) && m.url) this.leaving.set(m.node_id, m.url);
      }
    }

    // What the groups' leaders report becomes the directory's record of them.
    const views: GroupView[] = [];
    const changed = new Map<number, GroupPlacementRecord>();
    const records = new Map<number, GroupPlacementRecord>();
    // drops of members removed without a step answer (removedMembers), and groups held for a round
    const added = new Map<number, PlacementDrop[]>();
    const held = new Set<number>();
    for (const g of groupIds) {
      const recorded = this.deps.directory.recorded(g) ? this.deps.directory.get(g) : null;
      const seen = observedGroup(g, reports.filter((r): r is ReportedShard[] => r !== null));
      if (!seen && !recorded) continue; // not initialized yet
      const removed = removedMembers(recorded, seen);
      if (removed.hold) held.add(g);
      for (const node of removed.gone) {
        const url = this.urlOf(node);
        if (url) added.set(g, [...(added.get(g) ?? []), { node, index: removed.index!, url }]);
        else this.deps.logger.warn({ shard: g, node }, 'a replica removed from a node whose address is not known: not dropped');
      }
      if (removed.gone.length) this.deps.logger.info({ shard: g, nodes: removed.gone, removed_at: removed.index }, 'members removed without a recorded step: their replicas are dropped');
      const voters = removed.hold ? recorded!.voters : (seen?.voters ?? recorded!.voters);
      const learners = removed.hold ? recorded!.learners : (seen?.learners ?? recorded!.learners);
      const record = withDrops({
        group_id: g, voters, learners, leader: seen?.leader ?? recorded?.leader ?? null, move: liveMove(recorded?.move ?? null, voters, learners),
      }, recorded?.drops ?? []);
      records.set(g, record);
      if (!sameRecord(recorded, record)) changed.set(g, record);
      views.push({ id: g, voters, learners, leader: seen ? seen.leader : null, move: record.move, lagging: seen?.lagging ?? [] });
    }

    const o = rt.config.cluster;
    // a group held this round (a membership change not committed yet) takes no step: the leader would refuse it anyway
    const steps = plan(views, nodeStatus, now, {
      rf: o.replication_factor, deadAfter: o.dead_after_s * 1000, budget: o.max_moves, nodeBudget: Math.min(o.max_moves, 4),
    }).filter((step) => !held.has(step.group));
    const byGroup = new Map(views.map((v) => [v.id, v]));
    // Replicas removed from nodes are wiped there: each node is asked (replica-drop.ts) while the steps run.
    const pending = [...records.values()].flatMap((r) => (r.drops ?? []).map((d) => ({ group: r.group_id, drop: d })));
    const [outcomes, dropsSettled] = await Promise.all([
      Promise.all(steps.map((step) => this.carryOut(step, byGroup.get(step.group)!))),
      Promise.all(pending.map((p) => this.askDrop(p.group, p.drop, nodes, now))),
    ]);
    const settled = new Set(pending.filter((_, i) => dropsSettled[i]).map((p) => p.drop));
    for (const [i, step] of steps.entries()) {
      const o = outcomes[i];
      if (o.outcome !== 'done') continue;
      const v = byGroup.get(step.group)!;
      const after = applyStep({ id: v.id, voters: v.voters, learners: v.learners, leader: v.leader, move: v.move }, step);
      changed.set(step.group, { group_id: step.group, voters: after.voters, learners: after.learners, leader: after.leader, move: after.move });
      const url = step.kind === 'remove' ? this.urlOf(step.node) : null;
      if (step.kind === 'remove' && o.index !== undefined && url) added.set(step.group, [...(added.get(step.group) ?? []), { node: step.node, index: o.index, url }]);
    }
    for (const [g, record] of records) {
      const current = changed.get(g) ?? record;
      const drops = nextDrops(record.drops ?? [], settled, [...current.voters, ...current.learners], added.get(g) ?? []);
      const next = withDrops(current, drops);
      if (!sameRecord(record, next) || changed.has(g)) changed.set(g, next);
    }
    if (changed.size > 0) {
      await meta.log.propose({ type: 'cluster.placement', at: new Date(now).toISOString(), groups: [...changed.values()] });
    }
    this.last = {
      at: new Date(now).toISOString(),
      nodes: nodeStatus.map((n) => ({ node_id: n.id, up: n.down_since === null, down_since: n.down_since === null ? null : new Date(n.down_since).toISOString() })),
      steps: steps.map((s, i) => ({ ...s, ...outcomes[i] })),
      // after this round's steps: a move begun counts, a move completed does not
      moves_in_flight: views.filter((v) => (changed.get(v.id) ?? v).move !== null).length,
      under_replicated: views.filter((v) => v.voters.filter((n) => this.downSince.get(n) === undefined && nodes.includes(n)).length < o.replication_factor).length,
    };
  }

  /** A node's URL: from shard 0's membership, else (a node removed from it, still draining) the group's. */
  private urlOf(nodeId: number): string | null {
    return this.deps.rt.urlOf(nodeId, 0) ?? this.leaving.get(nodeId) ?? this.urls.get(nodeId) ?? null;
  }

  /** A node's report of its groups (null when it did not answer: the failure detector notes it). */
  private async report(nodeId: number, now: number): Promise<ReportedShard[] | null> {
    const { rt, fwd, signer } = this.deps;
    let shards: ReportedShard[] | null = null;
    if (nodeId === rt.config.cluster.node_id) {
      shards = (await this.deps.localStatus()).shards;
    } else {
      const url = this.urlOf(nodeId);
      const path = '/v1/cluster/status';
      const timeout = Math.max(500, Math.min(2000, rt.config.cluster.placement_interval_ms));
      try {
        const r = url ? await fwd.call(url, 'get', path, signer.sign(nodeId, 'GET', path, undefined), undefined, Date.now() + timeout) : null;
        if (r && r.status === 200) shards = (r.body as { shards: ReportedShard[] }).shards;
      } catch {
        shards = null;
      }
    }
    if (shards) this.downSince.delete(nodeId);
    else if (!this.downSince.has(nodeId)) this.downSince.set(nodeId, now);
    return shards;
  }

  /**
   * Asks a node to drop its replica of a group (docs/cluster.md "Disk reclaimed"). True when that is
   * settled (dropSettled): the node answered `dropped` or `member`, or it left the cluster (not in shard
   * 0's node set) and has no such group, or has not answered for `cluster.dead_after_s` (its data
   * directory is the operator's to delete).
   */
  private async askDrop(group: number, drop: PlacementDrop, nodes: readonly number[], now: number): Promise<boolean> {
    const { fwd, signer, rt } = this.deps;
    const path = `/v1/cluster/groups/${group}/drop`;
    const body = { index: drop.index };
    const url = rt.urlOf(drop.node, 0) ?? this.leaving.get(drop.node) ?? drop.url;
    const timeout = Math.max(500, Math.min(2000, rt.config.cluster.placement_interval_ms));
    const deadAfterMs = rt.config.cluster.dead_after_s * 1000;
    try {
      const r = await fwd.call(url, 'post', path, signer.sign(drop.node, 'POST', path, body), body, Date.now() + timeout);
      this.dropUnanswered.delete(drop.node);
      const settled = dropSettled(r, nodes.includes(drop.node), 0, deadAfterMs);
      if (settled) this.deps.logger.info({ shard: group, node: drop.node, removed_at: drop.index, status: r.status === 200 ? (r.body as { status?: string }).status : r.status }, 'replica drop settled');
      return settled;
    } catch {
      const since = this.dropUnanswered.get(drop.node) ?? now;
      this.dropUnanswered.set(drop.node, since);
      return dropSettled(null, nodes.includes(drop.node), now - since, deadAfterMs);
    }
  }

  /** One step on the group's leader; a failure is left to the next round (the planner sees what did commit). */
  private async carryOut(step: Step, view: GroupView): Promise<{ outcome: 'done' | 'failed'; error?: string; index?: number }> {
    const { fwd, signer, logger } = this.deps;
    const leaderUrl = view.leader === null ? null : this.urlOf(view.leader);
    const node = step.kind === 'transfer_leader' ? step.to : step.node;
    const body = { kind: step.kind, node, url: this.urlOf(node) };
    const path = `/v1/cluster/groups/${step.group}/steps`;
    let error: string | undefined;
    let index: number | undefined;
    try {
      if (!leaderUrl || !body.url) throw new Error('no address known for the leader or the node');
      const r = await fwd.call(leaderUrl, 'post', path, signer.sign(view.leader!, 'POST', path, body), body, Date.now() + 15_000);
      if (r.status !== 200) error = `${r.status} ${(r.body as { error?: string } | null)?.error ?? ''}`.trim();
      else index = (r.body as { index?: number } | null)?.index; // a removal's entry index: the removed node's drop names it
    } catch (err) {
      error = (err as Error).message;
    }
    const outcome = error === undefined ? 'done' : 'failed';
    this.deps.onStep?.(step, outcome);
    if (error !== undefined) logger.info({ step, err: error }, 'placement step not done; planned again next round');
    else logger.info({ step }, 'placement step done');
    return error === undefined ? { outcome, ...(index !== undefined ? { index } : {}) } : { outcome, error };
  }
}
