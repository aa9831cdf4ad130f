/**
 * Pruning (forgetting for good), off by default (`memory.prune_enabled`). On each shard's leader, every
 * `intervalMs`, one bounded pass: up to `scanPerPass` units read from where the last pass stopped
 * (wrapping around), and those that are forgettable (decay.ts `forgettableImportance`: a current L1
 * unit, not organization knowledge, untouched for the minimum age, effective importance below the
 * threshold) and that no insight derives from (no incoming DerivedFrom edge) are proposed for deletion,
 * at most `maxPerPass`, in one `memory.prune` command per user. Apply checks every condition again on
 * the state it finds (an insight made, or a retrieval applied, since the pass keeps the unit), then
 * deletes through the hard-delete path. Every pass that prunes logs what went and why.
 */
import type { Logger } from 'pino';
import { forgettableImportance, type ForgettingSettings } from '@strata/memory/retrieval';
import { prefixRange, SEP, type MemoryUnit, type PruneAnswer, type PruneCandidate, type PruneCommand } from '@strata/store';
import type { Config } from '../config';
import type { Shard } from '../shards';

export interface PruningOptions extends ForgettingSettings {
  shard: Shard;
  logger: Logger;
  enabled: boolean;
  intervalMs: number;
  scanPerPass: number;
  maxPerPass: number;
  now?: () => number;
}

export interface PruneReport {
  scanned: number;
  /** forgettable by importance and age */
  candidates: number;
  /** forgettable but an insight derives from them: kept */
  protected_by_insight: number;
  pruned: number;
  /** proposed but kept by apply's checks, by reason */
  kept: Record<string, number>;
  /** users whose proposal failed */
  errors: number;
}

const emptyReport = (): PruneReport => ({ scanned: 0, candidates: 0, protected_by_insight: 0, pruned: 0, kept: {}, errors: 0 });

export class PruningWorker {
  /** units key (user \0 unit_id) where the last pass stopped; null: from the start */
  private cursor: string | null = null;
  private timer: NodeJS.Timeout | null = null;
  private inFlight: Promise<unknown> | null = null;
  private stopped = false;
  private readonly now: () => number;

  constructor(private readonly o: PruningOptions) {
    this.now = o.now ?? Date.now;
  }

  start(): void {
    if (!this.o.enabled || this.stopped || this.timer) return;
    this.timer = setInterval(() => {
      if (this.inFlight) return;
      this.inFlight = this.tick()
        .catch((err) => this.o.logger.error({ err, shard: this.o.shard.id }, 'pruning pass failed'))
        .finally(() => (this.inFlight = null));
    }, this.o.intervalMs);
    this.timer.unref?.();
  }

  /** Stops the timer and waits for the pass in flight (its proposals included). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    while (this.inFlight) await this.inFlight;
  }

  /** One pass; public so tests drive it with their clock. Does nothing when disabled or not the leader. */
  async tick(): Promise<PruneReport> {
    const report = emptyReport();
    const { shard } = this.o;
    if (!this.o.enabled || !shard.log.isLeader()) return report;
    const now = this.now();
    const byUser = new Map<string, PruneCandidate[]>();
    let chosen = 0;
    let last: string | null = null;
    const range = this.cursor === null ? { limit: this.o.scanPerPass } : { gt: this.cursor, limit: this.o.scanPerPass };
    let full = false;
    for await (const [key, unit] of shard.db.units.iterator(range)) {
      if (chosen >= this.o.maxPerPass) {
        full = true;
        break;
      }
      last = key;
      report.scanned++;
      const candidate = await this.judge(unit, now, report);
      if (!candidate) continue;
      let list = byUser.get(unit.user_id);
      if (!list) byUser.set(unit.user_id, (list = []));
      list.push(candidate);
      chosen++;
    }
    // Stopped early or a full page: resume after the last unit judged. A short page reached the end: start over.
    this.cursor = full || report.scanned >= this.o.scanPerPass ? last : null;

    for (const [userId, units] of byUser) {
      if (this.stopped || !shard.log.isLeader()) break;
      const command: PruneCommand = { type: 'memory.prune', user_id: userId, at: new Date(now).toISOString(), below: this.o.below, units };
      try {
        const answer = (await shard.log.propose(command)) as PruneAnswer;
        report.pruned += answer.deleted_unit_ids.length;
        for (const k of answer.kept) report.kept[k.reason] = (report.kept[k.reason] ?? 0) + 1;
        const deleted = new Set(answer.deleted_unit_ids);
        this.o.logger.info({
          shard: shard.id, user_id: userId, below: this.o.below, half_life_days: this.o.halfLifeDays, min_age_days: this.o.minAgeDays,
          pruned: units.filter((u) => deleted.has(u.unit_id)).map((u) => ({ unit_id: u.unit_id, effective_importance: round4(u.effective_importance), importance: u.importance, last_retrieved_at: u.last_retrieved_at })),
          kept: answer.kept, edges_removed: answer.deleted_edge_ids.length,
        }, 'pruned forgettable memory units (effective importance below the threshold, untouched for the minimum age, no insight depending on them)');
      } catch (err) {
        report.errors++;
        this.o.logger.warn({ err, shard: shard.id, user_id: userId }, 'pruning proposal failed; retried on a later pass');
        // the units are judged again when the scan comes back to them
      }
    }
    return report;
  }

  /** The unit as a prune candidate, or null: not forgettable, or an insight derives from it. */
  private async judge(unit: MemoryUnit, now: number, report: PruneReport): Promise<PruneCandidate | null> {
    if (unit.level !== 1 || unit.retired_at !== null || unit.org_id !== null) return null; // cheap tests before any read
    const { db } = this.o.shard;
    const key = unit.user_id + SEP + unit.id;
    const stats = await db.unitStats.get(key);
    const last = stats?.last_retrieved_at ?? null;
    const effective = forgettableImportance({ ...unit, last_retrieved_at: last }, now, this.o);
    if (effective === null) return null;
    report.candidates++;
    for await (const entry of db.adjacency.values(prefixRange(unit.user_id, unit.id))) {
      if (entry.relation === 'DerivedFrom' && !entry.out) {
        report.protected_by_insight++;
        return null;
      }
    }
    return { unit_id: unit.id, importance: unit.importance, last_retrieved_at: last, effective_importance: effective };
  }
}

function round4(x: number): number {
  return Math.round(x * 10_000) / 10_000;
}

/** The worker's settings from the configuration. */
export function pruningSettings(config: Config): Omit<PruningOptions, 'shard' | 'logger' | 'now'> {
  const m = config.memory;
  return {
    enabled: m.prune_enabled, below: m.prune_below, minAgeDays: m.prune_min_age_days, halfLifeDays: m.importance_half_life_days,
    intervalMs: m.prune_interval_ms, scanPerPass: m.prune_scan_per_pass, maxPerPass: m.prune_max_per_pass,
  };
}
