/**
 * Typed effects of an applied command: which units, edges, goals, tasks and users it created,
 * changed, retired or deleted. They are read from the writes apply made to the record sublevels
 * (never from the command's payload), so a new command type has correct effects without an edit here,
 * and every follower of changes (derived indexes, webhooks) sees exactly what apply did.
 */
import { readMany, type FailedRecord, type Sub, type StateDb } from './db';
import { SEP } from './keys';
import type { EventRecord, Goal, L3Task, MemoryUnit } from './types';

export type UnitChange = 'created' | 'changed' | 'retired' | 'deleted';
export type RecordChange = 'created' | 'changed' | 'deleted';

export interface UnitEffect {
  user_id: string;
  unit_id: string;
  change: UnitChange;
  /**
   * Only the unit's importance or retrieval statistics moved: what it is searched by (text, vector,
   * references, everything else) is as before, so an index may replace the record and keep the rest.
   */
  record_only: boolean;
}

export interface EdgeEffect {
  user_id: string;
  edge_id: string;
  change: RecordChange;
}

export interface L3Effect {
  user_id: string;
  kind: 'goal' | 'task';
  id: string;
  change: RecordChange;
  /** the status after the command (null when deleted) */
  status: string | null;
}

export interface UserEffect {
  user_id: string;
  change: 'org_changed';
  /** the user's org after the command */
  org_id: string | null;
}

/** An L0 event stored (accepted by ingest, sedimented by a task, imported) or deleted. */
export interface EventEffect {
  user_id: string;
  stream_id: string;
  event_id: string;
  /** its stream position (the events key is user \0 stream \0 seq) */
  seq: string;
  change: 'created' | 'deleted';
}

/** An event consolidation gave up on (moved to `failed`). */
export interface FailureEffect {
  user_id: string;
  event_id: string;
  /** the failed entry's key */
  seq: string;
}

/**
 * A user's pending entry (an event waiting for consolidation) written: added (ingest, import, a retry)
 * or removed (consolidated, dropped, failed, deleted). Read from the writes alone: a removal may name an
 * entry that was not there. What it is for: a reader that keeps a user's pending events between reads
 * (retrieval's include_pending) knows when to read them again.
 */
export interface PendingEffect {
  user_id: string;
  /** the entry's key in the user's pending index (its acceptance order) */
  seq: string;
  change: 'added' | 'removed';
}

export interface ApplyEffects {
  units: UnitEffect[];
  edges: EdgeEffect[];
  l3: L3Effect[];
  users: UserEffect[];
  events: EventEffect[];
  failures: FailureEffect[];
  pending: PendingEffect[];
}

/** Shared by every command without effects: frozen to the arrays, so no listener can change it for the next one. */
export const NO_EFFECTS: ApplyEffects = Object.freeze({
  units: Object.freeze([]), edges: Object.freeze([]), l3: Object.freeze([]), users: Object.freeze([]), events: Object.freeze([]), failures: Object.freeze([]),
  pending: Object.freeze([]),
}) as unknown as ApplyEffects;

/** The record sublevels whose writes are effects, by what they hold. */
export type TrackedKind = 'unit' | 'unit_stats' | 'vector' | 'edge' | 'goal' | 'task' | 'user_org' | 'event' | 'failed' | 'pending';

export interface TrackedWrite {
  kind: TrackedKind;
  key: string;
  /** the value written; undefined for a delete */
  value: unknown;
}

export function trackedSublevels(db: StateDb): Map<Sub<unknown>, TrackedKind> {
  return new Map<Sub<unknown>, TrackedKind>([
    [db.units as Sub<unknown>, 'unit'],
    [db.unitStats as Sub<unknown>, 'unit_stats'],
    [db.vectors as Sub<unknown>, 'vector'],
    [db.edges as Sub<unknown>, 'edge'],
    [db.goals as Sub<unknown>, 'goal'],
    [db.tasks as Sub<unknown>, 'task'],
    [db.userOrgs as Sub<unknown>, 'user_org'],
    [db.events as Sub<unknown>, 'event'],
    [db.failed as Sub<unknown>, 'failed'],
    [db.pendingByUser as Sub<unknown>, 'pending'],
  ]);
}

/**
 * Point reads of the state before the command: LevelDB, or (a command applied in a batch, see
 * state-machine.ts) the batch's earlier writes first.
 */
export type StateReader = <V>(sub: Sub<V>, keys: string[]) => Promise<(V | undefined)[]>;

const readLevel: StateReader = (sub, keys) => readMany(sub, keys);

/** The records of these keys (deduplicated) before the command, by key. */
async function before<V>(read: StateReader, sub: Sub<V>, keys: string[]): Promise<Map<string, V | undefined>> {
  const unique = [...new Set(keys)];
  const values = unique.length > 0 ? await read(sub, unique) : [];
  return new Map(unique.map((k, i) => [k, values[i]]));
}

async function beforeOne<V>(read: StateReader, sub: Sub<V>, key: string): Promise<V | undefined> {
  return (await read(sub, [key]))[0];
}

/** `user \0 id` → [user, id] */
function split(key: string): [string, string] {
  const at = key.indexOf(SEP);
  return [key.slice(0, at), key.slice(at + 1)];
}

/**
 * A unit record equal to another but for its importance: what the indexes search by is unchanged. Equal
 * means what `JSON.stringify({ ...record, importance: 0 })` writes is equal. Field by field first: the
 * same keys in the same order, each value the same one or an object with the same JSON, is equal; two
 * objects of other JSON are not (a reinforcement's record shares every array of the one it replaces, so
 * this is a walk of the keys, not the two whole records written out, ~10% of a reinforcement's apply and
 * refresh). Anything else (primitives that differ, a key missing) is left to the whole comparison.
 */
export function onlyImportanceMoved(before: MemoryUnit, after: MemoryUnit): boolean {
  const a = before as unknown as Record<string, unknown>;
  const b = after as unknown as Record<string, unknown>;
  const keys = Object.keys(a);
  const other = Object.keys(b);
  if (keys.length === other.length && keys.includes('importance') && other.includes('importance')) {
    let same = true;
    for (let i = 0; i < keys.length && same; i++) {
      const k = keys[i];
      if (k !== other[i]) same = false;
      else if (k === 'importance' || a[k] === b[k]) continue;
      else if (a[k] === null || b[k] === null || typeof a[k] !== 'object' || typeof b[k] !== 'object') same = false;
      else if (JSON.stringify(a[k]) !== JSON.stringify(b[k])) return false;
    }
    if (same) return true;
  }
  return JSON.stringify({ ...before, importance: 0 }) === JSON.stringify({ ...after, importance: 0 });
}

/**
 * Turns a command's writes into effects. Runs after the command's apply and before its batch is
 * written, so `read` still sees the state before the command: a record absent there was created.
 * Deterministic: the writes are in apply order and the state before the command is the same on every
 * replica.
 */
/** Told each event and unit record a command wrote: its user, the record before and after (undefined: absent). */
export type RecordObserver = (userId: string, before: EventRecord | MemoryUnit | undefined, after: EventRecord | MemoryUnit | undefined) => void;

export async function resolveEffects(db: StateDb, writes: readonly TrackedWrite[], read: StateReader = readLevel, observe?: RecordObserver): Promise<ApplyEffects> {
  if (writes.length === 0) return NO_EFFECTS;
  // The last write of a key is what the command left; later writes of the same key replace earlier ones.
  const last = new Map<string, TrackedWrite>();
  const touchedContent = new Set<string>(); // unit keys whose vector was written
  const touchedStats = new Set<string>(); // unit keys whose statistics were written
  for (const w of writes) {
    if (w.kind === 'vector') touchedContent.add(w.key);
    else if (w.kind === 'unit_stats') touchedStats.add(w.key);
    else last.set(`${w.kind}|${w.key}`, w);
  }
  const effects: ApplyEffects = { units: [], edges: [], l3: [], users: [], events: [], failures: [], pending: [] };
  // The units' and edges' state before, in one getMany each (a consolidation batch writes hundreds).
  const unitBefore = await before(read, db.units, [...[...last.values()].filter((w) => w.kind === 'unit').map((w) => w.key), ...touchedContent, ...touchedStats]);
  const edgeBefore = await before(read, db.edges, [...last.values()].filter((w) => w.kind === 'edge').map((w) => w.key));
  const unitKeys = new Set<string>();
  const eventWrites: TrackedWrite[] = [];
  for (const w of last.values()) {
    if (w.kind === 'unit') {
      unitKeys.add(w.key);
      const [user_id, unit_id] = split(w.key);
      const before = unitBefore.get(w.key);
      const after = w.value as MemoryUnit | undefined;
      observe?.(user_id, before, after);
      if (!after) {
        if (before) effects.units.push({ user_id, unit_id, change: 'deleted', record_only: false });
        continue;
      }
      const change: UnitChange = !before ? 'created' : after.retired_at && !before.retired_at ? 'retired' : 'changed';
      const record_only = change === 'changed' && !touchedContent.has(w.key) && onlyImportanceMoved(before as MemoryUnit, after);
      effects.units.push({ user_id, unit_id, change, record_only });
    } else if (w.kind === 'edge') {
      const [user_id, edge_id] = split(w.key);
      const before = edgeBefore.get(w.key);
      if (w.value === undefined) {
        if (before) effects.edges.push({ user_id, edge_id, change: 'deleted' });
      } else effects.edges.push({ user_id, edge_id, change: before ? 'changed' : 'created' });
    } else if (w.kind === 'goal' || w.kind === 'task') {
      const [user_id, id] = split(w.key);
      const before = w.kind === 'goal' ? await beforeOne(read, db.goals, w.key) : await beforeOne(read, db.tasks, w.key);
      const after = w.value as Goal | L3Task | undefined;
      if (!after) {
        if (before) effects.l3.push({ user_id, kind: w.kind, id, change: 'deleted', status: null });
      } else effects.l3.push({ user_id, kind: w.kind, id, change: before ? 'changed' : 'created', status: after.status });
    } else if (w.kind === 'user_org') {
      const before = await beforeOne(read, db.userOrgs, w.key);
      const after = w.value as { org_id: string } | undefined;
      if ((before?.org_id ?? null) !== (after?.org_id ?? null)) effects.users.push({ user_id: w.key, change: 'org_changed', org_id: after?.org_id ?? null });
    } else if (w.kind === 'event') {
      eventWrites.push(w);
    } else if (w.kind === 'pending') {
      const [user_id, seq] = split(w.key);
      effects.pending.push({ user_id, seq, change: w.value === undefined ? 'removed' : 'added' });
    } else if (w.kind === 'failed') {
      const after = w.value as FailedRecord | undefined;
      if (after && !(await beforeOne(read, db.failed, w.key))) effects.failures.push({ user_id: after.user_id, event_id: after.event_id, seq: w.key });
    }
  }
  // Events come in batches of up to a thousand: their state before is read in one getMany.
  if (eventWrites.length > 0) {
    const befores = await read(db.events, eventWrites.map((w) => w.key));
    eventWrites.forEach((w, i) => {
      const [user_id, stream_id, seq] = w.key.split(SEP);
      const before = befores[i];
      const after = w.value as EventRecord | undefined;
      observe?.(user_id, before, after);
      if (after && !before) effects.events.push({ user_id, stream_id, event_id: after.event_id, seq, change: 'created' });
      else if (!after && before) effects.events.push({ user_id, stream_id, event_id: before.event_id, seq, change: 'deleted' });
    });
  }
  // A vector or statistics written without the unit record: the unit changed (its content, or only its usage).
  for (const key of new Set([...touchedContent, ...touchedStats])) {
    if (unitKeys.has(key)) continue;
    const [user_id, unit_id] = split(key);
    if (!unitBefore.get(key)) continue;
    effects.units.push({ user_id, unit_id, change: 'changed', record_only: !touchedContent.has(key) });
  }
  return effects;
}
