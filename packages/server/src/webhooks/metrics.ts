/**
 * Webhook metrics on the node's registry (server/src/metrics.ts): what this node's dispatchers did
 * (counters), and what the replicated state says is waiting or was lost (gauges read at scrape time,
 * the same on every node of a cluster).
 */
import { Counter } from 'prom-client';
import { EMPTY_WEBHOOK_STATE, type WebhookState } from '@strata/store';
import type { Metrics } from '../metrics';
import type { Shard } from '../shards';

export class WebhookMetrics {
  readonly delivered: Counter;
  readonly retries: Counter;
  readonly expired: Counter;

  constructor(metrics: Metrics, shards: readonly Shard[]) {
    const registers = [metrics.registry];
    this.delivered = new Counter({ name: 'strata_webhook_delivered_total', help: 'Webhook deliveries answered with a 2xx, sent by this node', registers });
    this.retries = new Counter({ name: 'strata_webhook_retries_total', help: 'Webhook delivery attempts that failed (non-2xx or no answer) and will be retried, by this node', registers });
    this.expired = new Counter({ name: 'strata_webhook_expired_total', help: 'Webhook deliveries this node gave up on after the retry window (webhooks.retry_window_s)', registers });
    const total = async (field: keyof Omit<WebhookState, 'delivered_through'>) => {
      let n = 0;
      for (const shard of shards) for await (const st of shard.db.webhookState.values()) n += (st ?? EMPTY_WEBHOOK_STATE)[field];
      return n;
    };
    metrics.gauge('strata_webhook_queued', 'Webhook deliveries waiting in the outboxes (replicated: every shard, the same on every node)', () => total('queued'));
    metrics.gauge('strata_webhook_dropped_outbox_full', 'Webhook deliveries dropped because an outbox was full (webhooks.outbox_max), over the live subscriptions', () => total('dropped'));
    metrics.gauge('strata_webhook_dropped_expired', 'Webhook deliveries given up on after the retry window, over the live subscriptions (replicated)', () => total('expired'));
    metrics.gauge('strata_webhook_subscriptions', 'Live webhook subscriptions', async () => shards[0].db.counter('webhooks'));
  }
}
