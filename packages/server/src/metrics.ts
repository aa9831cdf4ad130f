import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The node's Prometheus metrics, in a registry of its own (three nodes in one process stay apart). */
export class Metrics {
  readonly registry = new Registry();
  readonly httpRequests = new Counter({
    name: 'strata_http_requests_total', help: 'HTTP requests by route and status', labelNames: ['method', 'route', 'status'] as const, registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: 'strata_http_request_duration_seconds', help: 'HTTP request duration by route', labelNames: ['method', 'route'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5], registers: [this.registry],
  });
  readonly eventsIngested = new Counter({ name: 'strata_events_ingested_total', help: 'L0 events accepted', registers: [this.registry] });
  // Retrieval (indexes/retrieval-service.ts): each stage of each retrieval, and the whole.
  readonly retrievalStage = new Histogram({
    name: 'strata_retrieval_stage_seconds',
    help: 'Retrieval latency by stage: index_load (derived indexes), embed (query), pending (raw pending events), search, fuse, arbitrate, total',
    labelNames: ['stage'] as const,
    buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5], registers: [this.registry],
  });
  // Consolidation (workers/consolidation.ts), by shard; counted by the shard leader's worker.
  readonly consolidatedEvents = new Counter({
    name: 'strata_consolidation_events_total', help: 'Pending events consolidated into memory (rate() = drain rate), by shard', labelNames: ['shard'] as const, registers: [this.registry],
  });
  readonly consolidationBatches = new Counter({
    name: 'strata_consolidation_batches_total', help: 'Consolidation batches committed, by shard', labelNames: ['shard'] as const, registers: [this.registry],
  });
  readonly consolidationFailures = new Counter({
    name: 'strata_consolidation_failures_total',
    help: 'Consolidation failures by shard and kind: batch (planning or proposal failed, retried later) or gave_up (events recorded as failed after the last retry)',
    labelNames: ['shard', 'kind'] as const, registers: [this.registry],
  });
  readonly consolidationBatchDuration = new Histogram({
    name: 'strata_consolidation_batch_seconds', help: 'Time to plan and commit one consolidation batch, by shard', labelNames: ['shard'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30], registers: [this.registry],
  });
  readonly consolidationLag = new Histogram({
    name: 'strata_consolidation_lag_seconds',
    help: 'From the acceptance of each consolidated batch\'s oldest event to the batch\'s commit, by shard: a trickle waits for [consolidation] gather_ms, a burst for the backlog ahead of it',
    labelNames: ['shard'] as const, buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300], registers: [this.registry],
  });
  // Raft (telemetry/raft-metrics.ts reads the groups' counters at scrape time; these two are events).
  readonly raftPeerRtt = new Histogram({
    name: 'strata_raft_peer_rtt_seconds', help: 'Round trip of Raft peer requests (send to answer), by peer node id', labelNames: ['peer'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5], registers: [this.registry],
  });
  readonly raftCommitSeconds = new Histogram({
    name: 'strata_raft_commit_seconds', help: 'From a proposal made on this node to its being committed (found committed here), by shard', labelNames: ['shard'] as const,
    buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5], registers: [this.registry],
  });
  readonly raftApplySeconds = new Histogram({
    name: 'strata_raft_apply_seconds', help: 'Applying one batch of committed entries to the state machine, by shard', labelNames: ['shard'] as const,
    buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25], registers: [this.registry],
  });
  readonly raftApplyBatchEntries = new Histogram({
    name: 'strata_raft_apply_batch_entries', help: 'Committed entries applied together (one Raft Ready), by shard', labelNames: ['shard'] as const,
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024], registers: [this.registry],
  });
  readonly raftProposalsFailed = new Counter({
    name: 'strata_raft_proposals_failed_total', help: 'Proposals that did not commit (no leader, no quorum, dropped, overloaded, shutting down), by shard and error code',
    labelNames: ['shard', 'code'] as const, registers: [this.registry],
  });
  readonly placementSteps = new Counter({
    name: 'strata_placement_steps_total', help: 'Membership steps the placement loop carried out (on the leader of shard 0), by kind and outcome',
    labelNames: ['kind', 'outcome'] as const, registers: [this.registry],
  });

  readonly autoscaleDecisions = new Counter({
    name: 'strata_autoscale_decisions_total', help: 'Splits and merges the cluster began by itself (cluster.auto_split_records, cluster.auto_merge_records; on the leader of shard 0), by kind',
    labelNames: ['kind'] as const, registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'strata_' });
  }

  /** A gauge with a `shard` label, each shard's value read at scrape time. */
  perShard(name: string, help: string, shards: { shard: number; read: () => number | Promise<number> }[]): void {
    new Gauge({
      name, help, registers: [this.registry], labelNames: ['shard'],
      async collect() {
        const values = await Promise.all(shards.map((s) => s.read()));
        shards.forEach((s, i) => this.set({ shard: String(s.shard) }, values[i]));
      },
    });
  }

  /** A gauge read at scrape time. */
  gauge(name: string, help: string, read: () => number | Promise<number>, labels?: Record<string, string>): void {
    new Gauge({
      name, help, registers: [this.registry], labelNames: labels ? Object.keys(labels) : [],
      async collect() {
        const value = await read();
        if (labels) this.set(labels, value);
        else this.set(value);
      },
    });
  }
}
