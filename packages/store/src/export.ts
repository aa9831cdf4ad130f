/**
 * Reading a shard's records for an export (CONTRACT §14), as async generators over one LevelDB
 * snapshot: every record of the export is of the same applied state, whatever is written meanwhile,
 * and the reader holds one page of each record type at a time (iterators read `PAGE` entries, the
 * state beside them comes in one getMany per page), so memory does not grow with the export's size.
 * The consumer pulls: a slow client slows the reading, nothing piles up.
 */
import type { Level } from 'level';
import type { StateDb, Sub } from './db';
import type { ExportEvent, ExportRecord, EventConsolidation } from './export-format';
import { afterPrefix, compareKeys, join, prefixRange, SEP } from './keys';
import { holdsAsset } from './apply/assets';
import type { AssetRef, EventRecord } from './types';

/** A consistent view of one shard's LevelDB for the length of an export; close it when done. */
export type ExportSnapshot = ReturnType<Level<string, unknown>['snapshot']>;

export function openExportSnapshot(db: StateDb): ExportSnapshot {
  return db.level.snapshot();
}

/** Entries read per iterator step (and per getMany of the state beside them). */
const PAGE = 256;
/** Asset ids written recently: an asset shared by nearby events is written once (a repeat is harmless: import skips it). */
const RECENT_ASSETS = 256;

type Range = { gt?: string; gte?: string; lt?: string };

/** The entries of a key range, a page at a time, from the snapshot; the iterator is closed however the loop ends. */
async function* pages<V>(sub: Sub<V>, range: Range, snapshot: ExportSnapshot): AsyncGenerator<[string, V][]> {
  const it = sub.iterator({ ...range, snapshot });
  try {
    for (;;) {
      const page = await it.nextv(PAGE);
      if (page.length === 0) return;
      yield page;
    }
  } finally {
    await it.close();
  }
}

/** A bounded set of recently seen ids (insertion order; the oldest goes first). */
class RecentIds {
  private readonly ids = new Set<string>();
  constructor(private readonly max: number) {}

  /** True when the id was seen recently; remembers it either way. */
  seen(id: string): boolean {
    if (this.ids.has(id)) return true;
    this.ids.add(id);
    if (this.ids.size > this.max) this.ids.delete(this.ids.values().next().value as string);
    return false;
  }
}

function consolidationOf(
  event: EventRecord,
  pending: unknown,
  failed: { user_id: string; event_id: string; error: string; attempts: number; at: string } | undefined,
  dropped: { reason: string; at: string } | undefined,
): EventConsolidation {
  if (pending !== undefined) return { state: 'pending' };
  if (failed && failed.user_id === event.user_id && failed.event_id === event.event_id) return { state: 'failed', error: failed.error, attempts: failed.attempts, at: failed.at };
  if (dropped) return { state: 'dropped', reason: dropped.reason, at: dropped.at };
  return { state: 'consolidated' };
}

/** The asset lines the records about to be written need, unless written recently (URL-only assets have no bytes). */
async function* assetLines(db: StateDb, userId: string, refs: AssetRef[], snapshot: ExportSnapshot, recent: RecentIds): AsyncGenerator<ExportRecord> {
  for (const ref of refs) {
    // Per user: each user's file part carries the bytes it holds, so it imports alone (into any shard).
    if (ref.size === 0 || recent.seen(join(userId, ref.asset_id))) continue;
    // Only bytes the user gave (apply/assets.ts): a record naming another tenant's asset id reads nothing.
    if (!(await holdsAsset(db, userId, ref.asset_id, { snapshot }))) continue;
    const bytes = await db.assets.get(ref.asset_id, { snapshot });
    if (bytes) yield { kind: 'asset', user_id: userId, asset_id: ref.asset_id, data_b64: Buffer.from(bytes).toString('base64') };
  }
}

/**
 * Every record of one user, in the order an import needs: events (each after the assets it uses),
 * units (every version, retired ones too), edges (after both their units), goals, tasks, then the user
 * with its org. `recent` is shared by the users of one export.
 */
export async function* userRecords(db: StateDb, userId: string, snapshot: ExportSnapshot, recent = new RecentIds(RECENT_ASSETS)): AsyncGenerator<ExportRecord> {
  const range = prefixRange(userId);
  const opts = { snapshot };
  for await (const page of pages(db.events, range, snapshot)) {
    const events = page.map(([, e]) => e);
    const byEvent = events.map((e) => join(userId, e.event_id));
    const [pending, failed, dropped, l3] = await Promise.all([
      db.pendingByUser.getMany(events.map((e) => join(userId, e.seq)), opts),
      db.failed.getMany(events.map((e) => e.seq), opts),
      db.dropped.getMany(byEvent, opts),
      db.l3ByEvent.getMany(byEvent, opts),
    ]);
    for (let i = 0; i < events.length; i++) {
      const { seq: _seq, ...event } = events[i];
      if (event.assets.length > 0) yield* assetLines(db, userId, event.assets, snapshot, recent);
      const line: ExportEvent = { kind: 'event', ...event, consolidation: consolidationOf(events[i], pending[i], failed[i], dropped[i]), l3_source: l3[i] ?? null };
      yield line;
    }
  }
  for await (const page of pages(db.units, range, snapshot)) {
    const keys = page.map(([k]) => k);
    const [vectors, stats] = await Promise.all([db.vectors.getMany(keys, opts), db.unitStats.getMany(keys, opts)]);
    for (let i = 0; i < page.length; i++) {
      const unit = page[i][1];
      if (unit.assets.length > 0) yield* assetLines(db, userId, unit.assets, snapshot, recent);
      yield { kind: 'unit', ...unit, vector: vectors[i] ?? null, stats: stats[i] ?? null };
    }
  }
  for await (const page of pages(db.edges, range, snapshot)) for (const [, edge] of page) yield { kind: 'edge', ...edge };
  for await (const page of pages(db.goals, range, snapshot)) for (const [, goal] of page) yield { kind: 'goal', ...goal };
  for await (const page of pages(db.tasks, range, snapshot)) for (const [, task] of page) yield { kind: 'task', ...task };
  const org = await db.userOrgs.get(userId, opts);
  yield { kind: 'user', user_id: userId, org_id: org?.org_id ?? null };
}

async function firstKey(sub: Sub<unknown>, range: Range, snapshot: ExportSnapshot): Promise<string | null> {
  for await (const key of sub.keys({ ...range, limit: 1, snapshot })) return key;
  return null;
}

/** The first user of the snapshot after `after` (null: the first of all): one seek per per-user sublevel. */
export async function nextUserInSnapshot(db: StateDb, after: string | null, snapshot: ExportSnapshot): Promise<string | null> {
  const candidates: string[] = [];
  for (const sub of [db.events, db.units, db.goals, db.tasks] as Sub<unknown>[]) {
    const key = await firstKey(sub, after === null ? {} : { gte: afterPrefix(after) }, snapshot);
    if (key !== null) candidates.push(key.slice(0, key.indexOf(SEP)));
  }
  // org records are keyed by the bare user id
  const recorded = await firstKey(db.userOrgs as Sub<unknown>, after === null ? {} : { gt: after }, snapshot);
  if (recorded !== null) candidates.push(recorded);
  return candidates.length === 0 ? null : candidates.sort(compareKeys)[0];
}

/**
 * Every record of every user of the shard, user after user in key order; only the users `keep` accepts
 * (an export of every user keeps those the key-range directory assigns to the group: between a
 * hand-over's copy and its drop, both groups hold the moved users' records).
 */
export async function* shardRecords(db: StateDb, snapshot: ExportSnapshot, keep: (userId: string) => boolean = () => true): AsyncGenerator<ExportRecord> {
  const recent = new RecentIds(RECENT_ASSETS);
  for (let user = await nextUserInSnapshot(db, null, snapshot); user !== null; user = await nextUserInSnapshot(db, user, snapshot)) {
    if (keep(user)) yield* userRecords(db, user, snapshot, recent);
  }
}
