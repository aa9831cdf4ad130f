/**
 * A group's side of a split (docs/cluster.md "Splitting a group"): which records belong to the users of
 * a key range, the fence that freezes them while they are copied, the copy (read in chunks from the
 * fenced group, written into the new group by `range.seed`), and the deletion from the old group once
 * the directory names the new one (`range.drop`). Every step is a command, so replicas of both groups
 * stay identical, and a record is in exactly one group once the drop is done.
 *
 * The hand-over rule, for a user of a fenced range in the group being split:
 * - `moving` (fenced, records intact and final): reads are served, writes are refused with 503
 *   `range_moving` (apply refuses them, so no write is acknowledged after the copy began);
 * - `moved` (the directory names the new group; the records are deleted or being deleted): reads and
 *   writes go elsewhere (the caller asks its directory again).
 * In the receiving group (a split's new group, or a merge's, which serves other users meanwhile), the
 * incoming range is fenced `receiving` from before the copy until the commit: nothing about those users
 * applies there but the copy (a merge's consolidation worker would otherwise work on copied pending
 * events, which a repeated chunk would bring back; a seed that comes after the fence is lifted, from a
 * driver that lost its leadership, is refused), and requests about them are answered 503 `range_moving`.
 */
import type { ApplyContext } from './apply-context';
import type {
  Command, RangeClearCommand, RangeDropCommand, RangeFenceCommand, RangeFenceSpec, RangeReceiveCommand, RangeRecord, RangeSeedCommand, RangeUnfenceCommand,
} from './commands';
import type { StateDb, Sub } from './db';
import { conflict, failure, StrataError, unavailable, type ApplyFailure } from './errors';
import { fnv1a32, medianPoint, rangeKey } from './key-ranges';
import { listUserIds } from './user-list';
import { eventSeq, SEP } from './keys';

export interface RangeFence extends RangeFenceSpec {
  state: 'moving' | 'moved' | 'receiving';
  /** receiving: the first event number of the block reserved for the copied events, less one (RangeSeedCommand) */
  shift?: number;
}

export type HandOver = 'serve' | 'retry' | 'elsewhere';

/** Pure: what a group does with a request about the user at `key` (module comment). */
export function handOver(fences: readonly RangeFence[], key: number, access: 'read' | 'write'): HandOver {
  const f = fences.find((x) => x.start <= key && key < x.end);
  if (!f) return 'serve';
  if (f.state === 'moved') return 'elsewhere';
  if (f.state === 'receiving') return 'retry';
  return access === 'read' ? 'serve' : 'retry';
}

/** Pure: whether a user is in a fence's range. */
export function inFence(fence: RangeFenceSpec, userId: string): boolean {
  const key = rangeKey(fnv1a32(userId), fence.base);
  return fence.start <= key && key < fence.end;
}

/**
 * The split point that halves the users a replica of a group holds in `range` (key-ranges.ts
 * `medianPoint`; null when there are too few), and how many there are. Every user id is read (a key
 * skip-scan, user-list.ts): an operator's command, not a hot path.
 */
export async function medianOfUsers(db: StateDb, base: number, range: { start: number; end: number }): Promise<{ point: number | null; users: number }> {
  const keys: number[] = [];
  for (let after: string | null = null; ;) {
    const page: string[] = await listUserIds(db, after, 1000);
    for (const u of page) {
      const k = rangeKey(fnv1a32(u), base);
      if (range.start <= k && k < range.end) keys.push(k);
    }
    if (page.length < 1000) break;
    after = page[page.length - 1];
  }
  return { point: medianPoint(keys, range), users: keys.length };
}

/** `meta` key of the group's fences. */
export const FENCES_KEY = 'range_fences';
/** `meta` key of the new group's event numbering floor (RangeSeedCommand). */
const SEQ_FLOOR_KEY = 'seq_floor';

export async function readFences(db: StateDb): Promise<RangeFence[]> {
  return ((await db.meta.get(FENCES_KEY)) as RangeFence[] | undefined) ?? [];
}

/** The index events of this command are numbered by: the log index, after the floor a seeded group starts from. */
export async function streamIndex(db: StateDb, ctx: ApplyContext): Promise<number> {
  return ctx.index + (((await ctx.get(db.meta, SEQ_FLOOR_KEY)) as number | undefined) ?? 0);
}

/** Pure: the users a command writes about (none for service-wide and cluster commands). */
export function usersOfCommand(cmd: Command): string[] {
  if (cmd.type.startsWith('cluster.') || cmd.type.startsWith('range.') || cmd.type.startsWith('webhook.') || cmd.type.startsWith('auth.') || cmd.type.startsWith('apikey.')) return [];
  // top-level (most), per user (memory.reinforce), per record (import.records), in the record (semantic.plan)
  const c = cmd as { user_id?: unknown; users?: { user_id?: unknown }[]; records?: { user_id?: unknown }[]; record?: { user_id?: unknown } };
  const ids = [c.user_id, c.record?.user_id, ...(c.users ?? []).map((u) => u?.user_id), ...(c.records ?? []).map((r) => r?.user_id)];
  return ids.filter((id): id is string => typeof id === 'string');
}

/** A command about a user of a fenced range is refused (module comment); null when it may apply. */
export async function fenceRefusal(db: StateDb, ctx: ApplyContext, cmd: Command): Promise<ApplyFailure | null> {
  const fences = ((await ctx.get(db.meta, FENCES_KEY)) as RangeFence[] | undefined) ?? [];
  if (fences.length === 0) return null;
  for (const user of usersOfCommand(cmd)) {
    const f = fences.find((x) => inFence(x, user));
    if (f) return failure(unavailable(`User ${user} is being moved to shard group ${f.new_group} (a split); retry.`, 'range_moving'));
  }
  return null;
}

/** Who owns a record: its user, read from the key or the value. */
type Owner = (key: string, value: unknown) => string | undefined;
const firstPart: Owner = (k) => k.split(SEP)[0];
const secondPart: Owner = (k) => k.split(SEP)[1];
const wholeKey: Owner = (k) => k;
const valueUser: Owner = (_k, v) => (v as { user_id?: string } | undefined)?.user_id;

type SublevelName = keyof StateDb & string;

/**
 * Every sublevel of per-user records, with how its owner is found and the counter it is counted in.
 * Not here: `meta` (counters are recounted), `auth` (shard 0's), `assets` (bytes go with `asset_holds`),
 * the webhook sublevels (subscriptions are copied to every group by its own dispatcher; deliveries
 * already queued are sent by the group that queued them), and `plan_expiry` (with `semantic_plans`).
 * `plan_expiry` comes before `semantic_plans`: a drop finds an expiry's owner through its plan.
 */
const PER_USER: readonly { name: SublevelName; stored: string; owner: Owner; counter?: string }[] = [
  { name: 'events', stored: 'events', owner: firstPart, counter: 'events' },
  { name: 'eventIds', stored: 'event_ids', owner: firstPart },
  { name: 'pending', stored: 'pending', owner: valueUser, counter: 'pending' },
  { name: 'idempotency', stored: 'idempotency', owner: firstPart },
  { name: 'assetHolds', stored: 'asset_holds', owner: firstPart },
  { name: 'pendingByUser', stored: 'pending_by_user', owner: firstPart },
  { name: 'units', stored: 'units', owner: firstPart, counter: 'units' },
  { name: 'vectors', stored: 'vectors', owner: firstPart },
  { name: 'edges', stored: 'edges', owner: firstPart, counter: 'edges' },
  { name: 'adjacency', stored: 'adjacency', owner: firstPart },
  { name: 'unitBySubject', stored: 'unit_by_subject', owner: firstPart },
  { name: 'dropped', stored: 'dropped', owner: firstPart, counter: 'dropped' },
  { name: 'failed', stored: 'failed', owner: valueUser, counter: 'failed' },
  { name: 'reflectionDue', stored: 'reflection_due', owner: firstPart },
  { name: 'goals', stored: 'goals', owner: firstPart, counter: 'goals' },
  { name: 'tasks', stored: 'tasks', owner: firstPart, counter: 'tasks' },
  { name: 'l3ByEvent', stored: 'l3_by_event', owner: firstPart },
  { name: 'planExpiry', stored: 'plan_expiry', owner: () => undefined }, // owner: its plan's (planOwner)
  { name: 'semanticPlans', stored: 'semantic_plans', owner: valueUser },
  { name: 'orgUnits', stored: 'org_units', owner: secondPart },
  { name: 'unitStats', stored: 'unit_stats', owner: firstPart },
  { name: 'userOrgs', stored: 'user_orgs', owner: wholeKey },
  { name: 'orgUsers', stored: 'org_users', owner: secondPart },
];
const BY_STORED = new Map(PER_USER.map((s) => [s.stored, s]));
/** the asset bytes a moved user holds travel as base64 under this name */
const ASSET_BYTES = 'assets';

const subOf = (db: StateDb, name: SublevelName): Sub<unknown> => db[name] as unknown as Sub<unknown>;

async function ownerOf(db: StateDb, s: (typeof PER_USER)[number], key: string, value: unknown): Promise<string | undefined> {
  if (s.name !== 'planExpiry') return s.owner(key, value);
  const plan = (await db.semanticPlans.get(value as string)) as { user_id?: string } | undefined;
  return plan?.user_id;
}

/** Where a chunked read or drop stopped: the sublevel (index in PER_USER) and the last key done there. */
export interface HalfCursor {
  sub: number;
  after: string | null;
}

/**
 * Reads the next records (at most `max`, and about `maxBytes` of JSON) of the users in `fence` from a
 * group's state, from `cursor` on; `next` null when none is left. Read after the fence applied, the
 * records are final.
 */
export async function readHalf(db: StateDb, fence: RangeFenceSpec, cursor: HalfCursor, max: number, maxBytes = Infinity): Promise<{ records: RangeRecord[]; next: HalfCursor | null }> {
  const records: RangeRecord[] = [];
  let bytes = 0;
  for (let i = cursor.sub; i < PER_USER.length; i++) {
    const s = PER_USER[i];
    const after = i === cursor.sub ? cursor.after : null;
    for await (const [key, value] of subOf(db, s.name).iterator(after === null ? {} : { gt: after })) {
      const owner = await ownerOf(db, s, key, value);
      if (owner === undefined || !inFence(fence, owner)) continue;
      if (s.name === 'planExpiry') {
        // its plan in the same chunk, first (and again with the plans: written twice, the same): a copy
        // cut off between the two (an aborted split or merge) left an expiry whose plan was not there,
        // which range.clear could not attribute to a user and left behind (sim-split seeds 50720, 51213)
        const plan = await db.semanticPlans.get(value as string);
        records.push(['semantic_plans', value as string, plan]);
        bytes += (value as string).length + JSON.stringify(plan).length;
      }
      records.push([s.stored, key, value]);
      bytes += key.length + JSON.stringify(value).length;
      if (s.name === 'assetHolds') {
        const asset = key.split(SEP)[1];
        const data = await db.assets.get(asset);
        if (data) records.push([ASSET_BYTES, asset, Buffer.from(data).toString('base64')]);
        bytes += data ? (data.length * 4) / 3 : 0;
      }
      if (records.length >= max || bytes >= maxBytes) return { records, next: { sub: i, after: key } };
    }
  }
  return { records, next: null };
}

/** `range.fence`: the group stops taking writes about the range's users (kept on a retry). */
/**
 * `range.fence`: the group stops taking writes about the range's users (kept on a retry). The answer's
 * `stream_index` is the numbering of this entry's events (the log index after the group's own floor):
 * every event of the range is numbered at most that, so it is the new group's `seq_floor`.
 */
export async function applyRangeFence(db: StateDb, ctx: ApplyContext, cmd: RangeFenceCommand): Promise<{ status: 'fenced' | 'already_fenced'; applied_index: number; stream_index: number } | ApplyFailure> {
  const fences = ((await ctx.get(db.meta, FENCES_KEY)) as RangeFence[] | undefined) ?? [];
  const f = cmd.fence;
  if (!validSpec(f)) return failure(new StrataError('invalid_command', 'range.fence: base, start < end and new_group are required'));
  const answer = { applied_index: ctx.index, stream_index: await streamIndex(db, ctx) };
  const same = fences.find((x) => sameSpec(x, f) && x.state !== 'receiving');
  if (same) return { status: 'already_fenced', ...answer };
  if (fences.some((x) => x.start < f.end && f.start < x.end)) return failure(conflict('range.fence: the range overlaps a fence of this group'));
  ctx.put(db.meta, FENCES_KEY, [...fences, { base: f.base, start: f.start, end: f.end, new_group: f.new_group, state: 'moving' } satisfies RangeFence]);
  return { status: 'fenced', ...answer };
}

const validSpec = (f: RangeFenceSpec | undefined): f is RangeFenceSpec => [f?.base, f?.start, f?.end, f?.new_group].every(Number.isSafeInteger) && f!.start < f!.end;
const sameSpec = (x: RangeFenceSpec, f: RangeFenceSpec): boolean => x.start === f.start && x.end === f.end && x.base === f.base && x.new_group === f.new_group;

/**
 * `range.receive`: the receiving group of a split or merge fences the incoming range (`receiving`,
 * module comment) and reserves `span` event numbers for the copy: the copied events are numbered from
 * `shift` + 1 on (above every event of its own so far), and its own next events above the block (the
 * floor rises by `span`). A retry answers the same shift and reserves nothing more.
 */
export async function applyRangeReceive(db: StateDb, ctx: ApplyContext, cmd: RangeReceiveCommand): Promise<{ status: 'receiving' | 'already_receiving'; shift: number } | ApplyFailure> {
  const fences = ((await ctx.get(db.meta, FENCES_KEY)) as RangeFence[] | undefined) ?? [];
  const f = cmd.fence;
  if (!validSpec(f) || !Number.isSafeInteger(cmd.span) || cmd.span < 0) return failure(new StrataError('invalid_command', 'range.receive: a fence (base, start < end, new_group) and a span ≥ 0 are required'));
  const same = fences.find((x) => sameSpec(x, f) && x.state === 'receiving');
  if (same) return { status: 'already_receiving', shift: same.shift ?? 0 };
  const overlaps = (x: RangeFence) => x.start < f.end && f.start < x.end;
  if (fences.some((x) => x.state !== 'moved' && overlaps(x))) return failure(conflict('range.receive: the range overlaps a fence of this group'));
  // A range this group gave away in an earlier split may come back (its new group merged into it
  // again): the `moved` fence stays only on the keys that are not coming back.
  const kept = fences.flatMap((x) => (x.state === 'moved' && overlaps(x)
    ? [{ ...x, end: f.start }, { ...x, start: f.end }].filter((y) => y.start < y.end)
    : [x]));
  const shift = await streamIndex(db, ctx);
  const floor = ((await ctx.get(db.meta, SEQ_FLOOR_KEY)) as number | undefined) ?? 0;
  ctx.put(db.meta, SEQ_FLOOR_KEY, floor + cmd.span);
  ctx.put(db.meta, FENCES_KEY, [...kept, { base: f.base, start: f.start, end: f.end, new_group: f.new_group, state: 'receiving', shift } satisfies RangeFence]);
  return { status: 'receiving', shift };
}

/**
 * `range.unfence`: an aborted hand-over's fence is lifted, and a receiving fence once the split or merge
 * is committed or aborted; a fence whose records went (`moved`) stays.
 */
export async function applyRangeUnfence(db: StateDb, ctx: ApplyContext, cmd: RangeUnfenceCommand): Promise<{ status: 'unfenced' | 'not_fenced' } | ApplyFailure> {
  const fences = ((await ctx.get(db.meta, FENCES_KEY)) as RangeFence[] | undefined) ?? [];
  const f = fences.find((x) => x.start === cmd.fence?.start && x.end === cmd.fence.end && x.new_group === cmd.fence.new_group);
  if (!f) return { status: 'not_fenced' };
  if (f.state === 'moved') return failure(conflict('range.unfence: the range has moved; its fence stays'));
  const rest = fences.filter((x) => x !== f);
  if (rest.length) ctx.put(db.meta, FENCES_KEY, rest);
  else ctx.del(db.meta, FENCES_KEY);
  return { status: 'unfenced' };
}

/**
 * `range.seed`: writes copied records into the new group. A record already there (the same chunk
 * proposed twice by a retry) is written again but not counted again.
 */
export async function applyRangeSeed(db: StateDb, ctx: ApplyContext, cmd: RangeSeedCommand): Promise<{ written: number } | ApplyFailure> {
  const shift = cmd.seq_shift ?? 0;
  if (!Array.isArray(cmd.records) || !Number.isSafeInteger(cmd.seq_floor) || !Number.isSafeInteger(shift) || shift < 0) return failure(new StrataError('invalid_command', 'range.seed: records, seq_floor and a seq_shift ≥ 0 are required'));
  for (const r of cmd.records) {
    if (!Array.isArray(r) || typeof r[1] !== 'string' || (r[0] !== ASSET_BYTES && !BY_STORED.has(r[0]))) return failure(new StrataError('invalid_command', 'range.seed: a record names no per-user sublevel'));
  }
  // A shifted copy lands only while the receiving fence that reserved its block is up: a chunk sent by a
  // driver that lost its leadership of shard 0, arriving after an abort cleared the group (or after the
  // commit opened it), is refused instead of bringing records back. A later hand-over reserves another block.
  if (cmd.seq_shift !== undefined) {
    const fences = ((await ctx.get(db.meta, FENCES_KEY)) as RangeFence[] | undefined) ?? [];
    if (!fences.some((x) => x.state === 'receiving' && x.shift === cmd.seq_shift)) return failure(conflict('range.seed: this group is not receiving that copy (aborted or committed meanwhile)'));
  }
  const floor = ((await ctx.get(db.meta, SEQ_FLOOR_KEY)) as number | undefined) ?? 0;
  if (cmd.seq_floor > floor) ctx.put(db.meta, SEQ_FLOOR_KEY, cmd.seq_floor);
  const counts = new Map<string, number>();
  for (const [stored, copiedKey, copiedValue] of cmd.records) {
    if (stored === ASSET_BYTES) {
      const key = copiedKey;
      const value = copiedValue;
      ctx.move(db.assets, key, Buffer.from(value as string, 'base64'));
      continue;
    }
    const s = BY_STORED.get(stored)!;
    const [key, value] = shiftSeq(stored, copiedKey, copiedValue, shift);
    const sub = subOf(db, s.name);
    const fresh = (await ctx.get(sub, key)) === undefined;
    ctx.move(sub, key, value); // a copy, not a change: no effects (webhooks, asset references, indexes)
    if (!fresh) continue;
    if (s.counter) counts.set(s.counter, (counts.get(s.counter) ?? 0) + 1);
    if (s.name === 'assetHolds') {
      const asset = key.split(SEP)[1];
      ctx.put(db.assetHolders, asset, (((await ctx.get(db.assetHolders, asset)) as number | undefined) ?? 0) + 1);
    }
  }
  for (const [name, n] of counts) await ctx.increment(db.meta, name, n);
  return { written: cmd.records.length };
}

/** Pure: an event number moved up by `shift` log indexes (its position in its entry kept). */
function shifted(seq: string, shift: number): string {
  return eventSeq(Number(seq.slice(0, 16)) + shift, Number(seq.slice(16)));
}

/** Pure: a copied record with its event numbers moved by `shift` (RangeSeedCommand); the others as they are. */
export function shiftSeq(stored: string, key: string, value: unknown, shift: number): [string, unknown] {
  if (shift === 0) return [key, value];
  const parts = key.split(SEP);
  const last = () => [...parts.slice(0, -1), shifted(parts[parts.length - 1], shift)].join(SEP);
  switch (stored) {
    case 'events':
      return [last(), { ...(value as object), seq: shifted((value as { seq: string }).seq, shift) }];
    case 'event_ids':
      return [key, { ...(value as object), seq: shifted((value as { seq: string }).seq, shift) }];
    case 'pending':
    case 'failed':
    case 'pending_by_user':
      return [last(), value];
    default:
      return [key, value];
  }
}

/**
 * `range.drop`: deletes the records of the fenced range's users, whole users at a time (so the state
 * stays consistent between two drops), as many as fit in `limit` records (at least one user); `done`
 * when none is left. The fence becomes `moved`: from now on the group serves none of these users.
 */
export async function applyRangeDrop(db: StateDb, ctx: ApplyContext, cmd: RangeDropCommand): Promise<{ deleted: number; done: boolean } | ApplyFailure> {
  const fences = ((await ctx.get(db.meta, FENCES_KEY)) as RangeFence[] | undefined) ?? [];
  const f = fences.find((x) => x.start === cmd.fence?.start && x.end === cmd.fence.end && x.new_group === cmd.fence.new_group && x.state !== 'receiving');
  if (!f) return failure(conflict('range.drop: the range is not fenced in this group'));
  if (!Number.isSafeInteger(cmd.limit) || cmd.limit < 1) return failure(new StrataError('invalid_command', 'range.drop: limit must be a positive integer'));
  if (f.state !== 'moved') ctx.put(db.meta, FENCES_KEY, fences.map((x) => (x === f ? { ...x, state: 'moved' as const } : x)));
  return deleteUsersOf(db, ctx, f, cmd.limit);
}

/**
 * `range.clear`: the receiving group of an aborted split or merge deletes what was copied into it
 * (whole users at a time, as `range.drop`). Refused while the range is fenced here as anything but
 * `receiving`: a group never clears users it hands over itself.
 */
export async function applyRangeClear(db: StateDb, ctx: ApplyContext, cmd: RangeClearCommand): Promise<{ deleted: number; done: boolean } | ApplyFailure> {
  const fences = ((await ctx.get(db.meta, FENCES_KEY)) as RangeFence[] | undefined) ?? [];
  const f = cmd.fence;
  if (!validSpec(f) || !Number.isSafeInteger(cmd.limit) || cmd.limit < 1) return failure(new StrataError('invalid_command', 'range.clear: a fence (base, start < end, new_group) and a positive limit are required'));
  if (fences.some((x) => x.state !== 'receiving' && x.start < f.end && f.start < x.end)) return failure(conflict('range.clear: this group hands the range over itself'));
  return deleteUsersOf(db, ctx, f, cmd.limit);
}

/** Deletes the records of a range's users, whole users at a time, up to `limit` records (at least one user); `done` when none is left. */
async function deleteUsersOf(db: StateDb, ctx: ApplyContext, f: RangeFenceSpec, limit: number): Promise<{ deleted: number; done: boolean }> {
  // every record of the range, by user (a full read: a drop is rare, and runs in pieces of `limit`)
  const byUser = new Map<string, { s: (typeof PER_USER)[number]; key: string }[]>();
  for (const s of PER_USER) {
    for await (const [key, value] of subOf(db, s.name).iterator()) {
      const owner = await ownerOf(db, s, key, value);
      if (owner === undefined || !inFence(f, owner)) continue;
      let list = byUser.get(owner);
      if (!list) byUser.set(owner, (list = []));
      list.push({ s, key });
    }
  }
  let deleted = 0;
  const counts = new Map<string, number>();
  const users = [...byUser.keys()].sort();
  let left = users.length;
  for (const user of users) {
    if (deleted > 0 && deleted + byUser.get(user)!.length > limit) break;
    left--;
    for (const { s, key } of byUser.get(user)!) {
      ctx.move(subOf(db, s.name), key, undefined); // not a deletion of the user's data: no effects
      deleted++;
      if (s.counter) counts.set(s.counter, (counts.get(s.counter) ?? 0) - 1);
      if (s.name === 'assetHolds') await releaseAsset(db, ctx, key.split(SEP)[1]);
    }
  }
  for (const [name, n] of counts) await ctx.increment(db.meta, name, n);
  return { deleted, done: left === 0 };
}

/** One holder fewer; the bytes go with the last one (as apply/assets.ts does when a user lets go). */
async function releaseAsset(db: StateDb, ctx: ApplyContext, asset: string): Promise<void> {
  const holders = ((await ctx.get(db.assetHolders, asset)) as number | undefined) ?? 0;
  if (holders > 1) return ctx.put(db.assetHolders, asset, holders - 1);
  ctx.del(db.assetHolders, asset);
  ctx.del(db.assets, asset);
}
