/**
 * Webhook subscriptions (CONTRACT §13). A subscription is created by an admin for anything, or by scoped
 * credentials within their own scope: its filter (`user_ids`, `org_id`) must be within the caller's,
 * and the caller's scope is recorded with it (`created_by`), so it never sees a user the creating key
 * could not, whatever its filter says (apply checks both, store/src/webhooks.ts `webhookSees`).
 * Subscriptions live in the meta shard (0), proposed there (a follower forwards the request); every
 * other shard's leader mirrors them (webhooks/dispatcher.ts). A subscription is visible (listed,
 * deletable, its deliveries readable) to credentials whose scope covers all it can see; any other is
 * answered as unknown.
 */
import { randomUUID } from 'node:crypto';
import {
  compareKeys, conflict, getWebhook, listWebhooks, notFound, settle,
  type WebhookAttempt, type WebhookFilterKind, type WebhookRecord,
} from '@strata/store';
import type { Principal } from '../auth/principal';
import { covers, isUnscoped, requireNamedOrgs, type KeyScope } from '../auth/scope';
import type { Services } from '../services';
import { checkUuid } from '../validation';
import { newWebhookSecret } from '../webhooks/payload';
import { checkWebhookUrl } from '../webhooks/url-guard';

export interface CreateWebhookInput {
  url: string;
  events: WebhookFilterKind[];
  user_ids?: string[] | null;
  org_id?: string | null;
}

/** Who a subscription may see: its filter narrowed by its creator's scope. */
function reach(w: WebhookRecord): KeyScope {
  const by = w.created_by;
  const users = by.user_ids === null ? w.user_ids : w.user_ids === null ? by.user_ids : w.user_ids.filter((u) => by.user_ids!.includes(u));
  return { role: 'read', org_id: by.org_id ?? w.org_id, user_ids: users };
}

/** Listed, deletable and readable by `p` when its scope covers everything the subscription can see. */
function visibleTo(p: Principal, w: WebhookRecord): boolean {
  return covers(p, reach(w));
}

function webhookView(w: WebhookRecord) {
  return { webhook_id: w.webhook_id, url: w.url, events: w.events, user_ids: w.user_ids, org_id: w.org_id, created_at: w.created_at };
}

/** A subscription by id, when `p` may see it (404 otherwise: its existence is not revealed). */
async function visibleWebhook(services: Services, p: Principal, id: string): Promise<WebhookRecord> {
  let webhookId: string;
  try {
    webhookId = checkUuid(id, '/webhook_id');
  } catch {
    throw notFound(`No webhook with id '${id}'.`);
  }
  const w = await getWebhook(services.shards.meta().db, webhookId);
  if (!w || !visibleTo(p, w)) throw notFound(`No webhook with id '${id}'.`);
  return w;
}

/** `POST /v1/webhooks`: the new subscription with its secret (shown only here). */
export async function createWebhook(services: Services, principal: Principal, input: CreateWebhookInput) {
  const userIds = input.user_ids ?? null;
  const orgId = input.org_id ?? null;
  requireNamedOrgs(principal, [orgId]);
  // each named user must be one the credentials may act on (an org key: users of its org)
  for (const user of new Set(userIds ?? [])) await services.scope.authorizeUser(principal, { user_id: user, write: false });
  const { webhooks } = services.config;
  const url = await checkWebhookUrl(input.url, webhooks.allow_private);
  const meta = services.shards.meta();
  // A quick answer when full; the caps that hold are checked by apply, in log order (the limits travel in the command).
  if ((await meta.db.counter('webhooks')) >= webhooks.max_subscriptions) {
    throw conflict(`There are ${webhooks.max_subscriptions} webhook subscriptions already (webhooks.max_subscriptions); delete one first.`);
  }
  // One tenant's credentials may not take everyone's share; the operator (unscoped) is not capped per creator.
  const limits = { max_subscriptions: webhooks.max_subscriptions, per_creator: isUnscoped(principal) ? null : webhooks.max_per_creator };
  const record: WebhookRecord = {
    webhook_id: randomUUID(), url: url.href, events: [...new Set(input.events)], user_ids: userIds === null ? null : [...new Set(userIds)].sort(compareKeys),
    org_id: orgId, secret: newWebhookSecret(), created_at: new Date().toISOString(),
    created_by: { kind: principal.kind, subject: principal.subject, role: principal.role, org_id: principal.org_id, user_ids: principal.user_ids },
    outbox_max: webhooks.outbox_max,
  };
  settle(await meta.log.propose({ type: 'webhook.create', record, limits }));
  services.logger.info({ webhook_id: record.webhook_id, url: record.url, events: record.events, by: principal.subject }, 'webhook subscription created');
  return { ...webhookView(record), secret: record.secret };
}

/** `GET /v1/webhooks`: the subscriptions the caller may see, oldest first. */
export async function listWebhookSubscriptions(services: Services, principal: Principal) {
  const all = (await listWebhooks(services.shards.meta().db)).filter((w) => visibleTo(principal, w));
  all.sort((a, b) => (a.created_at === b.created_at ? compareKeys(a.webhook_id, b.webhook_id) : a.created_at < b.created_at ? -1 : 1));
  return { webhooks: all.map(webhookView) };
}

/** `DELETE /v1/webhooks/:webhook_id`: no more deliveries; those waiting are discarded (other shards follow within a poll). */
export async function deleteWebhook(services: Services, principal: Principal, input: { webhook_id: string }) {
  const w = await visibleWebhook(services, principal, input.webhook_id);
  const answer = settle(await services.shards.meta().log.propose({ type: 'webhook.delete', webhook_id: w.webhook_id, at: new Date().toISOString() }));
  return { status: 'deleted' as const, webhook_id: w.webhook_id, discarded: answer.discarded };
}

/**
 * `GET /v1/webhooks/:webhook_id/deliveries`: counters over every shard and the most recent attempts,
 * newest first (each shard keeps its last 100; they are replicated, and each group is read on a node
 * that holds it, so any node answers the same).
 */
export async function webhookDeliveries(services: Services, principal: Principal, input: { webhook_id: string; limit: number }) {
  const w = await visibleWebhook(services, principal, input.webhook_id);
  const totals = { queued: 0, delivered: 0, dropped: 0, expired: 0 };
  const attempts: WebhookAttempt[] = [];
  // each group's outbox counters and attempts, read where the group is held
  for (const st of await services.reads.each('webhookDeliveries', { webhook_id: w.webhook_id, limit: input.limit })) {
    totals.queued += st.queued;
    totals.delivered += st.delivered;
    totals.dropped += st.dropped;
    totals.expired += st.expired;
    attempts.push(...st.attempts);
  }
  attempts.sort((a, b) => (a.at === b.at ? compareKeys(b.seq, a.seq) || b.attempt - a.attempt : a.at < b.at ? 1 : -1));
  return { webhook_id: w.webhook_id, ...totals, attempts: attempts.slice(0, input.limit).map(({ seq: _seq, ...a }) => a) };
}
