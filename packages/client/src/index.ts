import { Pool } from 'undici';

/** A failed call: the contract's error envelope plus the HTTP status. */
export class StrataApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string, readonly details?: { path: string; message: string }[], readonly headers: Record<string, string | string[] | undefined> = {}) {
    super(message);
    this.name = 'StrataApiError';
  }
}

export type ContentType = 'text' | 'image' | 'audio' | 'video' | 'json';

export interface EventInput {
  content: string;
  content_type?: ContentType | null;
  org_id?: string | null;
  level?: number | null;
  parent_id?: string | null;
  task_status?: string | null;
  task_progress?: number | null;
  agent_id?: string | null;
  role?: 'user' | 'assistant' | 'system' | 'tool' | null;
  valid_time?: string | null;
  metadata?: Record<string, unknown> | null;
}

export interface AssetRef { asset_id: string; media_type: 'image' | 'audio' | 'video'; size: number; url: string | null; phash: string | null }

export interface EventView extends Required<Omit<EventInput, 'content_type'>> {
  event_id: string;
  content_type: ContentType;
  transaction_time: string;
  assets: AssetRef[];
}

export interface ApiKeyView {
  key_id: string;
  key_prefix: string;
  name: string | null;
  org_id: string | null;
  user_ids: string[] | null;
  role: 'read' | 'write' | 'admin';
  created_at: string;
}

export interface PendingStatus { pending: number; ready: boolean; failed: number; oldest_pending_ms: number | null }

export interface ClientOptions {
  /** e.g. http://127.0.0.1:3000 */
  baseUrl: string;
  apiKey?: string;
  token?: string;
  /** connections kept alive to the server */
  connections?: number;
  /** per-request timeout, ms */
  timeoutMs?: number;
}

export interface RawResponse<T = unknown> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: T;
}

/** A typed client of the Strata HTTP contract over a kept-alive undici pool. */
export class StrataClient {
  private readonly pool: Pool;
  private credentials: { apiKey?: string; token?: string };

  constructor(private readonly options: ClientOptions) {
    this.pool = new Pool(options.baseUrl, { connections: options.connections ?? 16, pipelining: 1 });
    this.credentials = { apiKey: options.apiKey, token: options.token };
  }

  /** Uses this token (e.g. from login) for later calls. */
  useToken(token: string): void {
    this.credentials = { token };
  }

  useApiKey(apiKey: string): void {
    this.credentials = { apiKey };
  }

  async close(): Promise<void> {
    await this.pool.close();
  }

  /** Any request; answers whatever the status (for tests of error paths). */
  async raw<T = unknown>(method: string, path: string, options: { body?: unknown; rawBody?: string | Buffer; headers?: Record<string, string>; auth?: boolean } = {}): Promise<RawResponse<T>> {
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    if (options.auth !== false) {
      if (this.credentials.apiKey) headers['x-api-key'] = this.credentials.apiKey;
      else if (this.credentials.token) headers.authorization = `Bearer ${this.credentials.token}`;
    }
    let body: string | Buffer | undefined = options.rawBody;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] = headers['content-type'] ?? 'application/json';
    }
    const res = await this.pool.request({
      method: method as 'GET', path, headers, body,
      headersTimeout: this.options.timeoutMs ?? 30_000, bodyTimeout: this.options.timeoutMs ?? 30_000,
    });
    const text = await res.body.text();
    const type = String(res.headers['content-type'] ?? '');
    const parsed = type.includes('json') && text.length > 0 ? JSON.parse(text) : text;
    return { status: res.statusCode, headers: res.headers, body: parsed as T };
  }

  private async call<T>(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<T> {
    const res = await this.raw<T>(method, path, { body, headers });
    if (res.status !== 200) {
      const err = res.body as unknown as { error?: string; code?: string; details?: { path: string; message: string }[] };
      throw new StrataApiError(res.status, err?.code ?? 'unknown', err?.error ?? `HTTP ${res.status}`, err?.details, res.headers);
    }
    return res.body;
  }

  login(username: string, password: string) {
    return this.call<{ token: string; expires_in: number; must_change_password: boolean }>('POST', '/v1/dashboard/auth/login', { username, password });
  }

  changePassword(current_password: string, new_password: string) {
    return this.call<{ status: 'changed' }>('POST', '/v1/dashboard/auth/password', { current_password, new_password });
  }

  createApiKey(input: { name?: string; org_id?: string; user_ids?: string[]; role?: 'read' | 'write' | 'admin' } = {}) {
    return this.call<ApiKeyView & { key: string }>('POST', '/v1/dashboard/api-keys', input);
  }

  listApiKeys() {
    return this.call<{ api_keys: ApiKeyView[] }>('GET', '/v1/dashboard/api-keys');
  }

  revokeApiKey(keyId: string) {
    return this.call<{ status: 'revoked'; key_id: string }>('DELETE', `/v1/dashboard/api-keys/${encodeURIComponent(keyId)}`);
  }

  ingest(userId: string, streamId: string, event: EventInput, options: { idempotencyKey?: string } = {}) {
    return this.call<{ status: 'accepted'; event_id: string }>('POST', `${streamPath(userId, streamId)}/events`, event, idem(options.idempotencyKey));
  }

  ingestBatch(userId: string, streamId: string, events: EventInput[], options: { idempotencyKey?: string } = {}) {
    return this.call<{ status: 'accepted'; event_ids: string[]; count: number }>('POST', `${streamPath(userId, streamId)}/events/batch`, { events }, idem(options.idempotencyKey));
  }

  listEvents(userId: string, streamId: string, options: { after?: string; limit?: number } = {}) {
    const q = new URLSearchParams();
    if (options.after) q.set('after', options.after);
    if (options.limit) q.set('limit', String(options.limit));
    const qs = q.toString();
    return this.call<{ events: EventView[]; next_cursor: string | null }>('GET', `${streamPath(userId, streamId)}/events${qs ? `?${qs}` : ''}`);
  }

  /** Every event of a stream, following cursors. */
  async allEvents(userId: string, streamId: string): Promise<EventView[]> {
    const out: EventView[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await this.listEvents(userId, streamId, { after, limit: 1000 });
      out.push(...page.events);
      if (!page.next_cursor) return out;
      after = page.next_cursor;
    }
  }

  pending() {
    return this.call<PendingStatus>('GET', '/v1/status/pending');
  }

  /** Polls /v1/status/pending until ready (or the deadline). */
  async waitUntilReady(timeoutMs = 60_000, pollMs = 100): Promise<PendingStatus> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const status = await this.pending();
      if (status.ready || Date.now() > deadline) return status;
      await new Promise((r) => setTimeout(r, pollMs));
    }
  }
}

function streamPath(userId: string, streamId: string): string {
  return `/v1/users/${encodeURIComponent(userId)}/streams/${encodeURIComponent(streamId)}`;
}

function idem(key?: string): Record<string, string> | undefined {
  return key ? { 'idempotency-key': key } : undefined;
}
