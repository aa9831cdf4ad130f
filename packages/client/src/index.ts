import { decodeAnswer, fetchStreamTransport, fetchTransport, streamText, type FetchLike, type HeaderMap, type RawResponse, type StreamAnswer, type StreamBody, type StreamTransport, type Transport } from './transport';

export { fetchStreamTransport, fetchTransport } from './transport';
export type { Exchange, FetchLike, HeaderMap, RawResponse, StreamAnswer, StreamBody, StreamExchange, StreamTransport, Transport } from './transport';

/** A failed call: the contract's error envelope plus the HTTP status. */
export class StrataApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string, readonly details?: { path: string; message: string }[], readonly headers: HeaderMap = {}) {
    super(message);
    this.name = 'StrataApiError';
  }
}

export type ContentType = 'text' | 'image' | 'audio' | 'video' | 'json';

/** One message of a chat export (StrataClient.ingestChat). */
export interface ChatExportMessage {
  role: 'user' | 'assistant' | 'system' | 'tool' | 'developer' | 'function';
  content: string | Array<{ type: 'text'; text: string }>;
  name?: string;
  /** RFC 3339, or Unix seconds or milliseconds */
  timestamp?: string | number;
}

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

/** The retrieve fields (docs/api.md §3). */
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

/** docs/api.md §8 */
export interface L3TaskView {
  task_id: string; user_id: string; org_id: string | null; agent_id: string | null; parent_id: string | null;
  title: string; description: string; status: TaskStatusName; progress: number; dependencies: string[];
  context_refs: string[]; created_at: string; updated_at: string; result_summary: string | null;
  /** only with `?view=full` (docs/api.md §8) */
  stream_id?: string;
  /** only with `?view=full` */
  status_reason?: string | null;
}

export type WebhookKind = 'event.accepted' | 'memory.created' | 'memory.superseded' | 'memory.deleted' | 'task.created' | 'task.status_changed'
  | 'consolidation.failed' | '*';
export interface WebhookView { webhook_id: string; url: string; events: WebhookKind[]; user_ids: string[] | null; org_id: string | null; created_at: string }
export interface WebhookDeliveries {
  webhook_id: string; queued: number; delivered: number; dropped: number; expired: number;
  attempts: { delivery_id: string; type: WebhookKind; user_id: string; attempt: number; at: string; status: number | null; error: string | null;
    duration_ms: number; outcome: 'delivered' | 'failed' | 'expired' }[];
}

/** One known user (GET /v1/users, docs/api.md §15). */
export interface UserSummary {
  user_id: string;
  org_id: string | null;
  counts: { events: number; memory_units: number; goals: number; tasks: number; pending: number };
}
export interface GoalView { id: string; content: string; status: TaskStatusName; progress: number; stream_id: string; transaction_time: string }
export interface TaskNodeView { task: L3TaskView; children: TaskNodeView[] }
export interface GoalTreeView { goal: GoalView; tasks: TaskNodeView[] }
export interface TaskStatusRequest { status: string | Record<string, string | null>; progress?: number | null; result_summary?: string | null; reopen?: boolean | null }

/** docs/api.md §7 */
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

/** docs/api.md §9 */
export interface OrgUnitView { id: string; content: string; keywords: string[]; level: number; transaction_time: string }
export interface KnowledgeItemView { unit: OrgUnitView; contributor_user_ids: string[]; contribution_count: number; source_memory_types: string[]; published_at: string }
export interface KnowledgeListResponse {
  items: KnowledgeItemView[]; total_count: number; next_cursor: string | null;
  summary: { knowledge_count: number; contribution_count: number; contributor_count: number };
}

/** A stored unit as the memory listing shows it (§2 extension): the retrieved view plus its life and importance. */
export interface MemoryUnitView extends RetrievedUnitView { retired_at: string | null; superseded_by: string | null; importance: number }
export interface DroppedEventView { event_id: string; reason: string; dropped_at: string }
export interface FailedEventView { event_id: string; user_id: string; stream_id: string; error: string; attempts: number; at: string }

/** docs/api.md §10 */
export interface ClusterMemberView { node_id: number; url: string | null; voter: boolean; match_index: number | null }
export interface ClusterShardView {
  shard_id: number; leader: number | null; term: number; role: 'leader' | 'follower' | 'candidate' | 'learner';
  commit_index: number; applied_index: number;
  /** the index of the membership in force (its entry, or the snapshot's index once that was compacted away) */
  conf_index: number;
  /** this node is a voter of the group and serves its reads (placement: a group lives on replication_factor nodes) */
  holds: boolean;
  members: ClusterMemberView[];
}
/** One shard group in the placement directory (shard 0, on every node, is not placed). */
export interface PlacedGroup {
  group_id: number; voters: number[]; learners: number[]; leader: number | null;
  move: { to: number; from: number | null; reason: 'repair' | 'drain' | 'balance' } | null;
}
/** The placement loop's last round, on the leader of shard 0 (null elsewhere). */
export interface PlacementRound {
  at: string;
  nodes: { node_id: number; up: boolean; down_since: string | null }[];
  steps: { kind: 'add_learner' | 'promote' | 'remove' | 'transfer_leader'; group: number; outcome: 'done' | 'failed'; error?: string }[];
  moves_in_flight: number;
  under_replicated: number;
}
export interface ClusterStatus {
  node_id: number; shards: ClusterShardView[];
  placement: { replication_factor: number; groups: PlacedGroup[]; last_round: PlacementRound | null };
}
export interface ClusterInitializeResponse { status: 'initialized' | 'already_initialized'; node_id: number; shards: { shard_id: number; status: 'initialized' | 'already_initialized' }[] }
export interface ClusterJoinResponse { status: 'joined' | 'already_joined'; node_id: number; role: 'voter'; shards: { shard_id: number; status: 'joined' | 'already_joined' }[] }
/** A split of a shard group's key range (`strata cluster split`): begun, or already begun or committed before. */
export interface ClusterSplitResponse { status: 'begun' | 'already_begun' | 'already_committed'; split: { group: number; point: number; new_group: number } }
/** A merge of shard group `with` into `group` (`strata cluster merge`): the keys from `start` to `end` move. */
export interface ClusterMergeResponse { status: 'begun' | 'already_begun' | 'already_committed'; merge: { group: number; with: number; start: number; end: number } }
/** An abort of a split or merge not committed (`strata cluster split|merge --abort`): its groups are put back. */
export type ClusterAbortResponse = { status: 'aborted' | 'already_aborted' } & (
  | { split: { group: number; point: number; new_group: number } }
  | { merge: { group: number; with: number; start: number; end: number } }
);
export interface ClusterRemoveResponse { status: 'removed'; node_id: number; shards: { shard_id: number; status: 'removed' | 'not_member' }[] }

/** `/livez` and `/readyz` (docs/api.md §0): whether the process answers, and whether it can serve. */
export interface Health { live: boolean; ready: boolean }

export interface PendingStatus { pending: number; ready: boolean; failed: number; oldest_pending_ms: number | null }

/** docs/api.md §14: options of an export (an NDJSON stream, docs/export-format.md). */
export interface ExportOptions {
  /** linearizable: the node first waits until it has applied everything committed */
  consistency?: 'local' | 'linearizable';
  /** stops the export, the body being read included */
  signal?: AbortSignal;
}

export interface ImportOptions {
  /** embed the units again when the file's embedder is not the node's (otherwise such a file is refused, 409) */
  reembed?: boolean;
  /** the body's size in bytes, when known: sent as Content-Length, so a file over the node's limit is refused at once */
  contentLength?: number;
  signal?: AbortSignal;
}

/** Records by kind (events, assets, units, edges, goals, tasks, users). */
export type ImportCounts = Record<string, number>;
export interface ImportResponse { status: 'imported'; counts: ImportCounts; skipped: ImportCounts }

export interface ClientOptions {
  /** e.g. http://127.0.0.1:3000 */
  baseUrl: string;
  apiKey?: string;
  token?: string;
  /**
   * Connections kept alive to the server. Only `NodeStrataClient` (`@strata/client/node`) pools them
   * itself; with fetch the runtime (Node's global dispatcher, or the browser) decides.
   */
  connections?: number;
  /** per-request timeout (whole exchange), ms; default 30 s */
  timeoutMs?: number;
  /** the fetch to send requests with; default: the global fetch (Node 20, browsers) */
  fetch?: FetchLike;
  /** how requests are sent, below fetch (NodeStrataClient's undici pool); wins over `fetch` */
  transport?: Transport;
  /** how streamed requests (export, import) are sent; default: over `fetch` */
  streamTransport?: StreamTransport;
}

/**
 * A typed client of the Strata HTTP contract over fetch: the same code in Node 20 and in browsers. For
 * many requests from Node, `NodeStrataClient` (`@strata/client/node`) sends them through an undici pool.
 */
export class StrataClient {
  private readonly transport: Transport;
  private readonly streamTransport: StreamTransport;
  private readonly baseUrl: string;
  private credentials: { apiKey?: string; token?: string };

  constructor(private readonly options: ClientOptions) {
    // Bound at call time, not captured: a browser's fetch must be called with globalThis as `this`.
    const fetchImpl: FetchLike = options.fetch ?? ((url, init) => globalThis.fetch(url, init));
    this.transport = options.transport ?? fetchTransport(fetchImpl);
    this.streamTransport = options.streamTransport ?? fetchStreamTransport(fetchImpl);
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.credentials = { apiKey: options.apiKey, token: options.token };
  }

  /** Uses this token (e.g. from login) for later calls. */
  useToken(token: string): void {
    this.credentials = { token };
  }

  useApiKey(apiKey: string): void {
    this.credentials = { apiKey };
  }

  /** Releases what the client holds; over fetch that is nothing (the runtime owns the connections). */
  async close(): Promise<void> {}

  /** Any request; answers whatever the status (for tests of error paths). */
  async raw<T = unknown>(method: string, path: string, options: { body?: unknown; rawBody?: string | Uint8Array; headers?: Record<string, string>; auth?: boolean } = {}): Promise<RawResponse<T>> {
    const headers: Record<string, string> = options.auth === false ? { ...(options.headers ?? {}) } : this.withCredentials(options.headers);
    let body: string | Uint8Array | undefined = options.rawBody;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] = headers['content-type'] ?? 'application/json';
    }
    const res = await this.transport({ method, url: `${this.baseUrl}${path}`, headers, body, timeoutMs: this.options.timeoutMs ?? 30_000 });
    return res as RawResponse<T>;
  }

  private withCredentials(headers: Record<string, string> = {}): Record<string, string> {
    if (this.credentials.apiKey) return { ...headers, 'x-api-key': this.credentials.apiKey };
    if (this.credentials.token) return { ...headers, authorization: `Bearer ${this.credentials.token}` };
    return { ...headers };
  }

  /** A streamed exchange; a status other than 200 throws the envelope as StrataApiError. */
  private async openStream(method: string, path: string, options: { body?: StreamBody; headers?: Record<string, string>; headersTimeoutMs: number; signal?: AbortSignal }): Promise<StreamAnswer> {
    const res = await this.streamTransport({ method, url: `${this.baseUrl}${path}`, headers: this.withCredentials(options.headers), body: options.body, headersTimeoutMs: options.headersTimeoutMs, signal: options.signal });
    if (res.status === 200) return res;
    const err = decodeAnswer(res.status, res.headers, await streamText(res.body)).body as { error?: string; code?: string; details?: { path: string; message: string }[] } | string;
    const envelope = typeof err === 'object' && err !== null ? err : {};
    throw new StrataApiError(res.status, envelope.code ?? 'unknown', envelope.error ?? `HTTP ${res.status}`, envelope.details, res.headers);
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

  /**
   * A chat export as one conversation: `[{role, content, name?, timestamp?}]` (OpenAI style), one event a
   * message; `name` becomes `metadata.speaker` and `timestamp` the `valid_time`.
   */
  ingestChat(userId: string, streamId: string, messages: ChatExportMessage[], options: { idempotencyKey?: string } = {}) {
    return this.call<{ status: 'accepted'; event_ids: string[]; count: number }>('POST', `${streamPath(userId, streamId)}/events/batch`, { messages }, idem(options.idempotencyKey));
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

  /** The user's stored units (no ranking), one page. */
  listMemories(userId: string, options: { level?: 1 | 2; includeRetired?: boolean; after?: string; limit?: number } = {}) {
    const q = new URLSearchParams();
    if (options.level !== undefined) q.set('level', String(options.level));
    if (options.includeRetired) q.set('include_retired', 'true');
    if (options.after) q.set('after', options.after);
    if (options.limit) q.set('limit', String(options.limit));
    const qs = q.toString();
    return this.call<{ memories: MemoryUnitView[]; next_cursor: string | null }>('GET', `/v1/users/${encodeURIComponent(userId)}/memories${qs ? `?${qs}` : ''}`);
  }

  droppedEvents(userId: string) {
    return this.call<{ dropped: DroppedEventView[] }>('GET', `/v1/users/${encodeURIComponent(userId)}/events/dropped`);
  }

  /** Events consolidation gave up on (the `failed` figure of pending()), one page. */
  failedEvents(options: { after?: string; limit?: number } = {}) {
    const q = new URLSearchParams();
    if (options.after) q.set('after', options.after);
    if (options.limit) q.set('limit', String(options.limit));
    const qs = q.toString();
    return this.call<{ failed: FailedEventView[]; next_cursor: string | null }>('GET', `/v1/status/failed${qs ? `?${qs}` : ''}`);
  }

  /** Subscribes a URL to service events (docs/api.md §13); the secret that signs deliveries is in this answer only. */
  createWebhook(input: { url: string; events: WebhookKind[]; user_ids?: string[]; org_id?: string }) {
    return this.call<WebhookView & { secret: string }>('POST', '/v1/webhooks', input);
  }

  listWebhooks() {
    return this.call<{ webhooks: WebhookView[] }>('GET', '/v1/webhooks');
  }

  deleteWebhook(webhookId: string) {
    return this.call<{ status: 'deleted'; webhook_id: string; discarded: number }>('DELETE', `/v1/webhooks/${encodeURIComponent(webhookId)}`);
  }

  /** Delivery counters over every shard and the most recent attempts, newest first. */
  webhookDeliveries(webhookId: string) {
    return this.call<WebhookDeliveries>('GET', `/v1/webhooks/${encodeURIComponent(webhookId)}/deliveries`);
  }

  /** Known users in id order with their org and counts (admin; scoped keys see their scope). */
  listUsers(options: { after?: string; limit?: number } = {}) {
    const q = new URLSearchParams();
    if (options.after) q.set('after', options.after);
    if (options.limit !== undefined) q.set('limit', String(options.limit));
    const qs = q.toString();
    return this.call<{ users: UserSummary[]; next_cursor: string | null }>('GET', `/v1/users${qs ? `?${qs}` : ''}`);
  }

  /** Records the organization a user belongs to (null: none). Unscoped admin credentials. */
  setUserOrg(userId: string, orgId: string | null) {
    return this.call<{ user_id: string; org_id: string | null; changed: boolean }>('PUT', `/v1/users/${encodeURIComponent(userId)}/org`, { org_id: orgId });
  }

  /**
   * The user's records as an export file (NDJSON, docs/api.md §14), as the node sends it: read the stream
   * to its end. A stream that errors before its end is an incomplete export (the node cut it).
   */
  async exportUser(userId: string, options: ExportOptions = {}): Promise<ReadableStream<Uint8Array>> {
    return (await this.exportFrom(`/v1/users/${encodeURIComponent(userId)}/export`, options)).body;
  }

  /** Every user of every shard as one export file (unscoped admin credentials). */
  async exportAll(options: ExportOptions = {}): Promise<ReadableStream<Uint8Array>> {
    return (await this.exportFrom('/v1/export', options)).body;
  }

  private exportFrom(path: string, options: ExportOptions): Promise<StreamAnswer> {
    const qs = options.consistency ? `?consistency=${options.consistency}` : '';
    // the first line comes before the status, so the usual timeout bounds the wait for it; the rest takes as long as it takes
    return this.openStream('GET', `${path}${qs}`, { headersTimeoutMs: this.options.timeoutMs ?? 30_000, signal: options.signal });
  }

  /**
   * Imports an export file (POST /v1/import), sent as it is read when `body` is a stream. The answer
   * comes once the node has applied the whole file, so no timeout applies (the node bounds the upload
   * with server.request_timeout_ms); `signal` stops it. A malformed line: StrataApiError 400 whose
   * details name it (`/line/N`).
   */
  async importNdjson(body: StreamBody, options: ImportOptions = {}): Promise<ImportResponse> {
    const headers: Record<string, string> = { 'content-type': 'application/x-ndjson' };
    if (options.contentLength !== undefined) headers['content-length'] = String(options.contentLength);
    const res = await this.openStream('POST', `/v1/import${options.reembed ? '?reembed=true' : ''}`, { body, headers, headersTimeoutMs: 0, signal: options.signal });
    return JSON.parse(await streamText(res.body)) as ImportResponse;
  }

  clusterStatus() {
    return this.call<ClusterStatus>('GET', '/v1/cluster/status');
  }

  clusterInitialize() {
    return this.call<ClusterInitializeResponse>('POST', '/v1/cluster/initialize');
  }

  /** Adds a node (`address`: its peer URL) to the cluster (shard 0; the placement then moves replicas to it); any member passes it to the leader. */
  clusterJoin(nodeId: number, address: string) {
    return this.call<ClusterJoinResponse>('POST', '/v1/cluster/join', { node_id: nodeId, address });
  }

  /** Splits a shard group's key range at `point` (default: the median of its users' keys); the upper half becomes a new group (docs/cluster.md "Splitting a group"). */
  clusterSplit(groupId: number, point?: number) {
    return this.call<ClusterSplitResponse>('POST', `/v1/cluster/groups/${encodeURIComponent(String(groupId))}/split`, point === undefined ? {} : { point });
  }

  /** Aborts the split of a shard group in flight (not committed): its groups are put back. */
  clusterSplitAbort(groupId: number) {
    return this.call<ClusterAbortResponse>('POST', `/v1/cluster/groups/${encodeURIComponent(String(groupId))}/split/abort`, {});
  }

  /** Merges shard group `withGroup` (an adjacent key range) into `groupId` (docs/cluster.md "Merging two groups"). */
  clusterMerge(groupId: number, withGroup: number) {
    return this.call<ClusterMergeResponse>('POST', `/v1/cluster/groups/${encodeURIComponent(String(groupId))}/merge`, { with: withGroup });
  }

  /** Aborts the merge into a shard group in flight (not committed): its groups are put back. */
  clusterMergeAbort(groupId: number) {
    return this.call<ClusterAbortResponse>('POST', `/v1/cluster/groups/${encodeURIComponent(String(groupId))}/merge/abort`, {});
  }

  clusterRemove(nodeId: number) {
    return this.call<ClusterRemoveResponse>('DELETE', `/v1/cluster/nodes/${encodeURIComponent(String(nodeId))}`);
  }

  /** Public probes, no credentials: a 503 from /readyz is an answer (not ready), not an error. */
  async health(): Promise<Health> {
    const live = await this.raw('GET', '/livez', { auth: false });
    const ready = await this.raw('GET', '/readyz', { auth: false });
    return { live: live.status === 200, ready: ready.status === 200 };
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
