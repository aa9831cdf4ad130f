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

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'strata_' });
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
