/**
 * How the client sends one HTTP exchange. The default goes through the standard fetch API, so the
 * client runs unchanged in Node 20 (global fetch) and in browsers. Nothing here may import a `node:`
 * module or a Node-only package: a browser bundle loads this file. The Node transport over an undici
 * pool lives in node.ts and comes in through `Transport`.
 */

/** The part of fetch the client uses; the global fetch fits. */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

/** Response headers by lower-case name; a header sent more than once (set-cookie) is an array. */
export type HeaderMap = Record<string, string | string[] | undefined>;

export interface RawResponse<T = unknown> {
  status: number;
  headers: HeaderMap;
  body: T;
}

export interface Exchange {
  method: string;
  /** absolute URL */
  url: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
  /** the whole exchange, ms */
  timeoutMs: number;
}

/** Sends one request and reads the whole answer, whatever its status. */
export type Transport = (request: Exchange) => Promise<RawResponse>;

/**
 * A transport over fetch. Redirects are not followed: the API never redirects, and following one would
 * carry the `x-api-key` header to wherever the redirect points.
 */
export function fetchTransport(fetchImpl: FetchLike): Transport {
  return async (request) => {
    const res = await fetchImpl(request.url, {
      method: request.method,
      headers: request.headers,
      body: request.body as RequestInit['body'],
      redirect: 'manual',
      signal: AbortSignal.timeout(request.timeoutMs),
    });
    return decodeAnswer(res.status, headerMap(res.headers), await res.text());
  };
}

/**
 * A JSON answer (application/json, application/*+json) is parsed; anything else (the Prometheus text of
 * /metrics, an NDJSON export, an empty body) stays text.
 */
export function decodeAnswer(status: number, headers: HeaderMap, text: string): RawResponse {
  const type = String(headers['content-type'] ?? '').toLowerCase();
  return { status, headers, body: /[/+]json\b/.test(type) && text.length > 0 ? JSON.parse(text) : text };
}

function headerMap(headers: Headers): HeaderMap {
  const out: HeaderMap = {};
  headers.forEach((value, name) => {
    const seen = out[name];
    // Fetch yields each set-cookie separately; every other repeated header arrives already joined.
    out[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  });
  return out;
}

/** What a streamed request may send: a stream (sent as it is read), a Blob/File, or bytes in hand. */
export type StreamBody = ReadableStream<Uint8Array> | Blob | Uint8Array | string;

/**
 * An exchange whose body or answer is a byte stream (export, import). It has no whole-exchange
 * timeout: an export or an import lasts as long as its size needs.
 */
export interface StreamExchange {
  method: string;
  /** absolute URL */
  url: string;
  headers: Record<string, string>;
  body?: StreamBody;
  /** ms to wait for the answer's status and headers; 0: no limit (an import answers only at its end) */
  headersTimeoutMs: number;
  /** aborts the exchange, the answer's body included */
  signal?: AbortSignal;
}

/** The status and headers, and the answer's body as it arrives. */
export interface StreamAnswer {
  status: number;
  headers: HeaderMap;
  body: ReadableStream<Uint8Array>;
}

export type StreamTransport = (request: StreamExchange) => Promise<StreamAnswer>;

/**
 * Streamed exchanges over fetch. A stream body needs `duplex: 'half'` (Node 20; Chromium over HTTP/2):
 * where the runtime cannot send one, pass a Blob or bytes instead. The headers timeout stops once the
 * status arrives, so reading a long answer is not cut.
 */
export function fetchStreamTransport(fetchImpl: FetchLike): StreamTransport {
  return async (request) => {
    const controller = new AbortController();
    const { signal } = request;
    if (signal?.aborted) controller.abort(signal.reason);
    signal?.addEventListener('abort', () => controller.abort(signal.reason), { once: true });
    const timer = request.headersTimeoutMs > 0
      ? setTimeout(() => controller.abort(new Error(`no answer within ${request.headersTimeoutMs} ms`)), request.headersTimeoutMs)
      : undefined;
    try {
      const streamed = typeof ReadableStream !== 'undefined' && request.body instanceof ReadableStream;
      // fetch sets Content-Length itself (a Blob's, bytes'), or sends a stream chunked: a header given here is dropped
      const headers = Object.fromEntries(Object.entries(request.headers).filter(([name]) => name.toLowerCase() !== 'content-length'));
      const init = {
        method: request.method, headers, body: request.body as RequestInit['body'], redirect: 'manual', signal: controller.signal,
        ...(streamed ? { duplex: 'half' } : {}),
      } as RequestInit;
      const res = await fetchImpl(request.url, init);
      return { status: res.status, headers: headerMap(res.headers), body: res.body ?? new ReadableStream<Uint8Array>({ start: (c) => c.close() }) };
    } finally {
      clearTimeout(timer);
    }
  };
}

/** The whole of a streamed answer as text (an error envelope, the import's counts). */
export async function streamText(body: ReadableStream<Uint8Array>): Promise<string> {
  const decoder = new TextDecoder();
  let text = '';
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text + decoder.decode();
    text += decoder.decode(value, { stream: true });
  }
}
