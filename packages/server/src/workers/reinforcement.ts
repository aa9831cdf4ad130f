/**
 * Retrieval reinforcement: the top units of each retrieve/context answer become a little more
 * important (decay.ts `retrievalDelta`) and restart their decay clock (`last_retrieved_at`).
 *
 * Retrieval only calls `record` (synchronous, a few map updates): it never waits for a write. The
 * batcher keeps, per shard, the units returned since its last flush, and every `intervalMs` proposes
 * them as `memory.reinforce` commands of at most `commandUnits` units each (64), one after another, so a
 * read-heavy node adds a few log entries per shard every few seconds, not one per request, and no apply
 * holds the event loop for long.
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
  return buildReinforceCommands(batch, gain, at, Infinity)[0] ?? null;
}

/**
 * The commands for one shard's batch (pure): the units of `buildReinforceCommand`'s one command, in the same
 * order, cut into commands of at most `maxUnits` units each (a user's units may go on in the next command).
 * Applying them in order leaves the state the one command leaves: each unit is named once, and what apply
 * does to a unit depends on that unit's record and stats alone.
 */
export function buildReinforceCommands(batch: ShardBatch, gain: number, at: number, maxUnits: number): ReinforceCommand[] {
  const commands: ReinforceCommand[] = [];
  const atIso = new Date(at).toISOString();
  let users: ReinforceCommand['users'] = [];
  let size = 0;
  for (const userId of [...batch.keys()].sort()) {
    const hits = batch.get(userId)!;
    let units: ReinforceCommand['users'][number]['units'] = [];
    for (const unitId of [...hits.keys()].sort()) {
      const h = hits.get(unitId)!;
      units.push({ unit_id: unitId, delta: retrievalDelta(h.importance, h.retrievals, gain), retrievals: h.retrievals, at: new Date(h.at).toISOString() });
      if (++size >= maxUnits) {
        users.push({ user_id: userId, units });
        commands.push({ type: 'memory.reinforce', at: atIso, users });
        users = [];
        units = [];
        size = 0;
      }
    }
    if (units.length > 0) users.push({ user_id: userId, units });
  }
  if (users.length > 0) commands.push({ type: 'memory.reinforce', at: atIso, users });
  return commands;
}

/**
 * Units named in one `memory.reinforce` command at most. A command's apply and the index refresh after it
 * run on the event loop in one piece, ~130 µs a unit (20 users × 1,000 events, 8 clients: ~1,000 units
 * every 3 s were a stall of 50-80 ms, the largest part of the slowest 2% of queries' time; issue 28,
 * docs/performance.md "Tenth round"): in commands of 64 each apply is a few milliseconds, and the loop
 * turns between them (each is proposed once the previous one is applied).
 */
export const REINFORCE_COMMAND_UNITS = 64;

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
  /** units named in one command at most (default REINFORCE_COMMAND_UNITS); a flush proposes a shard's commands one after another */
  commandUnits?: number;
  /** how long `stop()` waits for the last flush (default 2000 ms) */
  stopWaitMs?: number;
  now?: () => number;
}

export interface FlushReport {
  /** commands proposed and applied (a shard's batch is cut into commands of `commandUnits` units at most) */
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

  /** Proposes, per shard, what was recorded since the last flush (commands of `commandUnits` units at most, one after another). Flushes never overlap. */
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
      const commands = buildReinforceCommands(batch, this.o.gain, this.now(), this.o.commandUnits ?? REINFORCE_COMMAND_UNITS);
      // one after another: each apply (and the index refresh after it) is a piece of the event loop's time
      // of its own, with other work between them, instead of one long piece for the whole batch
      for (const [i, command] of commands.entries()) {
        const units = unitsOf(command);
        try {
          if (i > 0 && !shard.log.isLeader()) throw new Error('no longer the leader');
          const answer = (await shard.log.propose(command)) as ReinforceAnswer;
          report.commands++;
          report.units += units;
          this.o.logger.debug({ shard: shard.id, units, skipped: answer?.skipped ?? 0 }, 'retrieval reinforcement applied');
        } catch (err) {
          // the rest of the batch is dropped with it (a lost reinforcement is harmless)
          const left = commands.slice(i).reduce((n, c) => n + unitsOf(c), 0);
          report.dropped += left;
          this.o.logger.debug({ err, shard: shard.id, units: left }, 'retrieval reinforcement dropped');
          return;
        }
      }
    }));
    return report;
  }
}

const unitsOf = (command: ReinforceCommand) => command.users.reduce((n, u) => n + u.units.length, 0);

/** The batcher's settings from the configuration. */
export function reinforcementSettings(config: Config): Pick<ReinforcementOptions, 'top' | 'gain' | 'intervalMs'> {
  return { top: config.memory.reinforce_top, gain: config.memory.reinforce_gain, intervalMs: config.memory.reinforce_interval_ms };
}
