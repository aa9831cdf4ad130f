/**
 * An `Llm` for any OpenAI-compatible `POST {baseUrl}/chat/completions` (OpenAI, vLLM, llama.cpp server,
 * Ollama's /v1, LiteLLM …). A thin I/O shell: keep-alive connections (undici Agent), a per-attempt
 * timeout, and retries with exponential backoff on 429 and 5xx (honouring Retry-After) and on network
 * errors. Other 4xx fail at once (retrying a bad request cannot help). Callers fall back to offline logic.
 */
import type { Agent } from 'undici';
/** undici, required on first use: @strata/memory is loaded by every node, this provider only by those configured with an LLM (issue 29). */
let undiciModule: typeof import('undici') | null = null;
const undici = (): typeof import('undici') => (undiciModule ??= require('undici') as typeof import('undici'));

import type { ChatMessage, Llm } from './types';

export interface OpenAiLlmOptions {
  /** e.g. `https://api.openai.com/v1` or `http://127.0.0.1:8000/v1` (no trailing `/chat/completions`). */
  baseUrl: string;
  model: string;
  apiKey?: string | null;
  /** Per attempt, headers and body. Default 60 s. */
  timeoutMs?: number;
  /** Retries after the first attempt. Default 3. */
  maxRetries?: number;
  /** First backoff; doubles each retry, with jitter. Default 500 ms. */
  backoffMs?: number;
  /** Longest single wait (also caps Retry-After). Default 10 s. */
  maxBackoffMs?: number;
  /** Kept-alive connections per origin. Default 8. */
  connections?: number;
  /** Default max tokens of a reply. */
  maxTokens?: number;
  /** Injected for tests: how to wait, and the jitter source (default Math.random). */
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

export class LlmHttpError extends Error {
  constructor(message: string, readonly status: number | null, readonly retryable: boolean) {
    super(message);
  }
}

export class OpenAiLlm implements Llm {
  readonly id: string;
  private readonly agent: Agent;
  private readonly url: URL;
  private readonly opts: Required<Omit<OpenAiLlmOptions, 'apiKey'>> & { apiKey: string | null };

  constructor(options: OpenAiLlmOptions) {
    this.opts = {
      timeoutMs: 60_000, maxRetries: 3, connections: 8, backoffMs: 500, maxBackoffMs: 10_000, maxTokens: 1024,
      sleep: (ms) => new Promise((r) => setTimeout(r, ms)), random: Math.random, ...options, apiKey: options.apiKey ?? null,
    };
    this.url = new URL(`${options.baseUrl.replace(/\/+$/, '')}/chat/completions`);
    this.id = `openai-compatible:${options.model}`;
    this.agent = new (undici().Agent)({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 120_000, connections: this.opts.connections });
  }

  async complete(messages: ChatMessage[], options: { json?: boolean; maxTokens?: number; temperature?: number } = {}): Promise<string> {
    const body: Record<string, unknown> = {
      model: this.opts.model, messages, max_tokens: options.maxTokens ?? this.opts.maxTokens, temperature: options.temperature ?? 0,
    };
    if (options.json) body.response_format = { type: 'json_object' };
    const payload = JSON.stringify(body);
    let lastError: LlmHttpError | null = null;
    for (let attempt = 0; attempt <= this.opts.maxRetries; attempt++) {
      if (attempt > 0 && lastError) await this.opts.sleep(this.backoff(attempt, lastError));
      try {
        return await this.once(payload);
      } catch (err) {
        lastError = err instanceof LlmHttpError ? err : new LlmHttpError(`LLM request failed: ${(err as Error).message}`, null, true);
        if (!lastError.retryable) throw lastError;
      }
    }
    throw lastError ?? new LlmHttpError('LLM request failed', null, false);
  }

  private retryAfterMs: number | null = null;

  private backoff(attempt: number, _err: LlmHttpError): number {
    const exp = Math.min(this.opts.maxBackoffMs, this.opts.backoffMs * 2 ** (attempt - 1));
    const jittered = exp / 2 + (exp / 2) * this.opts.random();
    const ra = this.retryAfterMs;
    this.retryAfterMs = null;
    return Math.min(this.opts.maxBackoffMs, ra !== null ? Math.max(ra, jittered) : jittered);
  }

  private async once(payload: string): Promise<string> {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (this.opts.apiKey) headers.authorization = `Bearer ${this.opts.apiKey}`;
    const res = await undici().request(this.url, {
      method: 'POST', headers, body: payload, dispatcher: this.agent,
      headersTimeout: this.opts.timeoutMs, bodyTimeout: this.opts.timeoutMs, signal: AbortSignal.timeout(this.opts.timeoutMs),
    });
    const text = await res.body.text();
    if (res.statusCode === 429 || res.statusCode >= 500) {
      const ra = res.headers['retry-after'];
      const secs = typeof ra === 'string' ? Number.parseFloat(ra) : Number.NaN;
      this.retryAfterMs = Number.isFinite(secs) && secs >= 0 ? secs * 1000 : null;
      throw new LlmHttpError(`LLM endpoint answered ${res.statusCode}: ${text.slice(0, 200)}`, res.statusCode, true);
    }
    if (res.statusCode < 200 || res.statusCode >= 300) {
      throw new LlmHttpError(`LLM endpoint answered ${res.statusCode}: ${text.slice(0, 200)}`, res.statusCode, false);
    }
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch {
      throw new LlmHttpError('LLM endpoint answered 200 with a body that is not JSON', res.statusCode, false);
    }
    const content = (doc as { choices?: { message?: { content?: unknown } }[] }).choices?.[0]?.message?.content;
    if (typeof content !== 'string') throw new LlmHttpError('LLM reply has no choices[0].message.content', res.statusCode, false);
    return content;
  }

  /** Closes kept-alive connections. */
  async close(): Promise<void> {
    await this.agent.close();
  }
}
