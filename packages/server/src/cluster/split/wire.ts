/** Pure: the bodies of the split driver's requests between nodes (routes/cluster.ts), validated. */
import { badRequest, type Command, type HalfCursor, type RangeFenceSpec } from '@strata/store';

const RANGE_COMMANDS = new Set(['range.fence', 'range.unfence', 'range.seed', 'range.drop', 'range.receive', 'range.clear']);

/** `{command}`: one of a split's commands for the group (never any other kind: this route proposes nothing else). */
export function parseRangeCommand(body: unknown): Command {
  const c = typeof body === 'object' && body !== null ? (body as { command?: { type?: unknown } }).command : undefined;
  if (typeof c !== 'object' || c === null || !RANGE_COMMANDS.has(c.type as string)) {
    throw badRequest('validation_failed', 'command must be a range.fence, range.unfence, range.seed, range.drop, range.receive or range.clear command.', [{ path: '/command/type', message: 'is not a split step' }]);
  }
  return c as Command;
}

/** `{fence, cursor}`: which range, from where. */
export function parseRangeRead(body: unknown): { fence: RangeFenceSpec; cursor: HalfCursor } {
  const b = (typeof body === 'object' && body !== null ? body : {}) as { fence?: Partial<RangeFenceSpec>; cursor?: Partial<HalfCursor> };
  const f = b.fence;
  const c = b.cursor;
  const fenceOk = f !== undefined && [f.base, f.start, f.end, f.new_group].every((n) => Number.isSafeInteger(n));
  const cursorOk = c !== undefined && Number.isSafeInteger(c.sub) && (c.sub as number) >= 0 && (c.after === null || typeof c.after === 'string');
  if (!fenceOk || !cursorOk) throw badRequest('validation_failed', 'A range read needs fence {base, start, end, new_group} and cursor {sub, after}.');
  return { fence: f as RangeFenceSpec, cursor: c as HalfCursor };
}

/** A group id in a path: decimal digits only (not 0x2, 2e0). */
export function parseGroupId(text: string): number {
  const id = /^[0-9]{1,6}$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(id)) throw badRequest('invalid_id', 'group_id must be a non-negative integer.');
  return id;
}

/** `{base, start, end}`: the range whose users' median key is asked. */
export function parseRangeMedian(body: unknown): { base: number; range: { start: number; end: number } } {
  const b = (typeof body === 'object' && body !== null ? body : {}) as { base?: unknown; start?: unknown; end?: unknown };
  const ok = [b.base, b.start, b.end].every((n) => Number.isSafeInteger(n)) && (b.base as number) >= 1 && (b.start as number) < (b.end as number);
  if (!ok) throw badRequest('validation_failed', 'A median read needs base ≥ 1 and integers start < end.');
  return { base: b.base as number, range: { start: b.start as number, end: b.end as number } };
}
