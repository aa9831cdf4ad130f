import type { ApplyContext } from '../apply-context';
import type { PruneAnswer, PruneCommand, ReinforceAnswer, ReinforceCommand } from '../commands';
import type { StateDb } from '../db';
import { prefixRange } from '../keys';
import { deleteUnit } from './maintenance';
import { unitKey } from './memory';

/**
 * Apply of importance and forgetting: retrieval reinforcement (`memory.reinforce`) and pruning
 * (`memory.prune`). The proposer decided the deltas and the candidates with its clock; apply only
 * checks them against the state and writes, so every replica ends with the same importance and stats.
 */

/** Importance is kept to 3 decimals, like consolidation's scores, so sums do not drift in the last bits. */
const round3 = (x: number): number => Math.round(x * 1000) / 1000;

export async function applyReinforce(db: StateDb, ctx: ApplyContext, cmd: ReinforceCommand): Promise<ReinforceAnswer> {
  const answer: ReinforceAnswer = { reinforced: [], skipped: 0 };
  for (const entry of cmd.users) {
    const done: string[] = [];
    for (const r of entry.units) {
      const key = unitKey(entry.user_id, r.unit_id);
      const unit = await ctx.get(db.units, key);
      // Deleted or retired since it was returned: nothing to reinforce (retired units do not come back).
      if (!unit || unit.retired_at !== null) {
        answer.skipped++;
        continue;
      }
      const delta = Number.isFinite(r.delta) ? Math.max(0, r.delta) : 0;
      const importance = round3(Math.min(1, Math.max(0, unit.importance + delta)));
      if (importance !== unit.importance) ctx.put(db.units, key, { ...unit, importance });
      const stats = await ctx.get(db.unitStats, key);
      const count = Number.isInteger(r.retrievals) && r.retrievals > 0 ? r.retrievals : 1;
      ctx.put(db.unitStats, key, {
        retrievals: (stats?.retrievals ?? 0) + count,
        // a batch proposed late (another node, a retry) never moves the last retrieval back in time
        last_retrieved_at: stats && stats.last_retrieved_at > r.at ? stats.last_retrieved_at : r.at,
      });
      done.push(r.unit_id);
    }
    if (done.length > 0) answer.reinforced.push({ user_id: entry.user_id, unit_ids: done });
  }
  return answer;
}

/** Why a unit named by `memory.prune` must stay, judged on the state at apply; null when it may go. */
async function keepReason(db: StateDb, ctx: ApplyContext, userId: string, c: PruneCommand['units'][number]): Promise<string | null> {
  const key = unitKey(userId, c.unit_id);
  const unit = await ctx.get(db.units, key);
  if (!unit) return 'gone';
  if (unit.level !== 1) return 'not an L1 unit';
  if (unit.retired_at !== null) return 'retired (kept as history)';
  if (unit.org_id !== null) return 'organization knowledge';
  if (unit.importance !== c.importance) return 'importance changed since judged';
  const stats = await ctx.get(db.unitStats, key);
  if ((stats?.last_retrieved_at ?? null) !== c.last_retrieved_at) return 'retrieved since judged';
  // The committed adjacency: an edge removed earlier in this command still counts, which can only keep more.
  for await (const entry of db.adjacency.values(prefixRange(userId, c.unit_id))) {
    if (entry.relation === 'DerivedFrom' && !entry.out) return 'an insight derives from it';
  }
  return null;
}

export async function applyPrune(db: StateDb, ctx: ApplyContext, cmd: PruneCommand): Promise<PruneAnswer> {
  const answer: PruneAnswer = { deleted_unit_ids: [], deleted_event_ids: [], deleted_edge_ids: [], kept: [] };
  const seen = new Set<string>();
  for (const c of cmd.units) {
    if (seen.has(c.unit_id)) continue;
    seen.add(c.unit_id);
    const reason = await keepReason(db, ctx, cmd.user_id, c);
    if (reason !== null) {
      answer.kept.push({ unit_id: c.unit_id, reason });
      continue;
    }
    if (await deleteUnit(db, ctx, cmd.user_id, c.unit_id, answer.deleted_edge_ids)) answer.deleted_unit_ids.push(c.unit_id);
  }
  if (answer.deleted_edge_ids.length > 0) await ctx.increment(db.meta, 'edges', -answer.deleted_edge_ids.length);
  return answer;
}
