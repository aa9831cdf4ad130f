/**
 * What a receiver gets (CONTRACT §13): the delivery's JSON body, made from the outbox record with the
 * same views the REST routes answer with, and its signature. The body of one delivery is the same
 * bytes on every attempt and every leader (it is a pure function of the replicated record), so a
 * receiver may deduplicate on `x-strata-event-id` and the signature stays checkable.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { WebhookDelivery } from '@strata/store';
import { eventView, taskView, unitView } from '../operations/views';

/** The `data` of each kind: the record as the REST routes show it, and what changed. */
function dataOf(d: WebhookDelivery): Record<string, unknown> {
  const s = d.subject;
  switch (s.kind) {
    case 'event':
      return { stream_id: s.event.stream_id, event: eventView(s.event), content_truncated: s.truncated };
    case 'unit':
      if (s.change === 'created') return { memory: unitView(s.unit) };
      if (s.change === 'superseded') return { memory_id: s.unit.id, superseded_by: s.unit.superseded_by, memory: unitView(s.unit) };
      // deleted (hard delete, pruning) or forgotten (a logical forget: retired, kept for as_of)
      return { memory_id: s.unit.id, mode: s.change, memory: unitView(s.unit) };
    case 'task':
      return s.previous_status === null ? { task: taskView(s.task) } : { task_id: s.task.task_id, status: s.task.status, previous_status: s.previous_status, task: taskView(s.task) };
    case 'failure':
      return { event_id: s.event_id, stream_id: s.stream_id, error: s.error, attempts: s.attempts };
  }
}

/** `{id, type, created_at, user_id, org_id?, data}` as JSON: the exact bytes that are signed and sent. */
export function deliveryBody(d: WebhookDelivery): string {
  return JSON.stringify({ id: d.id, type: d.type, created_at: d.created_at, user_id: d.user_id, ...(d.org_id !== null ? { org_id: d.org_id } : {}), data: dataOf(d) });
}

/** `sha256=<hex HMAC-SHA256 of the raw body with the secret>` (the x-strata-signature header). */
export function signature(body: string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

/** The header of the timestamped signature: a receiver that checks the time refuses a replayed delivery. */
export const TIMED_SIGNATURE_HEADER = 'x-strata-webhook-signature';

/**
 * `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" with the secret>`: the time of the attempt
 * is signed with the body, so a receiver that refuses a `t` older than a few minutes cannot be made to
 * accept a captured delivery again later (the body alone, `x-strata-signature`, is the same on every
 * attempt and stays valid forever). `at` is the attempt's time in ms.
 */
export function timedSignature(body: string, secret: string, at: number): string {
  const t = Math.floor(at / 1000);
  return `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${body}`, 'utf8').digest('hex')}`;
}

/** A new subscription's secret: `whsec_` and 32 random bytes, base64url. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}
