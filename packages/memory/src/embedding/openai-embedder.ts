/**
 * Embeddings from any OpenAI-compatible endpoint (`POST {base_url}/embeddings` with `{input, model}`):
 * batched, over a kept-alive undici pool, each attempt under a deadline, retried with exponential backoff on
 * 429, 5xx, timeouts and network errors (a server's Retry-After is honoured), vectors unit-normalized.
 */
import type { Dispatcher, Pool } from 'undici';
import type { Embedder } from '../providers/types';
import { EmbeddingError, EmbeddingHttpError, EmbeddingResponseError, EmbeddingTransportError } from './errors';
import { backoffDelay, buildRequestBody, errorMessageOf, isRetryableStatus, parseEmbeddingsReply, parseRetryAfter } from './openai-protocol';
import { emptyTextVector } from './vector-math';

export interface OpenAiEmbedderOptions {
  /** e.g. `https://api.openai.com/v1` or `http://127.0.0.1:8080/v1`; `/embeddings` is appended. */
  baseUrl: string;
  apiKey?: string;
  model: string;
  /** Dimension of the model's vectors; replies of another size are rejected. */
  dimensions: number;
  /** Send `dimensions` in the request (models that can shorten their vectors, e.g. text-embedding-3-*). Default false. */
  sendDimensions?: boolean;
  /** Inputs per request (default 64). */
  batchSize?: number;
  /** Deadline of one attempt, headers and body included (default 30 s). */
  timeoutMs?: number;
  /** Further attempts after the first, for retryable failures (default 4). */
  maxRetries?: number;
  /** Backoff: first ceiling and cap (defaults 500 ms and 20 s). */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** A Retry-After longer than this is not waited for: the call fails at once (default 60 s). */
  maxRetryAfterMs?: number;
  /** Connections kept to the server (default 4). */
  connections?: number;
  /** Injected for tests: waiting, jitter, and the clock used to read HTTP-date Retry-After values. */
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  now?: () => number;
}

const defaultSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export class OpenAiEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions: number;
  private readonly pool: Pool;
  private readonly path: string;
  private readonly url: string;
  private readonly o: Required<Omit<OpenAiEmbedderOptions, 'apiKey'>> & { apiKey?: string };

  constructor(options: OpenAiEmbedderOptions) {
    if (!options.model) throw new EmbeddingError('openai embedder: "model" is required', 'embedding_config');
    if (!Number.isInteger(options.dimensions) || options.dimensions < 1) {
      throw new EmbeddingError(`openai embedder: "dimensions" must be a positive integer, got ${String(options.dimensions)}`, 'embedding_config');
    }
    let base: URL;
    try {
      base = new URL(options.baseUrl);
    } catch {
      throw new EmbeddingError(`openai embedder: "base_url" is not a URL: ${String(options.baseUrl)}`, 'embedding_config');
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new EmbeddingError(`openai embedder: "base_url" must be http(s), got ${base.protocol}`, 'embedding_config');
    this.o = {
      sendDimensions: false,
      batchSize: 64,
      timeoutMs: 30_000,
      maxRetries: 4,
      retryBaseMs: 500,
      retryMaxMs: 20_000,
      maxRetryAfterMs: 60_000,
      connections: 4,
      sleep: defaultSleep,
      random: Math.random,
      now: Date.now,
      // Keys present but undefined (straight from an optional config field) must not erase the defaults.
      ...(Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as OpenAiEmbedderOptions),
    };
    if (!(this.o.batchSize >= 1)) throw new EmbeddingError('openai embedder: "batch_size" must be >= 1', 'embedding_config');
    this.dimensions = options.dimensions;
    this.path = `${base.pathname.replace(/\/+$/, '')}/embeddings`;
    this.url = `${base.origin}${this.path}`;
    // required here, not at import: @strata/memory is loaded by every node, this provider only by some (issue 29)
    const { Pool: UndiciPool } = require('undici') as typeof import('undici');
    this.pool = new UndiciPool(base.origin, { connections: this.o.connections, keepAliveTimeout: 30_000 });
    // The endpoint is part of the id: the same model name on two servers may not be the same weights.
    this.id = `openai:${base.host}${this.path}:${options.model}:d=${options.dimensions}`;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = new Array(texts.length);
    const todo: number[] = [];
    // OpenAI rejects empty inputs; the contract's fixed vector stands in for them without a request.
    texts.forEach((t, i) => {
      if (t.trim().length === 0) out[i] = emptyTextVector(this.dimensions);
      else todo.push(i);
    });
    for (let s = 0; s < todo.length; s += this.o.batchSize) {
      const batch = todo.slice(s, s + this.o.batchSize);
      const vecs = await this.embedBatch(batch.map((i) => texts[i]));
      batch.forEach((i, k) => (out[i] = vecs[k]));
    }
    return out;
  }

  /** Closes the kept-alive connections. */
  async close(): Promise<void> {
    await this.pool.close();
  }

  private async embedBatch(input: string[]): Promise<Float32Array[]> {
    const body = buildRequestBody(input, this.o.model, this.o.sendDimensions ? this.dimensions : undefined);
    for (let attempt = 0; ; attempt++) {
      const outcome = await this.attempt(body, input.length);
      if (outcome.ok) return outcome.vectors;
      const { error, retryAfterMs } = outcome;
      if (!outcome.retryable || attempt >= this.o.maxRetries) {
        if (outcome.retryable) error.message += ` (gave up after ${attempt + 1} attempts)`;
        throw error;
      }
      if (retryAfterMs !== undefined && retryAfterMs > this.o.maxRetryAfterMs) {
        error.message += ` (the server asks to retry after ${Math.round(retryAfterMs / 1000)} s, longer than max_retry_after ${Math.round(this.o.maxRetryAfterMs / 1000)} s)`;
        throw error;
      }
      await this.o.sleep(retryAfterMs ?? backoffDelay(attempt, this.o.retryBaseMs, this.o.retryMaxMs, this.o.random));
    }
  }

  private async attempt(
    body: string,
    expected: number,
  ): Promise<{ ok: true; vectors: Float32Array[] } | { ok: false; retryable: boolean; error: EmbeddingError; retryAfterMs?: number }> {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (this.o.apiKey) headers.authorization = `Bearer ${this.o.apiKey}`;
    const signal = AbortSignal.timeout(this.o.timeoutMs);
    let res: Dispatcher.ResponseData;
    let text: string;
    try {
      res = await this.pool.request({ method: 'POST', path: this.path, headers, body, signal, headersTimeout: this.o.timeoutMs, bodyTimeout: this.o.timeoutMs });
      text = await res.body.text();
    } catch (err) {
      const timedOut = signal.aborted || /Timeout/i.test((err as { code?: string; name?: string }).code ?? '') || (err as Error).name === 'TimeoutError';
      const error = timedOut
        ? new EmbeddingTransportError(`embeddings request to ${this.url} timed out after ${this.o.timeoutMs} ms`, 'embedding_timeout', { cause: err })
        : new EmbeddingTransportError(`embeddings request to ${this.url} failed: ${(err as Error).message}`, 'embedding_network', { cause: err });
      return { ok: false, retryable: true, error };
    }
    if (res.statusCode !== 200) {
      const error = new EmbeddingHttpError(`embeddings endpoint ${this.url} answered ${res.statusCode}: ${errorMessageOf(text)}`, res.statusCode, text.slice(0, 2000));
      return { ok: false, retryable: isRetryableStatus(res.statusCode), error, retryAfterMs: parseRetryAfter(res.headers['retry-after'], this.o.now()) };
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return { ok: false, retryable: false, error: new EmbeddingResponseError(`embeddings endpoint ${this.url} sent a malformed reply: not JSON (${text.slice(0, 80)})`) };
    }
    try {
      return { ok: true, vectors: parseEmbeddingsReply(json, expected, this.dimensions) };
    } catch (err) {
      return { ok: false, retryable: false, error: err as EmbeddingError };
    }
  }
}
