import type { StateDb } from './db';
import { join, prefixRange } from './keys';
import type { EventRecord } from './types';

export interface EventPage {
  events: EventRecord[];
  /** seq of the last event returned when more may follow, else null */
  next_cursor: string | null;
}

/** A stream's raw events in acceptance order, after a cursor (an event's seq). */
export async function listEvents(db: StateDb, userId: string, streamId: string, after: string | null, limit: number): Promise<EventPage> {
  const range = prefixRange(userId, streamId);
  const gt = after ? join(userId, streamId, after) : range.gt;
  const events: EventRecord[] = [];
  for await (const value of db.events.values({ gt, lt: range.lt, limit: limit + 1 })) events.push(value);
  const more = events.length > limit;
  if (more) events.pop();
  return { events, next_cursor: more ? events[events.length - 1].seq : null };
}

export async function getEvent(db: StateDb, userId: string, eventId: string): Promise<EventRecord | undefined> {
  const at = await db.eventIds.get(join(userId, eventId));
  return at ? db.events.get(join(userId, at.stream_id, at.seq)) : undefined;
}

export interface PendingSummary {
  pending: number;
  failed: number;
  /** accepted_at of the oldest pending event, null when none */
  oldest_accepted_at: string | null;
}

export async function pendingSummary(db: StateDb): Promise<PendingSummary> {
  let oldest: string | null = null;
  for await (const entry of db.pending.values({ limit: 1 })) oldest = entry.accepted_at;
  return { pending: await db.counter('pending'), failed: await db.counter('failed'), oldest_accepted_at: oldest };
}
