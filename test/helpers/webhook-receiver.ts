/**
 * A real webhook receiver for tests: an HTTP server on 127.0.0.1 that records every delivery (headers,
 * raw body, parsed body, order of arrival), answers 200 (optionally after a delay), and can be stopped
 * and started again on the same port (a receiver that is down for a while).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { testPorts } from './ports';

export interface ReceivedDelivery {
  /** x-strata-event-id */
  eventId: string;
  signature: string;
  /** x-strata-webhook-signature: `t=<unix>,v1=<hex>` */
  timedSignature: string;
  raw: string;
  body: { id: string; type: string; created_at: string; user_id: string; org_id?: string; data: Record<string, unknown> };
  /** arrival number at this receiver, from 0 */
  n: number;
}

/** What a receiver does to check a delivery: HMAC-SHA256 of the raw body with the secret, compared in constant time. */
export function validSignature(raw: string, header: string, secret: string): boolean {
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(raw, 'utf8').digest('hex')}`);
  const given = Buffer.from(header);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * The timestamped signature as a receiver checks it: `v1` is the HMAC of `<t>.<raw body>`, and `t` is
 * within `toleranceS` of the receiver's clock (a replayed delivery is older).
 */
export function validTimedSignature(raw: string, header: string, secret: string, toleranceS = 300, nowS = Date.now() / 1000): boolean {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  if (!m || Math.abs(nowS - Number(m[1])) > toleranceS) return false;
  const expected = Buffer.from(createHmac('sha256', secret).update(`${m[1]}.${raw}`, 'utf8').digest('hex'));
  const given = Buffer.from(m[2]);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export class WebhookReceiver {
  readonly received: ReceivedDelivery[] = [];
  /** milliseconds to wait before answering each delivery */
  delayMs = 0;
  private server: Server | null = null;
  private port = 0;

  static async start(): Promise<WebhookReceiver> {
    const r = new WebhookReceiver();
    await r.listen();
    return r;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  /** Listens (again) on its port; the first time on a free one. */
  async listen(): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        this.received.push({
          eventId: String(req.headers['x-strata-event-id'] ?? ''), signature: String(req.headers['x-strata-signature'] ?? ''),
          timedSignature: String(req.headers['x-strata-webhook-signature'] ?? ''),
          raw, body: JSON.parse(raw) as ReceivedDelivery['body'], n: this.received.length,
        });
        setTimeout(() => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'), this.delayMs);
      });
    });
    // a reserved port (ports.ts), kept while this process runs: a port of the kernel's ephemeral range
    // could be taken by another process's connection while the receiver is down
    if (this.port === 0) this.port = await testPorts.reserve();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.server = server;
  }

  /** Stops listening and drops open connections: deliveries fail until `listen()` again. */
  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  ofType(type: string): ReceivedDelivery[] {
    return this.received.filter((d) => d.body.type === type);
  }

  /** The event ids of the event.accepted deliveries, in arrival order (repeats included). */
  acceptedEventIds(user?: string): string[] {
    return this.ofType('event.accepted').filter((d) => user === undefined || d.body.user_id === user).map((d) => (d.body.data.event as { event_id: string }).event_id);
  }
}
