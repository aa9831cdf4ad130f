/**
 * Which units a retrieval may see. Pure predicates over plain units; the index searches take them as
 * their filter, so filtered searches still fill `limit` from the units that pass.
 *
 * - Visibility: the user's own units (whatever their org), plus units of the requested org from any
 *   user; never another user's private units.
 * - Scope: `user` = all the user's streams; `stream` = only the current stream.
 * - Valid time: `start_time ≤ t ≤ end_time` where t is the unit's valid time, or its transaction time
 *   when it has none.
 * - Point in time (`as_of`, transaction time): units created after it are hidden; units retired
 *   (superseded or forgotten) after it are shown; units retired at or before it are hidden. Without
 *   `as_of`, retired units are hidden, except superseded ones when `include_superseded` (a question
 *   about an earlier value).
 */
import type { RetrievalUnit } from './types';

export type FilterableUnit = Pick<RetrievalUnit, 'user_id' | 'stream_id' | 'org_id' | 'valid_time' | 'transaction_time' | 'retired_at' | 'retired_reason'>;

export interface RetrievalScope {
  user_id: string;
  stream_id?: string | null;
  /** default `user` */
  scope?: 'user' | 'stream';
  org_id?: string | null;
  start_time?: string | null;
  end_time?: string | null;
  as_of?: string | null;
  /**
   * Also units retired because a newer value replaced them (not forgotten ones), for questions about
   * before (intent.ts): set by the pipeline from the query, not a request field.
   */
  include_superseded?: boolean;
}

/** Milliseconds of an RFC 3339 time; throws on garbage so a bad bound is never silently ignored. */
export function timeMs(value: string, name = 'time'): number {
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new RangeError(`${name} is not an RFC 3339 time: ${JSON.stringify(value)}`);
  return ms;
}

/** Canonical RFC 3339 UTC with milliseconds, as the server writes every time: such strings sort as times. */
const CANONICAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * Compare a stored time with a bound given in ms, without parsing when the stored time is canonical
 * (filters run on every candidate of every search; Date.parse was most of their cost).
 */
function cmpTime(stored: string, boundIso: string, boundMs: number): number {
  if (stored.length === 24 && CANONICAL.test(stored)) return stored < boundIso ? -1 : stored > boundIso ? 1 : 0;
  const ms = Date.parse(stored);
  return ms < boundMs ? -1 : ms > boundMs ? 1 : 0;
}

/** A bound as ms and as canonical text (comparable with canonical stored times). */
interface Bound {
  ms: number;
  iso: string;
}

function bound(value: string | null | undefined, name: string): Bound | undefined {
  if (!value) return undefined;
  const ms = timeMs(value, name);
  return { ms, iso: new Date(ms).toISOString() };
}

/** The time a unit is about: its valid time, else its transaction time. */
export function effectiveTimeMs(unit: Pick<RetrievalUnit, 'valid_time' | 'transaction_time'>): number {
  const v = unit.valid_time ? Date.parse(unit.valid_time) : NaN;
  return Number.isNaN(v) ? Date.parse(unit.transaction_time) : v;
}

export function isAccessible(unit: Pick<RetrievalUnit, 'user_id' | 'org_id'>, userId: string, orgId?: string | null): boolean {
  if (unit.user_id === userId) return true;
  return !!orgId && unit.org_id === orgId;
}

/** Is the unit part of memory as it stood at `asOfMs` (or now, when undefined)? */
export function isVisibleAt(unit: Pick<RetrievalUnit, 'transaction_time' | 'retired_at'>, asOfMs?: number): boolean {
  if (asOfMs === undefined) return unit.retired_at === null || unit.retired_at === undefined;
  if (Date.parse(unit.transaction_time) > asOfMs) return false;
  if (unit.retired_at === null || unit.retired_at === undefined) return true;
  return Date.parse(unit.retired_at) > asOfMs;
}

export function inTimeRange(unit: Pick<RetrievalUnit, 'valid_time' | 'transaction_time'>, startMs?: number, endMs?: number): boolean {
  if (startMs === undefined && endMs === undefined) return true;
  const t = effectiveTimeMs(unit);
  if (startMs !== undefined && t < startMs) return false;
  if (endMs !== undefined && t > endMs) return false;
  return true;
}

/** One predicate for all the rules above; bounds are parsed once here, not per unit. */
export function buildUnitFilter(scope: RetrievalScope): (unit: FilterableUnit) => boolean {
  const start = bound(scope.start_time, 'start_time');
  const end = bound(scope.end_time, 'end_time');
  const asOf = bound(scope.as_of, 'as_of');
  const streamOnly = scope.scope === 'stream';
  if (streamOnly && !scope.stream_id) throw new RangeError('scope "stream" needs a stream_id');
  const userId = scope.user_id;
  const orgId = scope.org_id ?? null;
  const streamId = scope.stream_id ?? null;
  const superseded = scope.include_superseded === true;
  return (unit) => {
    if (!isAccessible(unit, userId, orgId)) return false;
    if (streamOnly && unit.stream_id !== streamId) return false;
    if (asOf) {
      if (cmpTime(unit.transaction_time, asOf.iso, asOf.ms) > 0) return false;
      if (unit.retired_at && cmpTime(unit.retired_at, asOf.iso, asOf.ms) <= 0) return false;
    } else if (unit.retired_at && !(superseded && unit.retired_reason === 'superseded')) return false;
    if (start || end) {
      const v = unit.valid_time;
      const t = v && (CANONICAL.test(v) || !Number.isNaN(Date.parse(v))) ? v : unit.transaction_time;
      if (start && cmpTime(t, start.iso, start.ms) < 0) return false;
      if (end && cmpTime(t, end.iso, end.ms) > 0) return false;
    }
    return true;
  };
}
