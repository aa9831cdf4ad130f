import { createHash } from 'node:crypto';
import type { ApplyContext } from '../apply-context';
import type { ImportAnswer, ImportCommand } from '../commands';
import type { StateDb } from '../db';
import { EXPORT_KINDS, type ExportEvent, type ExportKind, type ExportRecord, type ExportUnit } from '../export-format';
import { eventSeq, join } from '../keys';
import { streamIndex } from '../range-split';
import type { MemoryUnit } from '../types';
import { holdAsset } from './assets';
import { goalKey, taskKey } from './l3';
import { orgUnitKey, subjectKey, unitKey, writeEdge } from './memory';

/**
 * `import.records` (CONTRACT §14): the records of an export, written as they were (ids, times, vectors,
 * retirement, consolidation state), each through the same sublevels and secondary indexes the other
 * handlers keep. A record whose id is stored already is skipped, so a chunk applied twice (a retried
 * proposal, a file imported again) changes nothing. Everything is decided from the command and the
 * state: apply is deterministic. Its writes go through ApplyContext, so the typed effects (units,
 * vectors, edges, goals, tasks, user orgs) follow and the derived indexes with them.
 */

type Counts = Record<ExportKind, number>;
const zero = (): Counts => Object.fromEntries(EXPORT_KINDS.map((k) => [k, 0])) as Counts;

/** Counters kept in `meta` that an import moves. */
interface CounterDeltas {
  events: number;
  pending: number;
  failed: number;
  dropped: number;
  units: number;
  edges: number;
  goals: number;
  tasks: number;
}

export async function applyImport(db: StateDb, ctx: ApplyContext, cmd: ImportCommand): Promise<ImportAnswer> {
  const imported = zero();
  const skipped = zero();
  const deltas: CounterDeltas = { events: 0, pending: 0, failed: 0, dropped: 0, units: 0, edges: 0, goals: 0, tasks: 0 };
  for (let position = 0; position < cmd.records.length; position++) {
    const record = cmd.records[position];
    const written = await importRecord(db, ctx, cmd, record, position, deltas);
    (written ? imported : skipped)[record.kind]++;
  }
  for (const [name, delta] of Object.entries(deltas)) if (delta !== 0) await ctx.increment(db.meta, name, delta);
  return { imported, skipped };
}

async function importRecord(db: StateDb, ctx: ApplyContext, cmd: ImportCommand, r: ExportRecord, position: number, deltas: CounterDeltas): Promise<boolean> {
  switch (r.kind) {
    case 'asset': {
      // The line gives the bytes, so its user holds them, if they are the bytes the id names: the hash is
      // checked here too (the proposer checked it), since holding is what lets an export read them.
      const bytes = Buffer.from(r.data_b64, 'base64');
      if (createHash('sha256').update(bytes).digest('hex') !== r.asset_id) return false;
      return holdAsset(db, ctx, r.user_id, r.asset_id, bytes);
    }
    case 'event':
      return importEvent(db, ctx, r, position, deltas);
    case 'unit':
      return importUnit(db, ctx, r, deltas);
    case 'edge': {
      const { kind: _kind, ...edge } = r;
      // writeEdge skips an edge whose id is taken or whose units are not both stored
      if (!(await writeEdge(db, ctx, edge.user_id, edge))) return false;
      deltas.edges++;
      return true;
    }
    case 'goal': {
      const { kind: _kind, ...goal } = r;
      // goals and tasks share one id space (apply/l3.ts)
      if (await l3IdTaken(db, ctx, goal.user_id, goal.id)) return false;
      ctx.put(db.goals, goalKey(goal.user_id, goal.id), goal);
      deltas.goals++;
      return true;
    }
    case 'task': {
      const { kind: _kind, ...task } = r;
      if (await l3IdTaken(db, ctx, task.user_id, task.task_id)) return false;
      ctx.put(db.tasks, taskKey(task.user_id, task.task_id), task);
      deltas.tasks++;
      return true;
    }
    case 'user': {
      // Only an org to record, for a user that has none: an org recorded on this node stands.
      if (r.org_id === null || (await ctx.get(db.userOrgs, r.user_id)) !== undefined) return false;
      ctx.put(db.userOrgs, r.user_id, { org_id: r.org_id, at: cmd.at, by: 'set' as const });
      ctx.put(db.orgUsers, join(r.org_id, r.user_id), r.user_id);
      return true;
    }
  }
}

async function l3IdTaken(db: StateDb, ctx: ApplyContext, userId: string, id: string): Promise<boolean> {
  return (await ctx.get(db.goals, goalKey(userId, id))) !== undefined || (await ctx.get(db.tasks, taskKey(userId, id))) !== undefined;
}

/**
 * An event gets a stream position in this log (`seq` from the command's index and the record's place
 * in it), so the imported events of a stream keep their order and sort after the stream's earlier ones.
 */
async function importEvent(db: StateDb, ctx: ApplyContext, r: ExportEvent, position: number, deltas: CounterDeltas): Promise<boolean> {
  const { kind: _kind, consolidation, l3_source, ...event } = r;
  const user = event.user_id;
  if ((await ctx.get(db.eventIds, join(user, event.event_id))) !== undefined) return false;
  const seq = eventSeq(await streamIndex(db, ctx), position);
  ctx.put(db.events, join(user, event.stream_id, seq), { ...event, seq });
  ctx.put(db.eventIds, join(user, event.event_id), { stream_id: event.stream_id, seq });
  deltas.events++;
  const entry = { user_id: user, stream_id: event.stream_id, event_id: event.event_id, accepted_at: event.transaction_time };
  switch (consolidation.state) {
    case 'pending':
      ctx.put(db.pending, seq, entry);
      ctx.put(db.pendingByUser, join(user, seq), entry);
      deltas.pending++;
      break;
    case 'failed':
      ctx.put(db.failed, seq, {
        user_id: user, stream_id: event.stream_id, event_id: event.event_id, error: consolidation.error, attempts: consolidation.attempts, at: consolidation.at,
      });
      deltas.failed++;
      break;
    case 'dropped':
      ctx.put(db.dropped, join(user, event.event_id), { reason: consolidation.reason, at: consolidation.at });
      deltas.dropped++;
      break;
    case 'consolidated':
      break;
  }
  if (l3_source) ctx.put(db.l3ByEvent, join(user, event.event_id), l3_source);
  return true;
}

async function importUnit(db: StateDb, ctx: ApplyContext, r: ExportUnit, deltas: CounterDeltas): Promise<boolean> {
  const { kind: _kind, vector, stats, ...unit } = r;
  const key = unitKey(unit.user_id, unit.id);
  if ((await ctx.get(db.units, key)) !== undefined) return false;
  const record: MemoryUnit = unit;
  ctx.put(db.units, key, record);
  // The vector as it was stored, with the embedder that made it: retrieval compares it exactly as on the exporting node.
  if (vector) ctx.put(db.vectors, key, vector);
  if (stats) ctx.put(db.unitStats, key, stats);
  if (unit.subject && unit.attribute) ctx.put(db.unitBySubject, subjectKey(unit.user_id, unit.subject, unit.attribute, unit.id), unit.id);
  if (unit.org_id) ctx.put(db.orgUnits, orgUnitKey(unit.org_id, unit.user_id, unit.id), unit.id);
  deltas.units++;
  return true;
}
