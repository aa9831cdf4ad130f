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

/** The retrieve fields (CONTRACT.md §3). */
export interface RetrieveRequest {
  query: string;
  limit?: number | null;
  min_score?: number | null;
  graph_depth?: number | null;
  start_time?: string | null;
  end_time?: string | null;
  as_of?: string | null;
  org_id?: string | null;
  agent_id?: string | null;
  enable_arbitration?: boolean | null;
  scope?: 'user' | 'stream' | null;
  image?: string | null;
  audio?: string | null;
  video?: string | null;
  consistency?: 'local' | 'linearizable' | null;
}

export interface RetrievedUnitView {
  id: string;
  memory_type: 'factual' | 'procedural';
  content: string;
  keywords: string[];
  level: number;
  stream_id: string;
  valid_time: string;
  transaction_time: string;
  references: string[];
  assets: AssetRef[];
}

export interface RetrieveResponse {
  stream_id: string;
  query: string;
  results: Array<{ unit: RetrievedUnitView; score: number }>;
  query_time_ms: number;
}

export interface ContextRequest extends RetrieveRequest {
  user_id: string;
  stream_id?: string | null;
  format?: 'text' | 'xml' | null;
  token_budget?: number | null;
}

export interface ContextResponse {
  query: string;
  format: 'text' | 'xml';
  strategy: 'dense_l2_l3' | 'adaptive_compact' | 'detailed_l1_first';
  token_budget: number;
  used_token_estimate: number;
  matched_count: number;
  included_count: number;
  truncated: boolean;
  context: string;
  hits: Array<{ id: string; level: number; memory_type: 'factual' | 'procedural'; domain: 'user' | 'org' | 'agent'; score: number }>;
  query_time_ms: number;
}

export type TaskStatusName = 'pending' | 'in_progress' | 'blocked' | 'completed' | 'failed' | 'cancelled';

/** CONTRACT §8 */
export interface L3TaskView {
  task_id: string; user_id: string; org_id: string | null; agent_id: string | null; stream_id: string; parent_id: string | null;
  title: string; description: string; status: TaskStatusName; status_reason: string | null; progress: number; dependencies: string[];
  context_refs: string[]; created_at: string; updated_at: string; result_summary: string | null;
}
export interface GoalView { id: string; content: string; status: TaskStatusName; progress: number; stream_id: string; transaction_time: string }
export interface TaskNodeView { task: L3TaskView; children: TaskNodeView[] }
export interface GoalTreeView { goal: GoalView; tasks: TaskNodeView[] }
export interface TaskStatusRequest { status: string | Record<string, string | null>; progress?: number | null; result_summary?: string | null; reopen?: boolean | null }

/** CONTRACT §7 */
export interface SemanticPreviewRequest { instruction: string; mode?: 'forget' | 'update' | 'auto' | null; forget_mode?: 'logical' | 'hard' | null; org_id?: string | null; limit?: number | null }
export interface SemanticPreviewResponse {
  plan_id: string; instruction: string; kind: 'forget' | 'update'; created_at: string; expires_at: string;
  forget_preview?: { memory_units: Array<RetrievedUnitView & { retired_at: string | null }>; matched_events: { id: string; content: string; transaction_time: string }[] };
  update_preview?: {
    source_content: string; extracted_facts: unknown[];
    actions: { target_unit_id: string; action: 'obsolete' | 'contradicts' | 'reaffirm' | 'ignore'; confidence: number; reason: string; effect: string; target_unit: RetrievedUnitView }[];
  };
}
export interface SemanticExecuteResponse { status: 'executed'; plan_id: string; kind: 'forget' | 'update'; affected_unit_ids: string[]; created_memory_unit_id?: string }

/** CONTRACT §9 */
export interface OrgUnitView { id: string; content: string; keywords: string[]; level: number; transaction_time: string }
export interface KnowledgeItemView { unit: OrgUnitView; contributor_user_ids: string[]; contribution_count: number; source_memory_types: string[]; published_at: string }
export interface KnowledgeListResponse {
  items: KnowledgeItemView[]; total_count: number; next_cursor: string | null;
  summary: { knowledge_count: number; contribution_count: number; contributor_count: number };
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

  retrieve(userId: string, streamId: string, request: RetrieveRequest) {
    return this.call<RetrieveResponse>('POST', `${streamPath(userId, streamId)}/retrieve`, request);
  }

  /** `budget` goes in the X-Memory-Budget header (the body's token_budget wins when both are given). */
  context(request: ContextRequest, options: { budget?: number } = {}) {
    return this.call<ContextResponse>('POST', '/v1/memory/context', request, options.budget === undefined ? undefined : { 'x-memory-budget': String(options.budget) });
  }

  taskTree(userId: string, streamId?: string) {
    const path = streamId ? `${streamPath(userId, streamId)}/tasks/tree` : `/v1/users/${encodeURIComponent(userId)}/tasks/tree`;
    return this.call<GoalTreeView[]>('GET', path);
  }

  readyTasks(userId: string) {
    return this.call<L3TaskView[]>('GET', `/v1/users/${encodeURIComponent(userId)}/tasks/ready`);
  }

  setTaskStatus(userId: string, taskId: string, request: TaskStatusRequest) {
    return this.call<L3TaskView>('PUT', `/v1/users/${encodeURIComponent(userId)}/tasks/${encodeURIComponent(taskId)}/status`, request);
  }

  addEdge(userId: string, edge: { source_id: string; target_id: string; relation: string; weight?: number | null }) {
    return this.call<{ status: 'accepted'; edge_id: string }>('POST', `/v1/users/${encodeURIComponent(userId)}/graph/edges`, edge);
  }

  deleteMemory(userId: string, memoryId: string, options: { cascadeEvents?: boolean } = {}) {
    const qs = options.cascadeEvents ? '?cascade=events' : '';
    return this.call<{ status: 'deleted'; memory_id: string; mode: 'hard'; deleted_event_ids?: string[] }>('DELETE', `/v1/users/${encodeURIComponent(userId)}/memories/${encodeURIComponent(memoryId)}${qs}`);
  }

  semanticPreview(userId: string, request: SemanticPreviewRequest) {
    return this.call<SemanticPreviewResponse>('POST', `/v1/users/${encodeURIComponent(userId)}/memories/semantic/preview`, request);
  }

  semanticExecute(userId: string, request: { plan_id: string; confirm: boolean; org_id?: string | null; reviewer?: string | null; note?: string | null }) {
    return this.call<SemanticExecuteResponse>('POST', `/v1/users/${encodeURIComponent(userId)}/memories/semantic/execute`, request);
  }

  orgKnowledge(orgId: string, query: { q?: string; contributor?: string; source_type?: string; sort?: 'published_desc' | 'contributions_desc' | 'topic_asc'; limit?: number; cursor?: string } = {}) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) q.set(k, String(v));
    const qs = q.toString();
    return this.call<KnowledgeListResponse>('GET', `/v1/organizations/${encodeURIComponent(orgId)}/knowledge${qs ? `?${qs}` : ''}`);
  }

  orgKnowledgeItem(orgId: string, id: string) {
    return this.call<{ unit: OrgUnitView; knowledge: { contributions: { source_id: string; contributor_user_id: string; source_memory_type: string; source_level: number; source_content_preview: string; activated_at: string }[] } }>(
      'GET', `/v1/organizations/${encodeURIComponent(orgId)}/knowledge/${encodeURIComponent(id)}`);
  }

  orgKnowledgeMetrics(orgId: string) {
    return this.call<{ org_id: string; knowledge_count: number; contribution_count: number; contributor_count: number; source_type_distribution: { key: string; value: number }[] }>(
      'GET', `/v1/organizations/${encodeURIComponent(orgId)}/knowledge/metrics`);
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
