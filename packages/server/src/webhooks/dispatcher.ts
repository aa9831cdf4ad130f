/**
 * The webhook dispatcher of one shard (CONTRACT §13). It acts only while this node leads the shard,
 * and only after a read barrier (everything committed before it took over is applied here); it never
 * reacts to a replayed or followed command, it reads the replicated outboxes that apply wrote from
 * the effects (store/src/apply/webhooks.ts).
 *
 * Per subscription, deliveries go one at a time in outbox order (commit order, so in order per user),
 * each POSTed until a 2xx; a failure waits (exponential backoff with jitter) and the subscription's
 * later deliveries wait behind it, for up to `retry_window_s` after the change, when it is given up on
 * (expired). Progress is recorded in the replicated state by `webhook.advance`, batched every
 * `advance_interval_ms`; a subscription stops sending when `advance_batch` of its deliveries are not
 * recorded yet, so a new leader (which starts from the outboxes) sends again at most that many plus
 * the one in flight. Memory is bounded: a page of 32 deliveries and at most 100 attempts per
 * subscription.
 *
 * On shards other than the meta shard (0), the dispatcher also mirrors the subscriptions: it copies
 * what this node's replica of shard 0 holds into its own shard with the same create/delete commands
 * (tombstones make a late copy harmless; store/src/webhooks.ts).
 */
import type { Logger } from 'pino';
import {
  isLiveWebhook, listWebhooks, outboxPage, settle, storedWebhooks, WEBHOOK_ATTEMPTS_KEPT,
  type WebhookAttempt, type WebhookDelivery, type WebhookProgress, type WebhookRecord,
} from '@strata/store';
import type { Config } from '../config';
import type { Shard } from '../shards';
import { retryDelay, type BackoffPolicy } from './backoff';
import type { WebhookMetrics } from './metrics';
import { deliveryBody, signature, TIMED_SIGNATURE_HEADER, timedSignature } from './payload';
import type { SendResult, WebhookPost } from './sender';

export interface DispatcherSettings {
  pollMs: number;
  advanceIntervalMs: number;
  advanceBatch: number;
  retryWindowMs: number;
  backoff: BackoffPolicy;
}

export function dispatcherSettings(config: Config): DispatcherSettings {
  const w = config.webhooks;
  return {
    pollMs: w.poll_ms, advanceIntervalMs: w.advance_interval_ms, advanceBatch: w.advance_batch, retryWindowMs: w.retry_window_s * 1000,
    backoff: { initialMs: w.retry_initial_ms, maxMs: Math.max(w.retry_initial_ms, w.retry_max_ms) },
  };
}

/** What the dispatcher sends with (sender.ts); an interface so one agent serves every shard. */
export interface Poster {
  post(p: WebhookPost): Promise<SendResult>;
}

export interface DispatcherOptions {
  shard: Shard;
  /** the shard holding the subscriptions of record (0) */
  meta: Shard;
  poster: Poster;
  logger: Logger;
  metrics: WebhookMetrics;
  settings: DispatcherSettings;
  now?: () => number;
  random?: () => number;
}

/** Deliveries read ahead per subscription. */
const PAGE = 32;

/** Progress not yet recorded by a committed `webhook.advance`. */
interface Pending {
  through: string | null;
  delivered: number;
  expired: number;
  attempts: WebhookAttempt[];
}

const emptyPending = (): Pending => ({ through: null, delivered: 0, expired: 0, attempts: [] });
const maxSeq = (a: string | null, b: string | null) => (a === null ? b : b === null ? a : a > b ? a : b);

/** One subscription's sending, on the leader. Thrown away when leadership is lost (the outbox is the truth). */
class SubscriptionQueue {
  /** the last delivery this leader handled (delivered or given up on) */
  private cursor: string | null = null;
  private buffer: WebhookDelivery[] = [];
  /** failed attempts of the delivery at the head */
  private failures = 0;
  private nextAttemptAt = 0;
  private running: Promise<void> | null = null;
  private readonly abort = new AbortController();
  private pending = emptyPending();
  /** handled deliveries whose advance is not committed yet (proposed ones included) */
  private unconfirmed = 0;

  constructor(readonly record: WebhookRecord, private readonly d: WebhookDispatcher) {}

  get blocked(): boolean {
    return this.unconfirmed >= this.d.settings.advanceBatch;
  }

  /** Starts sending unless it is sending already, waiting for a retry, or at its unrecorded bound. */
  pump(): void {
    if (this.running || this.abort.signal.aborted || this.d.now() < this.nextAttemptAt) return;
    this.running = this.loop()
      .catch((err) => this.d.logger.error({ err, webhook_id: this.record.webhook_id, shard: this.d.shardId }, 'webhook queue failed'))
      .finally(() => (this.running = null));
  }

  /** Leadership lost or the subscription deleted: the request in flight is abandoned, nothing more is recorded. */
  stop(): void {
    this.abort.abort();
    this.buffer = [];
  }

  idle(): Promise<void> {
    return this.running ?? Promise.resolve();
  }

  /** The progress to propose now (null: none); it stays counted as unconfirmed until `confirmed`. */
  take(): (WebhookProgress & { handled: number }) | null {
    const p = this.pending;
    if (p.through === null && p.attempts.length === 0 && p.delivered + p.expired === 0) return null;
    this.pending = emptyPending();
    return { webhook_id: this.record.webhook_id, ...p, handled: p.delivered + p.expired };
  }

  confirmed(handled: number): void {
    this.unconfirmed -= handled;
  }

  /** The advance did not commit: its progress goes back, to be proposed with the next one. */
  restore(p: WebhookProgress): void {
    this.pending = {
      through: maxSeq(p.through, this.pending.through), delivered: p.delivered + this.pending.delivered, expired: p.expired + this.pending.expired,
      attempts: [...p.attempts, ...this.pending.attempts].slice(-WEBHOOK_ATTEMPTS_KEPT),
    };
  }

  private async head(): Promise<WebhookDelivery | undefined> {
    if (this.buffer.length === 0) this.buffer = await outboxPage(this.d.db, this.record.webhook_id, this.cursor, PAGE);
    return this.buffer[0];
  }

  private handled(d: WebhookDelivery, outcome: 'delivered' | 'expired'): void {
    this.buffer.shift();
    this.cursor = d.seq;
    this.failures = 0;
    this.pending.through = d.seq;
    this.pending[outcome]++;
    this.unconfirmed++;
    if (this.blocked) this.d.flushSoon();
  }

  private note(a: WebhookAttempt): void {
    this.pending.attempts.push(a);
    if (this.pending.attempts.length > WEBHOOK_ATTEMPTS_KEPT) this.pending.attempts.shift();
  }

  private async loop(): Promise<void> {
    const { settings, metrics } = this.d;
    while (!this.abort.signal.aborted && !this.blocked) {
      const next = await this.head();
      // leadership is looked at every poll; between polls, a node that lost it stops before sending more
      if (!next || this.abort.signal.aborted || !this.d.isLeader()) return;
      const base = { delivery_id: next.id, type: next.type, user_id: next.user_id, seq: next.seq, attempt: this.failures + 1 };
      if (this.d.now() - Date.parse(next.created_at) > settings.retryWindowMs) {
        this.note({ ...base, at: new Date(this.d.now()).toISOString(), status: null, error: 'not delivered within the retry window', duration_ms: 0, outcome: 'expired' });
        metrics.expired.inc();
        this.d.logger.warn({ webhook_id: this.record.webhook_id, delivery_id: next.id, type: next.type, attempts: this.failures }, 'webhook delivery given up on (retry window over)');
        this.handled(next, 'expired');
        continue;
      }
      const body = deliveryBody(next);
      const now = this.d.now();
      const at = new Date(now).toISOString();
      const result = await this.d.poster.post({
        url: this.record.url, body, signal: this.abort.signal,
        headers: {
          'x-strata-event-id': next.id, 'x-strata-signature': signature(body, this.record.secret),
          [TIMED_SIGNATURE_HEADER]: timedSignature(body, this.record.secret, now), 'x-strata-webhook-id': this.record.webhook_id,
        },
      });
      if (this.abort.signal.aborted) return; // not the leader any more: the next one sends it again
      this.note({ ...base, at, status: result.status, error: result.error, duration_ms: result.duration_ms, outcome: result.ok ? 'delivered' : 'failed' });
      if (result.ok) {
        metrics.delivered.inc();
        this.handled(next, 'delivered');
        continue;
      }
      this.failures++;
      metrics.retries.inc();
      this.nextAttemptAt = this.d.now() + retryDelay(this.failures, settings.backoff, this.d.random);
      this.d.logger.debug({ webhook_id: this.record.webhook_id, delivery_id: next.id, attempt: this.failures, error: result.error }, 'webhook delivery failed; will retry');
      return;
    }
  }
}

export class WebhookDispatcher {
  readonly now: () => number;
  readonly random: () => number;
  private leading = false;
  private readonly queues = new Map<string, SubscriptionQueue>();
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;
  private flushing: Promise<void> | null = null;
  private flushAgain = false;
  private lastFlush = 0;
  private stopped = false;
  private wake = false;

  constructor(private readonly o: DispatcherOptions) {
    this.now = o.now ?? Date.now;
    this.random = o.random ?? Math.random;
    // A committed change may have filled an outbox: look at once rather than at the next poll (reading
    // the replicated outbox, never the command; while not leading this does nothing).
    o.shard.sm.onApplied((_index, _command, _result, effects) => {
      if (!this.leading || this.wake || effects.events.length + effects.units.length + effects.l3.length + effects.failures.length === 0) return;
      this.wake = true;
      setImmediate(() => {
        this.wake = false;
        for (const q of this.queues.values()) q.pump();
      });
    });
    // A snapshot install replaced the state: start again from the outboxes.
    o.shard.sm.onRestored(() => this.demote());
  }

  get settings(): DispatcherSettings {
    return this.o.settings;
  }
  get metrics(): WebhookMetrics {
    return this.o.metrics;
  }
  get logger(): Logger {
    return this.o.logger;
  }
  get poster(): Poster {
    return this.o.poster;
  }
  get db() {
    return this.o.shard.db;
  }
  get shardId(): number {
    return this.o.shard.id;
  }

  isLeader(): boolean {
    return this.leading && this.o.shard.log.isLeader();
  }

  start(): void {
    if (this.stopped || this.timer) return;
    this.timer = setInterval(() => this.kick(), this.o.settings.pollMs);
    this.timer.unref?.();
  }

  /** Stops sending (the request in flight is abandoned: the next leader sends it) and waits for the work in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    while (this.ticking || this.flushing) await (this.ticking ?? this.flushing);
    const queues = [...this.queues.values()];
    this.demote();
    await Promise.all(queues.map((q) => q.idle()));
  }

  private kick(): void {
    if (this.ticking || this.stopped) return;
    this.ticking = this.tick()
      .catch((err) => this.o.logger.warn({ err, shard: this.o.shard.id }, 'webhook dispatcher tick failed; retried at the next'))
      .finally(() => (this.ticking = null));
  }

  /** One look: leadership, the mirror, the subscriptions, then every queue is pumped and progress flushed when due. */
  async tick(): Promise<void> {
    const { shard } = this.o;
    if (!shard.log.isLeader()) {
      if (this.leading) this.demote();
      return;
    }
    if (!this.leading) {
      // Everything committed before this node took over must be applied here before the outboxes are read,
      // or deliveries already recorded as sent would be sent again.
      await shard.log.readBarrier();
      if (!shard.log.isLeader() || this.stopped) return;
      this.leading = true;
      this.lastFlush = this.now();
      this.o.logger.info({ shard: shard.id }, 'webhook dispatcher leading this shard');
    }
    if (shard.id !== this.o.meta.id) await this.mirror();
    const live = await listWebhooks(shard.db);
    const ids = new Set(live.map((w) => w.webhook_id));
    for (const [id, q] of this.queues) {
      if (!ids.has(id)) {
        q.stop();
        this.queues.delete(id);
      }
    }
    for (const w of live) if (!this.queues.has(w.webhook_id)) this.queues.set(w.webhook_id, new SubscriptionQueue(w, this));
    for (const q of this.queues.values()) q.pump();
    if (this.now() - this.lastFlush >= this.o.settings.advanceIntervalMs) this.flushSoon();
  }

  /** Proposes the progress of every queue in one `webhook.advance` (at most one in flight). */
  flushSoon(): void {
    if (!this.leading) return;
    if (this.flushing) {
      this.flushAgain = true;
      return;
    }
    this.flushing = this.flush()
      .catch((err) => this.o.logger.warn({ err, shard: this.o.shard.id }, 'webhook progress not recorded; retried'))
      .finally(() => {
        this.flushing = null;
        if (this.flushAgain && !this.stopped) {
          this.flushAgain = false;
          this.flushSoon();
        }
      });
  }

  private async flush(): Promise<void> {
    this.lastFlush = this.now();
    const taken: [SubscriptionQueue, WebhookProgress & { handled: number }][] = [];
    for (const q of this.queues.values()) {
      const p = q.take();
      if (p) taken.push([q, p]);
    }
    if (taken.length === 0) return;
    const webhooks = taken.map(([, { handled: _h, ...p }]) => p);
    try {
      settle(await this.o.shard.log.propose({ type: 'webhook.advance', at: new Date(this.now()).toISOString(), webhooks }));
    } catch (err) {
      for (const [q, p] of taken) q.restore(p);
      throw err;
    }
    for (const [q, p] of taken) {
      q.confirmed(p.handled);
      q.pump(); // it may have stopped at its bound
    }
  }

  /**
   * Shard 0's subscriptions (as this node's replica holds them) copied into this shard: deletions first,
   * then creations, so a subscription created after another was deleted starts here after that one stopped.
   */
  private async mirror(): Promise<void> {
    const [source, local] = await Promise.all([storedWebhooks(this.o.meta.db), storedWebhooks(this.o.shard.db)]);
    for (const [id, rec] of source) {
      if (!isLiveWebhook(rec) && isLiveWebhook(local.get(id))) await this.o.shard.log.propose({ type: 'webhook.delete', webhook_id: id, at: rec.deleted_at });
    }
    for (const [id, rec] of source) {
      if (isLiveWebhook(rec) && local.get(id) === undefined) await this.o.shard.log.propose({ type: 'webhook.create', record: rec });
    }
  }

  /** Not the leader (or the state was replaced): every queue stops; a later term starts from the outboxes. */
  private demote(): void {
    if (this.leading) this.o.logger.info({ shard: this.o.shard.id }, 'webhook dispatcher stopped leading this shard');
    this.leading = false;
    this.flushAgain = false;
    for (const q of this.queues.values()) q.stop();
    this.queues.clear();
  }

}
