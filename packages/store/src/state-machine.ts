import { ApplyContext } from './apply-context';
import { applyApiKeyCreate, applyApiKeyRevoke, applyAuthBootstrap, applySetPassword } from './apply/auth';
import { applyIngest } from './apply/events';
import { applyPrune, applyReinforce } from './apply/importance';
import { applyL3Plan, applyTaskStatus } from './apply/l3';
import { applyEdgeAdd, applyMemoryDelete, applySemanticExecute, applySemanticPlan } from './apply/maintenance';
import { applyConsolidate, applyConsolidationFailed, applyInsights, indexPendingByUser } from './apply/memory';
import type { Command, IngestCommand } from './commands';
import type { StateDb } from './db';

type Handler = (db: StateDb, ctx: ApplyContext, command: never) => Promise<unknown>;

/** Ingest, plus the per-user index of pending entries that the consolidation worker reads. */
async function applyIngestIndexed(db: StateDb, ctx: ApplyContext, cmd: IngestCommand) {
  const answer = await applyIngest(db, ctx, cmd);
  indexPendingByUser(db, ctx, cmd, answer);
  return answer;
}

/** One handler per command type: the whole write side of Strata, in one table. */
const HANDLERS: Record<Command['type'], Handler> = {
  'events.ingest': applyIngestIndexed as Handler,
  'auth.bootstrap': applyAuthBootstrap as Handler,
  'auth.set_password': applySetPassword as Handler,
  'apikey.create': applyApiKeyCreate as Handler,
  'apikey.revoke': applyApiKeyRevoke as Handler,
  'memory.consolidate': applyConsolidate as Handler,
  'memory.consolidation_failed': applyConsolidationFailed as Handler,
  'memory.insights': applyInsights as Handler,
  'l3.plan': applyL3Plan as Handler,
  'l3.task_status': applyTaskStatus as Handler,
  'graph.add_edge': applyEdgeAdd as Handler,
  'memory.delete': applyMemoryDelete as Handler,
  'semantic.plan': applySemanticPlan as Handler,
  'semantic.execute': applySemanticExecute as Handler,
  'memory.reinforce': applyReinforce as Handler,
  'memory.prune': applyPrune as Handler,
};

export type AppliedListener = (index: number, command: Command, result: unknown) => void;

const APPLIED_KEY = 'applied_index';

/**
 * Applies committed commands, in log order, exactly once. Each command's writes and the new applied
 * index go to LevelDB in one atomic batch, so after a crash the state is exactly "applied up to N"
 * and the log replays from N+1. Applies are serialized; the result of a command is returned to the
 * proposer (deterministic failures are results too, see errors.ts).
 */
export class StateMachine {
  private applied = 0;
  private readonly listeners: AppliedListener[] = [];

  private constructor(readonly db: StateDb) {}

  static async open(db: StateDb): Promise<StateMachine> {
    const sm = new StateMachine(db);
    sm.applied = ((await db.meta.get(APPLIED_KEY)) as number | undefined) ?? 0;
    return sm;
  }

  appliedIndex(): number {
    return this.applied;
  }

  /** Called after each apply, with the command and its result (derived indexes, waiters). */
  onApplied(listener: AppliedListener): void {
    this.listeners.push(listener);
  }

  async apply(index: number, command: Command): Promise<unknown> {
    if (index !== this.applied + 1) {
      throw new Error(`apply out of order: index ${index} after applied ${this.applied}`);
    }
    const handler = HANDLERS[command.type];
    if (!handler) throw new Error(`unknown command type '${(command as { type: string }).type}' at index ${index}`);
    const ctx = new ApplyContext(index);
    const result = await handler(this.db, ctx, command as never);
    ctx.put(this.db.meta, APPLIED_KEY, index);
    // Not synced: the log is the durable record; a lost state write is replayed from it on restart.
    await this.db.level.batch(ctx.ops as never);
    this.applied = index;
    for (const listener of this.listeners) listener(index, command, result);
    return result;
  }
}
