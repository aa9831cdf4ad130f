/**
 * Webhook subscriptions and their outboxes (CONTRACT §13), as the replicated state keeps them.
 *
 * Where they live: every shard holds a copy of every subscription (sublevel `webhooks`). The meta shard
 * (0) holds the copy of record, written by the routes; each other shard's leader mirrors it into its
 * own shard with the same `webhook.create` / `webhook.delete` commands. A shard's apply must match its
 * changes against subscriptions deterministically, and it can read only its own state, so each shard
 * needs its own copy. A deleted subscription leaves a tombstone, so a late mirror cannot bring it back.
 *
 * The outbox: apply turns a command's typed effects into deliveries (apply/webhooks.ts) and writes one
 * per matching subscription under `webhook_outbox` (webhook_id \0 seq, seq = log index + position: commit
 * order). The shard leader's dispatcher sends them in that order and removes what it delivered with a
 * `webhook.advance` command, so the outbox *is* the replicated delivery position: a new leader reads it
 * and resends at most what was sent but not yet advanced. Each outbox is bounded (`outbox_max` of the
 * subscription): beyond it, the oldest delivery is dropped and counted.
 */
import type { StateDb } from './db';
import { prefixRange, SEP } from './keys';
import type { ApiKeyRole, EventRecord, L3Task, MemoryUnit, TaskStatus } from './types';

export const WEBHOOK_KINDS = [
  'event.accepted', 'memory.created', 'memory.superseded', 'memory.deleted', 'task.created', 'task.status_changed', 'consolidation.failed',
] as const;
export type WebhookKind = (typeof WEBHOOK_KINDS)[number];
/** What a subscription asks for: kinds, or `*` for all. */
export type WebhookFilterKind = WebhookKind | '*';

/** Attempts kept per subscription and shard for `GET /v1/webhooks/:id/deliveries` (the oldest go first). */
export const WEBHOOK_ATTEMPTS_KEPT = 100;
/** Characters of an event's content copied into a delivery; longer content is cut (and the delivery says so). */
export const WEBHOOK_CONTENT_MAX = 16_384;

/** Who created a subscription: their scope bounds what it sees, whatever its own filter says. */
export interface WebhookCreator {
  kind: string;
  subject: string;
  role: ApiKeyRole;
  org_id: string | null;
  user_ids: string[] | null;
}

export interface WebhookRecord {
  webhook_id: string;
  url: string;
  events: WebhookFilterKind[];
  /** the subscription's own filter: only these users (null: every user the creator may see) */
  user_ids: string[] | null;
  /** only users of this organization (null: any) */
  org_id: string | null;
  /** the HMAC key of the signatures: kept in clear, the dispatcher signs with it */
  secret: string;
  created_at: string;
  created_by: WebhookCreator;
  /** deliveries waiting at most, per shard; beyond, the oldest are dropped (counted in `dropped`) */
  outbox_max: number;
  deleted_at?: undefined;
}

/** What a deleted subscription leaves: its id is never live again (a late mirror create is a no-op). */
export interface WebhookTombstone {
  webhook_id: string;
  deleted_at: string;
}

export type StoredWebhook = WebhookRecord | WebhookTombstone;

export function isLiveWebhook(w: StoredWebhook | undefined): w is WebhookRecord {
  return w !== undefined && w.deleted_at === undefined;
}

/** What a delivery is about, copied at apply (the state after the command; a deleted unit as it was). */
export type WebhookSubject =
  | { kind: 'event'; event: EventRecord; truncated: boolean }
  | { kind: 'unit'; unit: MemoryUnit; change: 'created' | 'superseded' | 'forgotten' | 'deleted' }
  | { kind: 'task'; task: L3Task; previous_status: TaskStatus | null }
  | { kind: 'failure'; event_id: string; stream_id: string; error: string; attempts: number };

export interface WebhookDelivery {
  /** the change's id (the same for every subscription): a UUID made from user and seq */
  id: string;
  type: WebhookKind;
  /** the time of the command that made the change */
  created_at: string;
  user_id: string;
  /** the user's organization when the change was applied */
  org_id: string | null;
  /** log index (16 digits) + position in the command (5 digits): commit order */
  seq: string;
  subject: WebhookSubject;
}

/** Counters of one subscription in one shard. */
export interface WebhookState {
  /** deliveries in the outbox */
  queued: number;
  /** delivered (a 2xx), as advanced */
  delivered: number;
  /** dropped from a full outbox (the oldest first) */
  dropped: number;
  /** given up on: not delivered within the retry window */
  expired: number;
  /** attempts kept in `webhook_attempts` */
  attempts: number;
  /** the last seq the dispatcher advanced past (null: none yet) */
  delivered_through: string | null;
}

export const EMPTY_WEBHOOK_STATE: WebhookState = Object.freeze({ queued: 0, delivered: 0, dropped: 0, expired: 0, attempts: 0, delivered_through: null });

/** One delivery attempt as the dispatcher reports it (replicated with `webhook.advance`, for the deliveries route). */
export interface WebhookAttempt {
  delivery_id: string;
  type: WebhookKind;
  user_id: string;
  seq: string;
  /** 1 for the first try of this delivery by this leader */
  attempt: number;
  at: string;
  /** the receiver's HTTP status (null: no answer) */
  status: number | null;
  error: string | null;
  duration_ms: number;
  outcome: 'delivered' | 'failed' | 'expired';
}

// ---- pure helpers ----

/** Does the subscription (its own filter and its creator's scope) see changes of this user, of this org? */
export function webhookSees(w: WebhookRecord, userId: string, userOrg: string | null): boolean {
  for (const scope of [w, w.created_by]) {
    if (scope.user_ids && !scope.user_ids.includes(userId)) return false;
    if (scope.org_id !== null && scope.org_id !== userOrg) return false;
  }
  return true;
}

export function webhookWants(w: WebhookRecord, kind: WebhookKind): boolean {
  return w.events.includes('*') || w.events.includes(kind);
}

/** `webhook_id \0 seq`: one subscription's outbox is one key range, in commit order. */
export function outboxKey(webhookId: string, seq: string): string {
  return webhookId + SEP + seq;
}

// ---- queries (a replica's state) ----

/** Every subscription of this shard's copy, live ones only, in id order. */
export async function listWebhooks(db: StateDb): Promise<WebhookRecord[]> {
  const out: WebhookRecord[] = [];
  for await (const w of db.webhooks.values()) if (isLiveWebhook(w)) out.push(w);
  return out;
}

/** Every stored subscription record, tombstones included (the mirror compares them). */
export async function storedWebhooks(db: StateDb): Promise<Map<string, StoredWebhook>> {
  const out = new Map<string, StoredWebhook>();
  for await (const [id, w] of db.webhooks.iterator()) out.set(id, w);
  return out;
}

export async function getWebhook(db: StateDb, webhookId: string): Promise<WebhookRecord | undefined> {
  const w = await db.webhooks.get(webhookId);
  return isLiveWebhook(w) ? w : undefined;
}

export async function webhookState(db: StateDb, webhookId: string): Promise<WebhookState> {
  return (await db.webhookState.get(webhookId)) ?? EMPTY_WEBHOOK_STATE;
}

/** Up to `limit` deliveries of the subscription's outbox after `afterSeq` (null: from the oldest), in commit order. */
export async function outboxPage(db: StateDb, webhookId: string, afterSeq: string | null, limit: number): Promise<WebhookDelivery[]> {
  const range = prefixRange(webhookId);
  const out: WebhookDelivery[] = [];
  for await (const d of db.webhookOutbox.values({ ...(afterSeq === null ? { gt: range.gt } : { gt: outboxKey(webhookId, afterSeq) }), lt: range.lt, limit })) out.push(d);
  return out;
}

/** The subscription's most recent attempts in this shard, newest first. */
export async function recentAttempts(db: StateDb, webhookId: string, limit: number): Promise<WebhookAttempt[]> {
  const out: WebhookAttempt[] = [];
  for await (const a of db.webhookAttempts.values({ ...prefixRange(webhookId), reverse: true, limit })) out.push(a);
  return out;
}
