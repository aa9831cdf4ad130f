/**
 * Webhooks in the state machine (CONTRACT §13; the layout is in ../webhooks.ts): the three commands
 * (create, delete, advance) and the outbox writer that runs after every command, turning its typed
 * effects into deliveries for the subscriptions that want and may see them. Everything is decided from
 * the command, its effects and the state: apply is deterministic, so every replica holds the same
 * outboxes and a new leader resumes from them.
 */
import { createHash } from 'node:crypto';
import type { ApplyContext } from '../apply-context';
import type {
  Command, WebhookAdvanceAnswer, WebhookAdvanceCommand, WebhookCreateAnswer, WebhookCreateCommand, WebhookDeleteAnswer, WebhookDeleteCommand,
} from '../commands';
import type { StateDb, Sub } from '../db';
import type { ApplyEffects } from '../effects';
import { conflict, failure, notFound, StrataError, type ApplyFailure } from '../errors';
import { join, padIndex, prefixRange } from '../keys';
import type { EventRecord } from '../types';
import {
  EMPTY_WEBHOOK_STATE, isLiveWebhook, outboxKey, WEBHOOK_ATTEMPTS_KEPT, WEBHOOK_CONTENT_MAX, WEBHOOK_KINDS, webhookSees, webhookWants,
  type WebhookDelivery, type WebhookRecord, type WebhookState, type WebhookSubject,
} from '../webhooks';

const COUNTER = 'webhooks';
/**
 * The meta key of the live subscription count. While it is 0, applying a change enqueues nothing and
 * reads no outbox (state-machine.ts relies on it to apply ingests in batches).
 */
export const LIVE_WEBHOOKS_KEY = `counter\u0000${COUNTER}`;
const KINDS: ReadonlySet<string> = new Set([...WEBHOOK_KINDS, '*']);

const invalid = (message: string) => failure(new StrataError('invalid_command', message));
const isCount = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n >= 0;

/** Why a record cannot be stored (null: it can). The proposer validated the input; this guards the log. */
function recordProblem(r: WebhookRecord): string | null {
  if (typeof r.webhook_id !== 'string' || r.webhook_id === '') return 'webhook_id must be a non-empty string';
  if (typeof r.url !== 'string' || !/^https?:\/\//.test(r.url)) return 'url must be an http(s) URL';
  if (!Array.isArray(r.events) || r.events.length === 0 || r.events.some((k) => !KINDS.has(k))) return 'events must name known kinds';
  if (typeof r.secret !== 'string' || r.secret.length < 16) return 'secret must be at least 16 characters';
  if (!Number.isInteger(r.outbox_max) || r.outbox_max < 1) return 'outbox_max must be a positive integer';
  if (typeof r.created_by !== 'object' || r.created_by === null) return 'created_by is required';
  return null;
}

/** A subscription, unless its id is taken (by a live record or a tombstone): then nothing changes. */
export async function applyWebhookCreate(db: StateDb, ctx: ApplyContext, cmd: WebhookCreateCommand): Promise<WebhookCreateAnswer | ApplyFailure> {
  const problem = recordProblem(cmd.record);
  if (problem) return invalid(`webhook.create: ${problem}`);
  if ((await ctx.get(db.webhooks, cmd.record.webhook_id)) !== undefined) return { created: false };
  // The caps are checked here, in log order, not by the proposer before proposing: 160 creates at once
  // all passed a count read before any of them applied (red-team round 3, finding 3).
  const creator = creatorCounter(cmd.record.created_by);
  const mine = ((await ctx.get(db.meta, creator)) as number | undefined) ?? 0;
  if (cmd.limits) {
    const live = ((await ctx.get(db.meta, LIVE_WEBHOOKS_KEY)) as number | undefined) ?? 0;
    if (live >= cmd.limits.max_subscriptions) {
      return failure(conflict(`There are ${cmd.limits.max_subscriptions} webhook subscriptions already (webhooks.max_subscriptions); delete one first.`));
    }
    if (cmd.limits.per_creator !== null && mine >= cmd.limits.per_creator) {
      return failure(conflict(`These credentials have ${cmd.limits.per_creator} webhook subscriptions already (webhooks.max_per_creator); delete one first.`));
    }
  }
  ctx.put(db.webhooks, cmd.record.webhook_id, cmd.record);
  ctx.put(db.webhookState, cmd.record.webhook_id, { ...EMPTY_WEBHOOK_STATE });
  await ctx.increment(db.meta, COUNTER, 1);
  ctx.put(db.meta, creator, mine + 1);
  return { created: true };
}

/** The meta key counting the live subscriptions made by one set of credentials (kind and subject: an API key's id, an account's name). */
function creatorCounter(by: WebhookRecord['created_by']): string {
  return `${LIVE_WEBHOOKS_KEY}_by\u0000${by.kind}\u0000${by.subject}`;
}

/** Deletes every key of one subscription in a sublevel keyed `webhook_id \0 …`; answers how many. */
async function clearRange<V>(ctx: ApplyContext, sub: Sub<V>, webhookId: string): Promise<number> {
  let n = 0;
  for await (const key of sub.keys(prefixRange(webhookId))) {
    ctx.del(sub, key);
    n++;
  }
  return n;
}

export async function applyWebhookDelete(db: StateDb, ctx: ApplyContext, cmd: WebhookDeleteCommand): Promise<WebhookDeleteAnswer | ApplyFailure> {
  const stored = await ctx.get(db.webhooks, cmd.webhook_id);
  if (!isLiveWebhook(stored)) return failure(notFound(`No webhook with id '${cmd.webhook_id}'.`));
  ctx.put(db.webhooks, cmd.webhook_id, { webhook_id: cmd.webhook_id, deleted_at: cmd.at });
  // The creator's count (a subscription made before it was kept has none to lower: never below 0).
  const creator = creatorCounter(stored.created_by);
  const mine = ((await ctx.get(db.meta, creator)) as number | undefined) ?? 0;
  if (mine > 1) ctx.put(db.meta, creator, mine - 1);
  else if (mine === 1) ctx.del(db.meta, creator);
  const discarded = await clearRange(ctx, db.webhookOutbox, cmd.webhook_id);
  await clearRange(ctx, db.webhookAttempts, cmd.webhook_id);
  ctx.del(db.webhookState, cmd.webhook_id);
  await ctx.increment(db.meta, COUNTER, -1);
  return { webhook_id: cmd.webhook_id, discarded };
}

/**
 * Moves delivery positions: removes each subscription's outbox up to `through` (what its dispatcher
 * delivered or gave up on), adds the counts, and appends the attempts, keeping the newest
 * WEBHOOK_ATTEMPTS_KEPT. A subscription deleted meanwhile is skipped.
 */
export async function applyWebhookAdvance(db: StateDb, ctx: ApplyContext, cmd: WebhookAdvanceCommand): Promise<WebhookAdvanceAnswer | ApplyFailure> {
  if (!Array.isArray(cmd.webhooks)) return invalid('webhook.advance: webhooks must be a list');
  for (const p of cmd.webhooks) {
    if (typeof p.webhook_id !== 'string' || !isCount(p.delivered) || !isCount(p.expired) || !Array.isArray(p.attempts) || p.attempts.some((a) => typeof a !== 'object' || a === null)) {
      return invalid('webhook.advance: each entry needs webhook_id, delivered, expired and attempts');
    }
    if (p.through !== null && typeof p.through !== 'string') return invalid('webhook.advance: through must be a seq or null');
  }
  // One entry per subscription: each entry's removals and trimming read the stored ranges, not this command's writes.
  if (new Set(cmd.webhooks.map((p) => p.webhook_id)).size !== cmd.webhooks.length) return invalid('webhook.advance: a subscription is named twice');
  const answer: WebhookAdvanceAnswer = { advanced: [], skipped: 0 };
  let position = 0;
  for (const p of cmd.webhooks) {
    if (!isLiveWebhook(await ctx.get(db.webhooks, p.webhook_id))) {
      answer.skipped++;
      continue;
    }
    const state: WebhookState = { ...((await ctx.get(db.webhookState, p.webhook_id)) ?? EMPTY_WEBHOOK_STATE) };
    let removed = 0;
    if (p.through !== null) {
      const range = prefixRange(p.webhook_id);
      for await (const key of db.webhookOutbox.keys({ gt: range.gt, lte: outboxKey(p.webhook_id, p.through) })) {
        ctx.del(db.webhookOutbox, key);
        removed++;
      }
      if (state.delivered_through === null || p.through > state.delivered_through) state.delivered_through = p.through;
    }
    state.queued -= removed;
    state.delivered += p.delivered;
    state.expired += p.expired;
    // The newest attempts are kept: an advance carrying more than the bound keeps its last ones.
    const attempts = p.attempts.slice(-WEBHOOK_ATTEMPTS_KEPT);
    for (const a of attempts) ctx.put(db.webhookAttempts, join(p.webhook_id, padIndex(ctx.index) + String(position++).padStart(5, '0')), a);
    const excess = state.attempts + attempts.length - WEBHOOK_ATTEMPTS_KEPT;
    if (excess > 0) {
      // the oldest stored ones (all older than this command's): the first `excess` keys of the range
      for await (const key of db.webhookAttempts.keys({ ...prefixRange(p.webhook_id), limit: excess })) ctx.del(db.webhookAttempts, key);
    }
    state.attempts = Math.min(WEBHOOK_ATTEMPTS_KEPT, state.attempts + attempts.length);
    ctx.put(db.webhookState, p.webhook_id, state);
    answer.advanced.push({ webhook_id: p.webhook_id, removed });
  }
  return answer;
}

// ---- the outbox writer ----

/** A change as a webhook sees it, before it is addressed to subscriptions. */
interface Change {
  type: WebhookDelivery['type'];
  user_id: string;
  subject: WebhookSubject;
}

/** A UUID (version 8, name-based) from the user and the change's position: the same on every replica and for every subscription. */
export function deliveryId(userId: string, seq: string): string {
  const h = createHash('sha256').update(`${userId}\u0000${seq}`).digest('hex');
  const variant = ((parseInt(h[16], 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** The event as a delivery carries it: content cut at WEBHOOK_CONTENT_MAX characters (on a code point boundary). */
function cappedEvent(event: EventRecord): { event: EventRecord; truncated: boolean } {
  if (event.content.length <= WEBHOOK_CONTENT_MAX) return { event, truncated: false };
  let end = WEBHOOK_CONTENT_MAX;
  const code = event.content.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--; // do not split a surrogate pair
  return { event: { ...event, content: event.content.slice(0, end) }, truncated: true };
}

/**
 * The changes of one command that webhooks report, in a fixed order (events, failures, memory, tasks;
 * within each, the order of the effects). Records are read as the command left them (`ctx`), a deleted
 * unit and a task's previous status from the state before it (`db`: its batch is not written yet).
 */
async function changesOf(db: StateDb, ctx: ApplyContext, effects: ApplyEffects): Promise<Change[]> {
  const out: Change[] = [];
  for (const e of effects.events) {
    if (e.change !== 'created') continue;
    const event = await ctx.get(db.events, join(e.user_id, e.stream_id, e.seq));
    if (event) out.push({ type: 'event.accepted', user_id: e.user_id, subject: { kind: 'event', ...cappedEvent(event) } });
  }
  for (const f of effects.failures) {
    const rec = await ctx.get(db.failed, f.seq);
    if (rec) out.push({ type: 'consolidation.failed', user_id: f.user_id, subject: { kind: 'failure', event_id: rec.event_id, stream_id: rec.stream_id, error: rec.error, attempts: rec.attempts } });
  }
  for (const u of effects.units) {
    const key = join(u.user_id, u.unit_id);
    if (u.change === 'created') {
      const unit = await ctx.get(db.units, key);
      if (unit) out.push({ type: 'memory.created', user_id: u.user_id, subject: { kind: 'unit', unit, change: 'created' } });
    } else if (u.change === 'retired') {
      const unit = await ctx.get(db.units, key);
      if (!unit) continue;
      // A logical forget is a deletion to a subscriber (the unit stops being memory); a correction supersedes.
      const forgotten = unit.retired_reason === 'forgotten';
      out.push({ type: forgotten ? 'memory.deleted' : 'memory.superseded', user_id: u.user_id, subject: { kind: 'unit', unit, change: forgotten ? 'forgotten' : 'superseded' } });
    } else if (u.change === 'deleted') {
      const unit = await db.units.get(key);
      if (unit) out.push({ type: 'memory.deleted', user_id: u.user_id, subject: { kind: 'unit', unit, change: 'deleted' } });
    }
  }
  for (const t of effects.l3) {
    if (t.kind !== 'task' || t.change === 'deleted') continue;
    const key = join(t.user_id, t.id);
    const task = await ctx.get(db.tasks, key);
    if (!task) continue;
    if (t.change === 'created') {
      out.push({ type: 'task.created', user_id: t.user_id, subject: { kind: 'task', task, previous_status: null } });
    } else {
      const before = await db.tasks.get(key);
      if (before && before.status !== task.status) out.push({ type: 'task.status_changed', user_id: t.user_id, subject: { kind: 'task', task, previous_status: before.status } });
    }
  }
  return out;
}

/** The command's time (every command that yields reported effects carries `at`), else the record's own. */
function changeTime(command: Command, change: Change): string {
  if ('at' in command && typeof command.at === 'string') return command.at;
  const s = change.subject;
  if (s.kind === 'event') return s.event.transaction_time;
  if (s.kind === 'unit') return s.unit.transaction_time;
  if (s.kind === 'task') return s.task.updated_at;
  return '1970-01-01T00:00:00.000Z';
}

/**
 * Runs after every command's apply, in the same batch: writes a delivery into the outbox of every live
 * subscription that wants the change's kind and may see its user (its filter and its creator's scope,
 * against the user's org as the command left it). A full outbox drops its oldest deliveries (counted).
 */
export async function enqueueWebhookDeliveries(db: StateDb, ctx: ApplyContext, command: Command, effects: ApplyEffects): Promise<void> {
  if (effects.events.length + effects.failures.length + effects.units.length + effects.l3.length === 0) return;
  if (((await ctx.get(db.meta, LIVE_WEBHOOKS_KEY)) as number | undefined ?? 0) <= 0) return;
  const changes = await changesOf(db, ctx, effects);
  if (changes.length === 0) return;
  const subs: WebhookRecord[] = [];
  for await (const w of db.webhooks.values()) if (isLiveWebhook(w)) subs.push(w);
  const orgs = new Map<string, string | null>();
  const perSub = new Map<string, WebhookDelivery[]>();
  for (let position = 0; position < changes.length; position++) {
    const c = changes[position];
    if (!orgs.has(c.user_id)) orgs.set(c.user_id, (await ctx.get(db.userOrgs, c.user_id))?.org_id ?? null);
    const org = orgs.get(c.user_id)!;
    let delivery: WebhookDelivery | null = null;
    for (const w of subs) {
      if (!webhookWants(w, c.type) || !webhookSees(w, c.user_id, org)) continue;
      const seq = padIndex(ctx.index) + String(position).padStart(5, '0');
      delivery ??= { id: deliveryId(c.user_id, seq), type: c.type, created_at: changeTime(command, c), user_id: c.user_id, org_id: org, seq, subject: c.subject };
      let list = perSub.get(w.webhook_id);
      if (!list) perSub.set(w.webhook_id, (list = []));
      list.push(delivery);
    }
  }
  for (const w of subs) {
    const list = perSub.get(w.webhook_id);
    if (list) await writeOutbox(db, ctx, w, list);
  }
}

/** Appends to one subscription's outbox, dropping the oldest beyond its bound. */
async function writeOutbox(db: StateDb, ctx: ApplyContext, w: WebhookRecord, list: WebhookDelivery[]): Promise<void> {
  const state: WebhookState = { ...((await ctx.get(db.webhookState, w.webhook_id)) ?? EMPTY_WEBHOOK_STATE) };
  let over = state.queued + list.length - w.outbox_max;
  if (over > 0) {
    state.dropped += over;
    // Stored ones first: this command wrote nothing to the outbox yet, so the stored keys are the oldest.
    const fromStore = Math.min(over, state.queued);
    if (fromStore > 0) {
      for await (const key of db.webhookOutbox.keys({ ...prefixRange(w.webhook_id), limit: fromStore })) ctx.del(db.webhookOutbox, key);
      state.queued -= fromStore;
      over -= fromStore;
    }
    list = list.slice(over); // more new deliveries than the bound: the oldest of them go too
  }
  for (const d of list) ctx.put(db.webhookOutbox, outboxKey(w.webhook_id, d.seq), d);
  state.queued += list.length;
  ctx.put(db.webhookState, w.webhook_id, state);
}
