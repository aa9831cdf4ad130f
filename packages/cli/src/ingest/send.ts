/** Sends one batch, retrying what may succeed later (429, 503, no answer) under the same Idempotency-Key. */
import { StrataApiError, type StrataClient } from '@strata/client';
import { idempotencyKey, type Batch } from './batches';

export const ATTEMPTS = 5;

export interface Target {
  user: string;
  stream: string;
}

function retryable(err: unknown): boolean {
  return err instanceof StrataApiError ? err.status === 429 || err.status === 503 : true;
}

/** Retry-After when the server gives one (capped), else exponential from 250 ms. */
function delayMs(err: unknown, attempt: number): number {
  const header = err instanceof StrataApiError ? Number(err.headers['retry-after']) : NaN;
  return Number.isFinite(header) && header > 0 ? Math.min(header, 30) * 1000 : 250 * 2 ** (attempt - 1);
}

export async function sendBatch(client: StrataClient, target: Target, batch: Batch, sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))): Promise<string[]> {
  const key = idempotencyKey(batch);
  for (let attempt = 1; ; attempt++) {
    try {
      const answer = batch.messages
        ? await client.ingestChat(target.user, target.stream, batch.messages, { idempotencyKey: key })
        : await client.ingestBatch(target.user, target.stream, batch.events, { idempotencyKey: key });
      return answer.event_ids;
    } catch (err) {
      if (attempt >= ATTEMPTS || !retryable(err)) throw err;
      await sleep(delayMs(err, attempt));
    }
  }
}
