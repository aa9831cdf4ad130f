/**
 * Retrieval reinforcement: the top units of each retrieve/context answer become a little more
 * important (decay.ts `retrievalDelta`) and restart their decay clock (`last_retrieved_at`).
 *
 * Retrieval only calls `record` (synchronous, a few map updates): it never waits for a write. The
 * batcher keeps, per shard, the units returned since its last flush, and every `intervalMs` proposes ONE
 * `memory.reinforce` command per shard with all of them, so a read-heavy node adds one log entry per
 * shard every few seconds, not one per request.
 *
 * Losing reinforcements is acceptable and happens on purpose in three cases: a shard this node does
 * not lead (a follower serving reads proposes nothing and forwards nothing: the batch is dropped), a
 * proposal that fails (no leader, shutting down), and a batch over `maxPending` units (further units
 * wait for the next interval's retrievals). Importance is a ranking nudge, not data.
 */
import type { Logger } from 'pino';
import { retrievalDelta } from '@strata/memory/retrieval';
import type { MemoryUnit, ReinforceAnswer, ReinforceCommand } from '@strata/store';
import type { Config } from '../config';
import type { Shard } from '../shards';

/** The units returned for one user's retrievals since the last flush. */
export interface PendingHit {
  /** times returned */
  retrievals: number;
  /** last time returned (epoch ms) */
  at: number;
  /** stored importance as last seen in an answer (the base of the delta) */
  importance: number;
}

/** user id → unit id → hit */
export type ShardBatch = Map<string, Map<string, PendingHit>>;

/**
 * The command for one shard's batch (pure). Users and units in id order, so the same batch always makes
 * the same command; null when nothing would change.
 */
export function buildReinforceCommand(batch: ShardBatch, gain: number, at: number): ReinforceCommand | null {
  const users: ReinforceCommand['users'] = [];
  for (const userId of [...batch.keys()].sort()) {
    const hits = batch.get(userId)!;
    const units = [...hits.keys()].sort().map((unitId) => {
      const h = hits.get(unitId)!;
      return { unit_id: unitId, delta: retrievalDelta(h.importance, h.retrievals, gain), retrievals: h.retrievals, at: new Date(h.at).toISOString() };
    });
    if (units.length > 0) users.push({ user_id: userId, units });
  }
  return users.length > 0 ? { type: 'memory.reinforce', at: new Date(at).toISOString(), users } : null;
}

export interface ReinforcementOptions {
  /** the shard that holds a user's memory, as open on this node (undefined: not open here, nothing to reinforce from here) */
  shardOf: (userId: string) => Shard | undefined;
  logger: Logger;
  /** units reinforced per answer (its first ones); 0 turns reinforcement off */
  top: number;
  gain: number;
  intervalMs: number;
  /** units kept per shard between flushes (default 10,000) */
  maxPending?: number;
  /** how long `stop()` waits for the last flush (default 2000 ms) */
  stopWaitMs?: number;
  now?: () => number;
}

export interface FlushReport {
  /** commands proposed and applied */
  commands: number;
  /** units named in them */
  units: number;
  /** units dropped: shard not led here, or the proposal failed */
  dropped: number;
}

export class ReinforcementBatcher {
  private readonly pending = new Map<number, { shard: Shard; batch: ShardBatch; size: number }>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<FlushReport> | null = null;
  private stopped = false;
  private readonly now: () => number;

  constructor(private readonly o: ReinforcementOptions) {
    this.now = o.now ?? Date.now;
  }

  /** Notes the top units of one answer (any user's: org knowledge goes to its owner's shard). Cheap and synchronous. */
  record(results: readonly { unit: Pick<MemoryUnit, 'id' | 'user_id' | 'importance'> }[]): void {
    if (this.stopped || this.o.top <= 0) return;
    const at = this.now();
    const max = this.o.maxPending ?? 10_000;
    for (const { unit } of results.slice(0, this.o.top)) {
      const shard = this.o.shardOf(unit.user_id);
      if (!shard) continue; // its group is not open here: this node does not lead it, so nothing would be proposed anyway
      let entry = this.pending.get(shard.id);
      if (!entry) this.pending.set(shard.id, (entry = { shard, batch: new Map(), size: 0 }));
      let hits = entry.batch.get(unit.user_id);
      const hit = hits?.get(unit.id);
      if (hit) {
        hit.retrievals++;
        hit.at = Math.max(hit.at, at);
        hit.importance = unit.importance;
        continue;
      }
      if (entry.size >= max) continue;
      if (!hits) entry.batch.set(unit.user_id, (hits = new Map()));
      hits.set(unit.id, { retrievals: 1, at, importance: unit.importance });
      entry.size++;
    }
  }

  /** Units waiting for the next flush (tests, metrics). */
  pendingUnits(): number {
    let n = 0;
    for (const e of this.pending.values()) n += e.size;
    return n;
  }

  start(): void {
    if (this.stopped || this.timer || this.o.top <= 0) return;
    this.timer = setInterval(() => void this.flush(), this.o.intervalMs);
    this.timer.unref?.();
  }

  /**
   * Stops the timer, then proposes what is pending once more (a graceful stop loses nothing it can keep),
   * waiting at most `stopWaitMs` (default 2 s) for it: a log without quorum must not hold the stop up.
   */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    let timeout: NodeJS.Timeout | undefined;
    await Promise.race([
      this.flush(),
      new Promise<void>((resolve) => {
        timeout = setTimeout(resolve, this.o.stopWaitMs ?? 2000);
      }),
    ]);
    clearTimeout(timeout);
    this.stopped = true;
  }

  /** Proposes one command per shard with what was recorded since the last flush. Flushes never overlap. */
  flush(): Promise<FlushReport> {
    if (this.flushing) return this.flushing;
    const run = this.flushAll().finally(() => {
      this.flushing = null;
    });
    this.flushing = run;
    return run;
  }

  private async flushAll(): Promise<FlushReport> {
    const report: FlushReport = { commands: 0, units: 0, dropped: 0 };
    const taken = [...this.pending.values()];
    this.pending.clear();
    await Promise.all(taken.map(async ({ shard, batch, size }) => {
      if (!shard.log.isLeader()) {
        report.dropped += size;
        return;
      }
      const command = buildReinforceCommand(batch, this.o.gain, this.now());
      if (!command) return;
      try {
        const answer = (await shard.log.propose(command)) as ReinforceAnswer;
        report.commands++;
        report.units += size;
        this.o.logger.debug({ shard: shard.id, units: size, skipped: answer?.skipped ?? 0 }, 'retrieval reinforcement applied');
      } catch (err) {
        report.dropped += size;
        this.o.logger.debug({ err, shard: shard.id, units: size }, 'retrieval reinforcement dropped');
      }
    }));
    return report;
  }
}

/** The batcher's settings from the configuration. */
export function reinforcementSettings(config: Config): Pick<ReinforcementOptions, 'top' | 'gain' | 'intervalMs'> {
  return { top: config.memory.reinforce_top, gain: config.memory.reinforce_gain, intervalMs: config.memory.reinforce_interval_ms };
}
