/**
 * An in-process OTLP/HTTP trace collector for tests: accepts `POST /v1/traces` in the OTLP JSON
 * encoding (what @opentelemetry/exporter-trace-otlp-http sends) and keeps every span with the
 * `service.instance.id` of the node that exported it.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/** OTLP span kinds as encoded (SpanKind + 1). */
export const KIND = { INTERNAL: 1, SERVER: 2, CLIENT: 3 } as const;

export interface CollectedSpan {
  /** the exporting node (`service.instance.id`) and service name */
  instance: string;
  service: string;
  traceId: string;
  spanId: string;
  /** '' for a root span */
  parentSpanId: string;
  name: string;
  kind: number;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, string | number | boolean>;
  status: number;
}

interface AnyValue { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean }
interface KeyValue { key: string; value: AnyValue }
interface OtlpSpan {
  traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number;
  startTimeUnixNano: string; endTimeUnixNano: string; attributes?: KeyValue[]; status?: { code?: number };
}
interface ExportRequest { resourceSpans?: { resource?: { attributes?: KeyValue[] }; scopeSpans?: { spans?: OtlpSpan[] }[] }[] }

function flatten(attributes: KeyValue[] = []): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of attributes) {
    out[key] = value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : undefined) ?? value.doubleValue ?? value.boolValue ?? '';
  }
  return out;
}

export class OtlpCollector {
  readonly spans: CollectedSpan[] = [];
  /** requests that were not OTLP JSON trace exports (a test expects none) */
  readonly refused: string[] = [];

  private constructor(private readonly server: Server) {}

  static async start(): Promise<OtlpCollector> {
    const server = createServer();
    const collector = new OtlpCollector(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        try {
          if (req.method !== 'POST' || req.url !== '/v1/traces' || !String(req.headers['content-type']).startsWith('application/json')) {
            throw new Error(`${req.method} ${req.url} ${req.headers['content-type']}`);
          }
          let body = Buffer.concat(chunks);
          if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
          collector.add(JSON.parse(body.toString('utf8')) as ExportRequest);
          res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        } catch (err) {
          collector.refused.push(String(err));
          res.writeHead(400).end();
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    return collector;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private add(request: ExportRequest): void {
    for (const rs of request.resourceSpans ?? []) {
      const resource = flatten(rs.resource?.attributes);
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          this.spans.push({
            instance: String(resource['service.instance.id']), service: String(resource['service.name']),
            traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId ?? '', name: s.name, kind: s.kind,
            startNs: BigInt(s.startTimeUnixNano), endNs: BigInt(s.endTimeUnixNano), attributes: flatten(s.attributes), status: s.status?.code ?? 0,
          });
        }
      }
    }
  }

  trace(traceId: string): CollectedSpan[] {
    return this.spans.filter((s) => s.traceId === traceId);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
