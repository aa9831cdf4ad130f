/**
 * Automatic splits and merges (docs/cluster.md "Automatic splits and merges"), on the leader of shard 0
 * only: a group storing more than `cluster.auto_split_records` records (events and memory units) is
 * split at the median of its users' keys, and two adjacent groups each storing fewer than
 * `cluster.auto_merge_records` are merged. The decision is this node's; what it decides goes through the
 * log as the operator's commands do (`cluster.split` begin in shard 0, ClusterService.split / merge), and
 * the split driver carries it out. So a new leader of shard 0 finishes what the last one began, and
 * decides again from what the groups' leaders report.
 *
 * No flapping: a merge needs both groups below the floor, and the floor is at most a quarter of the
 * split threshold (config.ts), so a merged group holds less than half of what would split it, and the
 * halves of a split group together hold more than the threshold, so they are never both below the floor.
 * At most one hand-over is in flight cluster-wide (the operator's included): nothing is decided while any
 * split or merge is in flight, dropping or being put back, nor from sizes reported before the last one
 * ended, as this loop first saw it ended (a group's counters count moved records twice between a commit
 * and its drop).
 */
import type { Logger } from 'pino';
import { rangesOfGroup, type KeyRangeTable } from '@strata/store';

export interface AutoSettings {
  /** split a group storing more records than this; 0: never */
  splitAbove: number;
  /** merge two adjacent groups each storing fewer records than this; 0: never */
  mergeBelow: number;
}

export type AutoCandidate =
  | { kind: 'split'; group: number; records: number }
  | { kind: 'merge'; group: number; with: number; records: number };

/**
 * Pure: what the cluster should do about its sizes, best first (the caller tries them in order: a split
 * needs two users to cut between). Splits come before merges; the biggest group first; the merge of
 * the adjacent pair smallest together, the bigger group keeping the range (less to copy). Shard 0
 * neither gives its range away nor receives one: it is on every node, so what it owns is written on
 * every node. A group with no reported size is left alone.
 */
export function autoCandidates(table: KeyRangeTable, sizes: ReadonlyMap<number, number>, s: AutoSettings): AutoCandidate[] {
  const groups = [...new Set(table.ranges.map((r) => r.group))];
  const out: AutoCandidate[] = [];
  if (s.splitAbove > 0) {
    const big = groups.filter((g) => (sizes.get(g) ?? 0) > s.splitAbove).sort((a, b) => sizes.get(b)! - sizes.get(a)! || a - b);
    out.push(...big.map((g): AutoCandidate => ({ kind: 'split', group: g, records: sizes.get(g)! })));
  }
  if (s.mergeBelow > 0) {
    const pairs: AutoCandidate[] = [];
    for (let i = 1; i < table.ranges.length; i++) {
      const a = table.ranges[i - 1].group;
      const b = table.ranges[i].group;
      const [sa, sb] = [sizes.get(a), sizes.get(b)];
      if (a === b || a === 0 || b === 0 || sa === undefined || sb === undefined) continue;
      if (sa >= s.mergeBelow || sb >= s.mergeBelow) continue;
      // a donor gives its one range; each group owns one (splits and merges keep them contiguous)
      if (rangesOfGroup(table, a).length !== 1 || rangesOfGroup(table, b).length !== 1) continue;
      const [keep, donor] = sa > sb || (sa === sb && a < b) ? [a, b] : [b, a];
      pairs.push({ kind: 'merge', group: keep, with: donor, records: sa + sb });
    }
    out.push(...pairs.sort((x, y) => x.records - y.records || x.group - y.group));
  }
  return out;
}

/** What the sizes are read from: the placement loop's last round (the groups' leaders' reports). */
export interface SizeReport {
  /** when the round began asking the nodes */
  at: number;
  /** records per group, as its leader reported them */
  records: ReadonlyMap<number, number>;
}

export interface AutoScalerDeps {
  settings: AutoSettings;
  isLeader: () => boolean;
  /** a split, merge or abort in flight, dropping or being put back (any, the operator's too) */
  busy: () => boolean;
  table: () => KeyRangeTable;
  sizes: () => SizeReport | null;
  /** begins a split at the median of the group's users' keys; false when it has fewer than two users */
  split: (group: number) => Promise<boolean>;
  merge: (group: number, donor: number) => Promise<void>;
  logger: Logger;
  onDecision?: (d: AutoCandidate) => void;
  now?: () => number;
}

/** A decision taken (for the status). */
export type AutoDecision = AutoCandidate & { at: string };

export class AutoScaler {
  /** when a hand-over was last seen in flight (or begun here): sizes reported before it ended are not used */
  private busySince = 0;
  private wasBusy = false;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  readonly decisions: AutoDecision[] = [];
  /** the last candidates refused (e.g. a group with one user cannot be split), for the status */
  skipped: { group: number; reason: string }[] = [];

  constructor(private readonly deps: AutoScalerDeps, private readonly everyMs: number) {}

  get enabled(): boolean {
    return this.deps.settings.splitAbove > 0 || this.deps.settings.mergeBelow > 0;
  }

  start(): void {
    if (!this.enabled) return;
    const loop = () => {
      if (this.stopped) return;
      this.running = this.tick()
        .then(() => undefined, (err: unknown) => this.deps.logger.warn({ err: (err as Error).message }, 'automatic split or merge not begun; deciding again next round'))
        .finally(() => {
          this.running = null;
          if (!this.stopped) this.timer = setTimeout(loop, this.everyMs);
        });
    };
    this.timer = setTimeout(loop, this.everyMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  /** One decision at most: the first candidate that can be begun. */
  async tick(): Promise<AutoDecision | null> {
    const now = (this.deps.now ?? Date.now)();
    if (!this.deps.isLeader()) {
      this.busySince = now; // a new term starts from sizes reported after it began
      return null;
    }
    if (this.deps.busy()) {
      this.busySince = now;
      this.wasBusy = true;
      return null;
    }
    if (this.wasBusy) {
      // the first look that finds the hand-over ended: a round begun before it may have read a group's
      // size before the drop (the last tick that saw it busy may be older than that round)
      this.wasBusy = false;
      this.busySince = now;
      return null;
    }
    const report = this.deps.sizes();
    if (!report || report.at <= this.busySince) return null;
    const skipped: { group: number; reason: string }[] = [];
    for (const c of autoCandidates(this.deps.table(), report.records, this.deps.settings)) {
      if (c.kind === 'split' && !(await this.deps.split(c.group))) {
        skipped.push({ group: c.group, reason: 'fewer than two users: no point moves any' });
        continue;
      }
      if (c.kind === 'merge') await this.deps.merge(c.group, c.with);
      this.busySince = (this.deps.now ?? Date.now)();
      const d: AutoDecision = { ...c, at: new Date(now).toISOString() };
      this.decisions.push(d);
      if (this.decisions.length > 20) this.decisions.shift();
      this.deps.onDecision?.(c);
      this.deps.logger.info(d, c.kind === 'split' ? 'automatic split begun: the group passed cluster.auto_split_records' : 'automatic merge begun: both groups are below cluster.auto_merge_records');
      this.skipped = skipped;
      return d;
    }
    this.skipped = skipped;
    return null;
  }
}
