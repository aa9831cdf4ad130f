import { InvariantError, type SnapshotPoint, type SnapshotReader, type SnapshotWriter } from '@strata/raft';
import { ApplyContext, PendingWrites, readStable, type StableReads } from './apply-context';
import { applyApiKeyCreate, applyApiKeyRevoke, applyAuthBootstrap, applySetPassword } from './apply/auth';
import { applyIngest } from './apply/events';
import { applyPrune, applyReinforce } from './apply/importance';
import { applyImport } from './apply/import';
import { applyL3Plan, applyTaskStatus } from './apply/l3';
import { applyEdgeAdd, applyMemoryDelete, applySemanticExecute, applySemanticPlan } from './apply/maintenance';
import { applyConsolidate, applyConsolidateUsers, applyConsolidationFailed, applyInsights, indexPendingByUser } from './apply/memory';
import { applyPlacement } from './apply/placement';
import { applyKeyRanges, applyKeySplit, applyRemoveGroup } from './apply/key-ranges';
import { FENCES_KEY, applyRangeClear, applyRangeDrop, applyRangeFence, applyRangeReceive, applyRangeSeed, applyRangeUnfence, fenceRefusal } from './range-split';
import { applyUserOrg } from './apply/users';
import { AssetReferenceChanges } from './apply/assets';
import { LIVE_WEBHOOKS_KEY, applyWebhookAdvance, applyWebhookCreate, applyWebhookDelete, enqueueWebhookDeliveries } from './apply/webhooks';
import type { Command, CommandOf, CommandType, IngestCommand } from './commands';
import { NO_EFFECTS, resolveEffects, trackedSublevels, type ApplyEffects, type TrackedKind } from './effects';
import type { StateDb, Sub } from './db';
import { restoreImage, writeImage } from './snapshot';

/** The apply function of one command type: the command narrowed to that type, its answer typed. */
type HandlerOf<K extends CommandType> = (db: StateDb, ctx: ApplyContext, command: CommandOf<K>) => Promise<unknown>;

/** Ingest, plus the per-user index of pending entries that the consolidation worker reads. */
async function applyIngestIndexed(db: StateDb, ctx: ApplyContext, cmd: IngestCommand) {
  const answer = await applyIngest(db, ctx, cmd);
  await indexPendingByUser(db, ctx, cmd, answer);
  return answer;
}

/** One handler per command type: the whole write side of Strata, in one table. */
const HANDLERS = {
  'events.ingest': applyIngestIndexed,
  'auth.bootstrap': applyAuthBootstrap,
  'auth.set_password': applySetPassword,
  'apikey.create': applyApiKeyCreate,
  'apikey.revoke': applyApiKeyRevoke,
  'memory.consolidate': applyConsolidate,
  'memory.consolidate_users': applyConsolidateUsers,
  'memory.consolidation_failed': applyConsolidationFailed,
  'memory.insights': applyInsights,
  'l3.plan': applyL3Plan,
  'l3.task_status': applyTaskStatus,
  'graph.add_edge': applyEdgeAdd,
  'memory.delete': applyMemoryDelete,
  'semantic.plan': applySemanticPlan,
  'semantic.execute': applySemanticExecute,
  'memory.reinforce': applyReinforce,
  'memory.prune': applyPrune,
  'user.set_org': applyUserOrg,
  'import.records': applyImport,
  'webhook.create': applyWebhookCreate,
  'webhook.delete': applyWebhookDelete,
  'webhook.advance': applyWebhookAdvance,
  'cluster.placement': applyPlacement,
  'cluster.ranges': applyKeyRanges,
  'cluster.split': applyKeySplit,
  'cluster.remove_group': applyRemoveGroup,
  'range.fence': applyRangeFence,
  'range.unfence': applyRangeUnfence,
  'range.seed': applyRangeSeed,
  'range.drop': applyRangeDrop,
  'range.receive': applyRangeReceive,
  'range.clear': applyRangeClear,
} satisfies { [K in CommandType]: HandlerOf<K> };

/** What applying a command of type K answers (a deterministic failure is an answer too, see errors.ts). */
export type CommandAnswer<K extends CommandType> = Awaited<ReturnType<(typeof HANDLERS)[K]>>;

/** Runs the handler of the command's own type (TypeScript cannot correlate the union by itself). */
function runHandler<K extends CommandType>(db: StateDb, ctx: ApplyContext, command: CommandOf<K>): Promise<CommandAnswer<K>> {
  return (HANDLERS[command.type as K] as HandlerOf<K>)(db, ctx, command) as Promise<CommandAnswer<K>>;
}

/** Called after each apply, in log order, with what the command answered and what it changed (effects.ts). */
export type AppliedListener = (index: number, command: Command, result: unknown, effects: ApplyEffects) => void;
/** Called after the whole state was replaced by a snapshot: derived indexes rebuild from LevelDB. */
export type RestoredListener = (index: number) => void;

/** One committed log entry to apply: a command, or (null) an index that carries none, with meta records to keep. */
export interface BatchEntry {
  index: number;
  term: number;
  command: Command | null;
  /** `meta` records written with the entry (the log layer's replicated facts, e.g. membership) */
  meta?: Record<string, unknown>;
}

/** Entries applied but not yet written: their writes, where the applied index got to, what to tell listeners. */
interface OpenRun {
  pending: PendingWrites;
  applied: number;
  term: number;
  done: { index: number; command: Command; result: unknown; effects: ApplyEffects }[];
}

/**
 * Commands whose apply reads only through its ApplyContext by point reads (never a range of
 * LevelDB), so the writes of earlier commands of the same batch, not yet in LevelDB, are all it
 * needs to see. Anything else is applied alone, after the batch before it is written.
 */
const BATCHABLE: ReadonlySet<CommandType> = new Set<CommandType>(['events.ingest']);

const APPLIED_KEY = 'applied_index';
/** term of the entry at the applied index (a Raft snapshot names it); 0 for a single-node LocalLog */
const APPLIED_TERM_KEY = 'applied_term';

/**
 * Applies committed commands, in log order, exactly once. Each command's writes and the new applied
 * index go to LevelDB in one atomic batch, so after a crash the state is exactly "applied up to N"
 * and the log replays from N+1. Applies are serialized; the result of a command is returned to the
 * proposer (deterministic failures are results too, see errors.ts).
 */
export class StateMachine {
  private applied = 0;
  private term = 0;
  private readonly listeners: AppliedListener[] = [];
  private readonly restoredListeners: RestoredListener[] = [];
  private readonly tracking: ReadonlyMap<Sub<unknown>, TrackedKind>;
  /** the fences and the live webhook count as LevelDB holds them, read by every command (StableReads) */
  private readonly stable: StableReads;

  private constructor(readonly db: StateDb) {
    this.tracking = trackedSublevels(db);
    this.stable = { sub: db.meta, keys: new Set([FENCES_KEY, LIVE_WEBHOOKS_KEY]), values: new Map() };
  }

  static async open(db: StateDb): Promise<StateMachine> {
    const sm = new StateMachine(db);
    await sm.reload();
    return sm;
  }

  private async reload(): Promise<void> {
    this.applied = ((await this.db.meta.get(APPLIED_KEY)) as number | undefined) ?? 0;
    this.term = ((await this.db.meta.get(APPLIED_TERM_KEY)) as number | undefined) ?? 0;
  }

  appliedIndex(): number {
    return this.applied;
  }

  /** The log term of the entry at appliedIndex() (0 when the log has no terms). */
  appliedTerm(): number {
    return this.term;
  }

  onRestored(listener: RestoredListener): void {
    this.restoredListeners.push(listener);
  }

  /**
   * Replaces the whole state by a snapshot's image (see snapshot.ts), streamed: verified whole first,
   * then written in bounded batches. Then tells the restore listeners so derived indexes are rebuilt.
   * A crash midway leaves applied index 0, so the log layer restores again on restart.
   */
  async restore(image: SnapshotReader): Promise<void> {
    this.stable.values.clear();
    await restoreImage(this.db, image, [APPLIED_KEY, APPLIED_TERM_KEY]);
    this.stable.values.clear();
    await this.reload();
    for (const listener of this.restoredListeners) listener(this.applied);
  }

  /**
   * Deletes the whole state (a replica wiped from this node: its files go, the applied index is 0
   * again), then tells the restore listeners, as a restore does, so derived state is dropped too.
   */
  async reset(): Promise<void> {
    this.stable.values.clear();
    await this.db.reset();
    this.stable.values.clear();
    await this.reload();
    for (const listener of this.restoredListeners) listener(this.applied);
  }

  /**
   * Streams a consistent image of the whole state at appliedIndex() into `out` and returns that index
   * and its term. What it writes is fixed at the call (a LevelDB snapshot, before any await), so applies
   * may go on while it streams; the call itself must come between applies (the Raft driver's does).
   */
  async snapshot(out: SnapshotWriter): Promise<SnapshotPoint> {
    const index = this.applied;
    const term = this.term;
    await writeImage(this.db, out);
    return { index, term };
  }

  /**
   * Applies committed entries in log order, each seeing exactly the state its predecessors left, and
   * writes runs of them in one LevelDB batch (one write instead of one per command: at hundreds of
   * writes per Raft Ready this is where apply spent its time). A run holds point-reading commands
   * (BATCHABLE, and only while no webhook subscription is live: enqueueing reads the outbox by range)
   * and entries without a command; any other command ends the run and is applied alone. The result is
   * the same whatever the batches (each replica's Ready boundaries differ), and a batch is atomic
   * with its applied index, so a crash leaves "applied up to N" as before. Listeners are told after
   * the run's write, in order.
   */
  async applyBatch(entries: readonly BatchEntry[]): Promise<unknown[]> {
    const results: unknown[] = [];
    let run: OpenRun | null = null;
    for (const e of entries) {
      if (e.command && !(await this.joinsRun(e.command, run))) {
        if (run) await this.writeRun(run);
        run = null;
        results.push(await this.apply(e.index, e.command, e.term));
        continue;
      }
      run ??= this.openRun();
      results.push(await this.applyInRun(run, e));
    }
    if (run) await this.writeRun(run);
    return results;
  }

  private async joinsRun(command: Command, run: OpenRun | null): Promise<boolean> {
    if (!BATCHABLE.has(command.type)) return false;
    const written = run?.pending.lookup(this.db.meta, LIVE_WEBHOOKS_KEY);
    const live = written?.found ? written.value : readStable(this.stable, this.db.meta, LIVE_WEBHOOKS_KEY);
    return ((live as number | undefined) ?? 0) <= 0;
  }

  private openRun(): OpenRun {
    return { pending: new PendingWrites(), applied: this.applied, term: this.term, done: [] };
  }

  private async applyInRun(run: OpenRun, e: BatchEntry): Promise<unknown> {
    if (e.index !== run.applied + 1) throw new Error(`apply out of order: index ${e.index} after applied ${run.applied}`);
    // Log terms never decrease along the log (Raft's log matching); a lower one is a log layer bug.
    if (e.term < run.term) throw new InvariantError(`apply of index ${e.index} of term ${e.term} after term ${run.term}`);
    if (e.command && !(e.command.type in HANDLERS)) throw new Error(`unknown command type '${(e.command as { type: string }).type}' at index ${e.index}`);
    const ctx = new ApplyContext(e.index, this.tracking, run.pending, this.stable);
    for (const [key, value] of Object.entries(e.meta ?? {})) ctx.put(this.db.meta, key, value);
    let result: unknown;
    if (e.command) {
      // a user whose keys this group is handing over (a split) is written no more here (range-split.ts)
      result = (await fenceRefusal(this.db, ctx, e.command)) ?? await runHandler(this.db, ctx, e.command);
      // Read before the command's writes join the batch: the state before it tells created from changed.
      const references = new AssetReferenceChanges();
      const effects = ctx.tracked.length
        ? await resolveEffects(this.db, ctx.tracked, (sub, keys) => ctx.before(sub, keys), (user, before, after) => references.observe(user, before, after))
        : NO_EFFECTS;
      // Asset holds follow the event and unit records (apply/assets.ts): a hard delete of the last one ends it.
      if (!references.empty) await references.apply(this.db, ctx);
      // Webhook deliveries follow the effects, in the same batch (apply/webhooks.ts): every replica holds
      // the same outboxes, and only the shard leader's dispatcher sends from them.
      if (effects !== NO_EFFECTS) await enqueueWebhookDeliveries(this.db, ctx, e.command, effects);
      run.done.push({ index: e.index, command: e.command, result, effects });
    }
    run.pending.absorb(ctx.ops);
    run.applied = e.index;
    run.term = e.term;
    return result;
  }

  private async writeRun(run: OpenRun): Promise<void> {
    const ctx = new ApplyContext(run.applied);
    ctx.put(this.db.meta, APPLIED_KEY, run.applied);
    if (run.term !== this.term) ctx.put(this.db.meta, APPLIED_TERM_KEY, run.term);
    run.pending.absorb(ctx.ops);
    const ops = run.pending.finalOps();
    // A kept meta value the batch writes is read again from LevelDB after it (and not before: no apply runs meanwhile).
    const dropStable = () => {
      for (const op of ops) if (op.sublevel === this.db.meta && this.stable.keys.has(op.key)) this.stable.values.delete(op.key);
    };
    dropStable();
    // Not synced: the log is the durable record; a lost state write is replayed from it on restart.
    await this.db.level.batch(ops as never);
    dropStable();
    this.applied = run.applied;
    this.term = run.term;
    for (const d of run.done) for (const listener of this.listeners) listener(d.index, d.command, d.result, d.effects);
  }

  /** Called after each apply, with the command and its result (derived indexes, waiters). */
  onApplied(listener: AppliedListener): void {
    this.listeners.push(listener);
  }

  /**
   * Applies one command alone, its writes and the applied index in one atomic batch. `term`: the log
   * term of the entry (Raft), kept so a snapshot can name it; 0 for LocalLog.
   */
  async apply(index: number, command: Command, term = 0): Promise<unknown> {
    const run = this.openRun();
    const result = await this.applyInRun(run, { index, term, command });
    await this.writeRun(run);
    return result;
  }
}
