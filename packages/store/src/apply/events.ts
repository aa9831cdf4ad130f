import type { ApplyContext } from '../apply-context';
import type { IngestAnswer, IngestCommand } from '../commands';
import type { StateDb } from '../db';
import { eventSeq, join } from '../keys';
import { streamIndex } from '../range-split';
import { holdAsset } from './assets';

/**
 * Stores a command's events (L0), their assets and their pending-consolidation entries. With an
 * idempotency key already seen (and not expired at the command's time), it stores nothing and answers
 * as the first time did.
 */
export async function applyIngest(db: StateDb, ctx: ApplyContext, cmd: IngestCommand): Promise<IngestAnswer> {
  if (cmd.idempotency) {
    const key = join(cmd.user_id, cmd.stream_id, cmd.idempotency.key);
    const seen = await ctx.get(db.idempotency, key);
    if (seen && seen.expires_at > cmd.at) return { ...(seen.answer as IngestAnswer), replayed: true };
  }
  // The user gave these bytes: it holds them (apply/assets.ts), and its events' references count from here.
  for (const asset of cmd.assets) await holdAsset(db, ctx, cmd.user_id, asset.asset_id, Buffer.from(asset.data_b64, 'base64'));
  const numbered = await streamIndex(db, ctx); // after a seeded group's floor (range-split.ts)
  cmd.events.forEach((event, position) => {
    const seq = eventSeq(numbered, position);
    ctx.put(db.events, join(cmd.user_id, cmd.stream_id, seq), { ...event, seq });
    ctx.put(db.eventIds, join(cmd.user_id, event.event_id), { stream_id: cmd.stream_id, seq });
    ctx.put(db.pending, seq, {
      user_id: cmd.user_id, stream_id: cmd.stream_id, event_id: event.event_id, accepted_at: event.transaction_time,
    });
  });
  await ctx.increment(db.meta, 'events', cmd.events.length);
  await ctx.increment(db.meta, 'pending', cmd.events.length);
  const answer: IngestAnswer = { event_ids: cmd.events.map((e) => e.event_id), replayed: false };
  if (cmd.idempotency) {
    ctx.put(db.idempotency, join(cmd.user_id, cmd.stream_id, cmd.idempotency.key), {
      answer, expires_at: cmd.idempotency.expires_at,
    });
  }
  return answer;
}
