/** Groups events into batch requests, and names each batch with an Idempotency-Key. */
import { createHash } from 'node:crypto';
import type { ChatExportMessage, EventInput } from '@strata/client';
import type { InputEvent } from './input';

export interface Batch {
  /** input line of each event */
  lines: number[];
  events: EventInput[];
  /** a chat export's messages (instead of `events`): sent as `messages`, the server makes the events */
  messages?: ChatExportMessage[];
}

/**
 * Batches of at most `maxEvents` events and about `maxBytes` of JSON (a single larger event goes alone,
 * and the server judges it), so a batch of long lines stays under the server's body limit.
 */
export async function* inBatches(source: AsyncIterable<InputEvent>, maxEvents: number, maxBytes: number): AsyncGenerator<Batch> {
  let batch: Batch = { lines: [], events: [] };
  let bytes = 0;
  for await (const { line, event, message } of source) {
    const size = Buffer.byteLength(JSON.stringify(message ?? event));
    if (batch.lines.length > 0 && (batch.lines.length >= maxEvents || bytes + size > maxBytes)) {
      yield batch;
      batch = { lines: [], events: [] };
      bytes = 0;
    }
    batch.lines.push(line);
    if (message) (batch.messages ??= []).push(message);
    else batch.events.push(event);
    bytes += size;
  }
  if (batch.lines.length > 0) yield batch;
}

/**
 * The batch's Idempotency-Key: a hash of where it starts in the input and what it holds. A retry sends
 * the same key, and so does a re-run of the same input (same --batch-size) into the same stream within
 * the server's ingest.idempotency_ttl: batches already accepted are answered again, not stored twice.
 */
export function idempotencyKey(batch: Batch): string {
  return `strata-cli-${createHash('sha256').update(JSON.stringify([batch.lines[0], batch.messages ?? batch.events])).digest('hex')}`;
}
