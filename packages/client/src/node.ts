/**
 * Node only (`@strata/client/node`): a client whose requests go through a kept-alive undici pool of its
 * own (sized by `connections`, closed by close()) with undici's request API rather than fetch. Kept
 * apart from the main entry so a browser bundle never pulls undici.
 *
 * Why it exists (measured, packages/client/README.md): for small requests the request API sends
 * 1.3-2x as many per second as fetch does, whether fetch runs on the global dispatcher or on an undici
 * pool; a pool behind fetch alone does not help. Benchmarks and bulk tools use this client; tests and
 * browsers use the fetch-based `StrataClient`.
 */
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { Pool } from 'undici';
import { StrataClient, type ClientOptions } from './index';
import { decodeAnswer, type StreamBody, type StreamTransport, type Transport } from './transport';

export class NodeStrataClient extends StrataClient {
  private readonly pool: Pool;

  constructor(options: Omit<ClientOptions, 'fetch' | 'transport' | 'streamTransport'>) {
    const pool = new Pool(new URL(options.baseUrl).origin, { connections: options.connections ?? 16, pipelining: 1 });
    super({ ...options, transport: poolTransport(pool), streamTransport: poolStreamTransport(pool) });
    this.pool = pool;
  }

  override async close(): Promise<void> {
    await this.pool.close();
  }
}

/** The exchange over undici's request API: the status, headers and text exactly as the server sent them. */
export function poolTransport(pool: Pool): Transport {
  return async (request) => {
    const url = new URL(request.url);
    const res = await pool.request({
      method: request.method as 'GET', path: `${url.pathname}${url.search}`, headers: request.headers, body: request.body,
      headersTimeout: request.timeoutMs, bodyTimeout: request.timeoutMs,
    });
    return decodeAnswer(res.statusCode, res.headers, await res.body.text());
  };
}

/** A web body as undici's request API takes it: a stream becomes a Node Readable, read as it is sent. */
function requestBody(body: StreamBody | undefined): Readable | Uint8Array | string | undefined {
  if (body === undefined || typeof body === 'string' || body instanceof Uint8Array) return body;
  if (body instanceof Blob) return Readable.fromWeb(body.stream() as WebReadableStream<Uint8Array>);
  return Readable.fromWeb(body as WebReadableStream<Uint8Array>);
}

/**
 * Streamed exchanges (export, import) over the same pool. No idle limit on the answer's body: a reader
 * that pauses (a slow disk, a pipe) holds the socket without it being cut. A given Content-Length is
 * sent as is (undici fails the request if the body turns out another size).
 */
export function poolStreamTransport(pool: Pool): StreamTransport {
  return async (request) => {
    const url = new URL(request.url);
    const res = await pool.request({
      method: request.method as 'GET', path: `${url.pathname}${url.search}`, headers: request.headers, body: requestBody(request.body),
      headersTimeout: request.headersTimeoutMs, bodyTimeout: 0, signal: request.signal,
    });
    return { status: res.statusCode, headers: res.headers, body: Readable.toWeb(res.body) as ReadableStream<Uint8Array> };
  };
}
