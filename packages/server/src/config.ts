import { readFileSync } from 'node:fs';
import Ajv, { type ErrorObject } from 'ajv';
import { parse as parseToml } from 'smol-toml';

/**
 * Configuration: one typed object, built once at start from (lowest to highest precedence) the
 * embedded defaults, a TOML file (`--config` or STRATA_CONFIG), `STRATA__SECTION__KEY` variables and
 * the shortcut variables. It is validated against one JSON Schema; an invalid value stops the start
 * with a message that names the key and where it came from.
 */
export interface Config {
  server: {
    host: string;
    port: number;
    /** bytes */
    body_limit: number;
    metrics_enabled: boolean;
    /** when true, /metrics requires admin credentials */
    metrics_auth: boolean;
    /** seconds a graceful stop waits for in-flight requests */
    shutdown_grace_s: number;
    /** requests per second per client address on /v1 (0 = unlimited) */
    rate_limit_per_s: number;
    /** milliseconds a client has to send the whole header block (then 408) */
    headers_timeout_ms: number;
    /** milliseconds a client has to send the whole request, body included (then 408); bounds a dribbled body */
    request_timeout_ms: number;
  };
  storage: { data_dir: string };
  auth: {
    /** seconds */
    token_ttl: number;
    jwt_secret: string | null;
    admin_password: string | null;
    api_key: string | null;
    login_max_attempts: number;
    /** seconds */
    login_window: number;
    /** password hashes (scrypt, on libuv's shared thread pool) computed at once; more wait in a queue */
    hash_concurrency: number;
    /** logins waiting for a hash slot at most; beyond, 503 with Retry-After */
    hash_queue: number;
  };
  ingest: { max_batch: number; metadata_max_bytes: number; idempotency_ttl: number; max_content_bytes: number };
  retrieval: {
    max_limit: number;
    max_media_bytes: number;
    /**
     * units from which a user's indexes are held by the index worker, a thread that answers their
     * queries beside the event loop (indexes/worker/); 0 (the default): no worker, every index on the
     * event loop. Off by default: on a quiet machine a query ranked in the worker cost 2.8x the CPU
     * (docs/performance.md, "Third round"), a cause not found yet
     */
    worker_min_units: number;
  };
  /** MCP over streamable HTTP at /mcp (CONTRACT §12): sessions are held in memory, so they are bounded */
  mcp: {
    enabled: boolean;
    /** sessions held at once; beyond, the least recently used of the credentials holding the most is closed */
    max_sessions: number;
    /** sessions one set of credentials may hold at once; beyond, its own least recently used is closed */
    max_sessions_per_key: number;
    /** origins (`scheme://host[:port]`) whose browser pages may call /mcp; a request with any other Origin header: 403 */
    allowed_origins: string[];
    /** when not empty, the Host headers /mcp answers to (`host[:port]`); any other: 403 (DNS rebinding) */
    allowed_hosts: string[];
    /** seconds a session may stay unused before it is closed */
    session_idle_s: number;
  };
  /** `POST /v1/import` (docs/export-format.md): its body is streamed, so it has its own limits. */
  import: {
    /** bytes of an import body (once decoded); beyond: 413 */
    max_bytes: number;
    /** bytes of one NDJSON line; a longer line: 413 naming it */
    max_line_bytes: number;
    /** records per `import.records` command at most */
    chunk_records: number;
    /** bytes of NDJSON per `import.records` command (a chunk is proposed once it reaches this) */
    chunk_bytes: number;
  };
  cluster: {
    node_id: number;
    /** initial members: node id → base URL */
    peers: { id: number; url: string }[];
    secret: string | null;
    shards: number;
    forward_timeout_ms: number;
    /** a member's URL to ask to be joined at start */
    join: string | null;
    /** this node's own base URL as peers reach it (default: from peers, else http://127.0.0.1:<port>) */
    advertise_url: string | null;
    /** seconds a signed peer request's timestamp may differ from this node's clock (older or newer: 401) */
    peer_clock_skew_s: number;
    /** bytes of peer request bodies received at once, all peers together (beyond: 503, Raft resends) */
    peer_inflight_bytes: number;
    /** voters of each shard group but shard 0 (which is on every node): docs/cluster.md "Placement" */
    replication_factor: number;
    /** how often the leader of shard 0 checks the nodes and plans replica moves */
    placement_interval_ms: number;
    /** a node that has not answered for this long is dead: its replicas are re-created elsewhere */
    dead_after_s: number;
    /** replica moves in flight cluster-wide at most (each streams a snapshot to its new member) */
    max_moves: number;
    /** a group storing more records (events and memory units) than this is split by the cluster itself; 0: never (docs/cluster.md "Automatic splits and merges") */
    auto_split_records: number;
    /** two adjacent groups each storing fewer records than this are merged by the cluster itself; 0: never; at most a quarter of auto_split_records */
    auto_merge_records: number;
  };
  raft: {
    auto_initialize: boolean; bootstrap_seed_node_id: number | null; tick_ms: number; election_ticks: number; heartbeat_ticks: number;
    /** back-pressure: writes waiting to commit per shard group at most (beyond: 503 overloaded, Retry-After) */
    max_pending_proposals: number;
    /** and their bytes at most */
    max_pending_bytes: number;
    /** a shard snapshots its state after this many applied entries, then compacts its log */
    snapshot_every: number;
    /** or after this many bytes of applied entries (the uncompacted log is held in memory) */
    snapshot_every_bytes: number;
    /** entries kept in the log behind a snapshot (a follower lagging less needs no snapshot) */
    compaction_margin: number;
    /** and their bytes at most */
    compaction_margin_bytes: number;
    /** payload bytes of applied entries kept in memory per shard group (the newest; older ones are read from disk when a lagging follower needs them) */
    held_payload_bytes: number;
  };
  embedding: {
    provider: 'local' | 'openai' | 'hashing'; base_url: string | null; api_key: string | null; model: string | null; dimensions: number | null;
    /** send `dimensions` in each request, for models that shorten their vectors to it (text-embedding-3-*) */
    send_dimensions: boolean;
    /** texts per request (a text-embeddings server takes 32 by default) */
    batch_size: number;
    /** deadline of one request */
    timeout_ms: number;
  };
  llm: { provider: 'none' | 'openai'; base_url: string | null; api_key: string | null; model: string | null };
  reranker: { type: 'weighted' | 'arbitrator' | 'http'; url: string | null };
  consolidation: { enabled: boolean; interval_ms: number; batch_size: number; gather_ms: number };
  /** Importance and forgetting (packages/memory/src/retrieval/decay.ts, workers/reinforcement.ts, workers/pruning.ts). */
  memory: {
    /** effective importance halves every this many days without retrieval (retrieval ranking and pruning) */
    importance_half_life_days: number;
    /** units of each retrieve/context answer (its top ones) reinforced by being returned; 0 = no reinforcement */
    reinforce_top: number;
    /** share of the gap to 1 that one retrieval closes */
    reinforce_gain: number;
    /** how often a node proposes its batched reinforcements (one command per shard) */
    reinforce_interval_ms: number;
    /** hard-delete forgettable L1 units (off by default: forgetting data is the operator's decision) */
    prune_enabled: boolean;
    /** effective importance below which an L1 unit is forgettable */
    prune_below: number;
    /** units younger than this (since stored or last retrieved) are never pruned */
    prune_min_age_days: number;
    /** how often each shard leader looks for forgettable units */
    prune_interval_ms: number;
    /** units examined per pass and shard (bounded work; the scan resumes where it stopped) */
    prune_scan_per_pass: number;
    /** units deleted per pass and shard at most */
    prune_max_per_pass: number;
    /**
     * bytes (estimated) of per-user derived indexes a node keeps, over all its shards; beyond, the least
     * recently used users are dropped and rebuilt from LevelDB on next use (indexes/index-cache.ts)
     */
    index_cache_bytes: number;
  };
  /** Outbound webhooks (CONTRACT §13, docs/operations.md "Webhooks", server/src/webhooks/) */
  webhooks: {
    /** deliver to (and accept subscriptions for) loopback, link-local and private addresses (tests, closed networks) */
    allow_private: boolean;
    /** live subscriptions at most, service-wide (each has a sender in memory on every shard leader) */
    max_subscriptions: number;
    /** live subscriptions one set of scoped credentials (an API key, an account) may have made; unscoped credentials are not held to it */
    max_per_creator: number;
    /** deliveries a subscription's outbox holds per shard (recorded in the subscription when created); beyond, the oldest are dropped */
    outbox_max: number;
    /** milliseconds a receiver has to answer one delivery (connect, headers and body) */
    timeout_ms: number;
    /** first retry delay; doubles per failed attempt up to retry_max_ms, with jitter */
    retry_initial_ms: number;
    retry_max_ms: number;
    /** seconds after the change a delivery is retried at most; then it is given up on (counted as expired) */
    retry_window_s: number;
    /** deliveries a subscription may have sent but not yet recorded as delivered (what a failover may send again) */
    advance_batch: number;
    /** how often a shard leader records delivery progress (one `webhook.advance` command) */
    advance_interval_ms: number;
    /** how often a dispatcher looks for new deliveries, subscriptions and leadership */
    poll_ms: number;
  };
  log: { level: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent' };
  /** OpenTelemetry traces (telemetry/tracing.ts, docs/operations.md) */
  telemetry: {
    /** OTLP/HTTP collector base URL (`/v1/traces` is appended unless present); null: tracing off, nothing started */
    otlp_endpoint: string | null;
    /** the `service.name` of the exported spans (each node adds its node id as `service.instance.id`) */
    service_name: string;
  };
}

const str = { type: 'string' } as const;
const nullableStr = { type: ['string', 'null'], default: null } as const;
const int = (min: number, def: number, max?: number) => ({ type: 'integer', minimum: min, ...(max ? { maximum: max } : {}), default: def });
const bool = (def: boolean) => ({ type: 'boolean', default: def });
const section = (properties: Record<string, unknown>) => ({ type: 'object', additionalProperties: false, default: {}, properties });

export const CONFIG_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    server: section({
      host: { ...str, default: '0.0.0.0' },
      port: int(0, 3000, 65535),
      body_limit: int(1024, 2 * 1024 * 1024),
      metrics_enabled: bool(true),
      metrics_auth: bool(false),
      shutdown_grace_s: int(0, 10),
      rate_limit_per_s: int(0, 0),
      headers_timeout_ms: int(100, 10_000),
      request_timeout_ms: int(100, 60_000),
    }),
    storage: section({ data_dir: { ...str, minLength: 1, default: './data' } }),
    auth: section({
      token_ttl: int(60, 24 * 3600),
      jwt_secret: { type: ['string', 'null'], minLength: 16, default: null },
      admin_password: { type: ['string', 'null'], minLength: 8, default: null },
      api_key: { type: ['string', 'null'], minLength: 8, default: null },
      login_max_attempts: int(1, 5),
      login_window: int(1, 15 * 60),
      hash_concurrency: int(1, 1),
      hash_queue: int(0, 16),
    }),
    ingest: section({
      max_batch: int(1, 1000),
      metadata_max_bytes: int(0, 16 * 1024),
      idempotency_ttl: int(1, 24 * 3600),
      max_content_bytes: int(1, 2 * 1024 * 1024),
    }),
    retrieval: section({ max_limit: int(1, 100), max_media_bytes: int(1, 8 * 1024 * 1024), worker_min_units: int(0, 0) }),
    mcp: section({
      enabled: bool(true), max_sessions: int(1, 1000, 1_000_000), max_sessions_per_key: int(1, 32, 1_000_000), session_idle_s: int(10, 1800),
      allowed_origins: { type: 'array', items: { type: 'string', pattern: '^https?://[^/\\s]+$' }, default: [] },
      allowed_hosts: { type: 'array', items: { type: 'string', pattern: '^[^/\\s]+$' }, default: [] },
    }),
    import: section({
      max_bytes: int(1024, 1024 * 1024 * 1024),
      max_line_bytes: int(1024, 16 * 1024 * 1024),
      chunk_records: int(1, 500, 10_000),
      chunk_bytes: int(1024, 1024 * 1024),
    }),
    cluster: section({
      node_id: int(1, 1),
      peers: {
        type: 'array', default: [],
        items: { type: 'object', additionalProperties: false, required: ['id', 'url'], properties: { id: { type: 'integer', minimum: 1 }, url: { type: 'string', pattern: '^https?://' } } },
      },
      secret: { type: ['string', 'null'], minLength: 8, default: null },
      shards: int(1, 1, 256),
      forward_timeout_ms: int(100, 5000),
      join: { type: ['string', 'null'], pattern: '^https?://', default: null },
      advertise_url: { type: ['string', 'null'], pattern: '^https?://', default: null },
      peer_clock_skew_s: int(1, 30, 3600),
      peer_inflight_bytes: int(1 << 20, 128 << 20),
      replication_factor: int(1, 3, 9),
      placement_interval_ms: int(50, 1000, 60_000),
      dead_after_s: int(1, 60, 86_400),
      max_moves: int(1, 2, 64),
      auto_split_records: int(0, 100_000),
      auto_merge_records: int(0, 0),
    }),
    raft: section({
      auto_initialize: bool(true),
      bootstrap_seed_node_id: { type: ['integer', 'null'], minimum: 1, default: null },
      tick_ms: int(5, 100),
      election_ticks: int(2, 10),
      heartbeat_ticks: int(1, 1),
      max_pending_proposals: int(1, 8192),
      max_pending_bytes: int(1024, 64 * 1024 * 1024),
      snapshot_every: int(10, 10_000),
      snapshot_every_bytes: int(64 * 1024, 64 * 1024 * 1024),
      compaction_margin: int(0, 2_000),
      compaction_margin_bytes: int(0, 16 * 1024 * 1024),
      held_payload_bytes: int(0, 8 * 1024 * 1024),
    }),
    embedding: section({
      provider: { enum: ['local', 'openai', 'hashing'], default: 'local' },
      base_url: nullableStr, api_key: nullableStr, model: nullableStr,
      dimensions: { type: ['integer', 'null'], minimum: 1, default: null },
      send_dimensions: bool(false), batch_size: int(1, 64), timeout_ms: int(100, 30_000),
    }),
    llm: section({ provider: { enum: ['none', 'openai'], default: 'none' }, base_url: nullableStr, api_key: nullableStr, model: nullableStr }),
    reranker: section({ type: { enum: ['weighted', 'arbitrator', 'http'], default: 'weighted' }, url: nullableStr }),
    consolidation: section({ enabled: bool(true), interval_ms: int(10, 200), batch_size: int(1, 64), gather_ms: int(0, 1000, 60_000) }),
    memory: section({
      importance_half_life_days: { type: 'number', exclusiveMinimum: 0, default: 30 },
      reinforce_top: int(0, 3),
      reinforce_gain: { type: 'number', minimum: 0, maximum: 1, default: 0.05 },
      reinforce_interval_ms: int(10, 3000),
      prune_enabled: bool(false),
      prune_below: { type: 'number', minimum: 0, maximum: 1, default: 0.05 },
      prune_min_age_days: { type: 'number', minimum: 0, default: 30 },
      prune_interval_ms: int(1000, 3_600_000),
      prune_scan_per_pass: int(1, 5000),
      prune_max_per_pass: int(1, 200),
      index_cache_bytes: int(0, 256 * 1024 * 1024),
    }),
    webhooks: section({
      allow_private: bool(false),
      max_subscriptions: int(1, 100, 10_000),
      max_per_creator: int(1, 10, 10_000),
      outbox_max: int(1, 10_000, 1_000_000),
      timeout_ms: int(100, 10_000, 600_000),
      retry_initial_ms: int(10, 1000),
      retry_max_ms: int(10, 300_000),
      retry_window_s: int(1, 24 * 3600, 7 * 24 * 3600),
      advance_batch: int(1, 100, 10_000),
      advance_interval_ms: int(10, 200),
      poll_ms: int(10, 250),
    }),
    log: section({ level: { enum: ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'], default: 'info' } }),
    telemetry: section({
      otlp_endpoint: { type: ['string', 'null'], pattern: '^https?://', default: null },
      service_name: { ...str, minLength: 1, maxLength: 200, default: 'strata' },
    }),
  },
} as const;

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

type Raw = Record<string, Record<string, unknown>>;

/** Shortcut variables and the key each one sets. */
const SHORTCUTS: Record<string, [string, string]> = {
  STRATA_PORT: ['server', 'port'],
  STRATA_HOST: ['server', 'host'],
  STRATA_DATA_DIR: ['storage', 'data_dir'],
  STRATA_NODE_ID: ['cluster', 'node_id'],
  STRATA_PEERS: ['cluster', 'peers'],
  STRATA_ADMIN_PASSWORD: ['auth', 'admin_password'],
  // The server's static admin key. STRATA_API_KEY (the clients' and the CLI's credential) is still read
  // for compatibility; STRATA_ADMIN_API_KEY, listed after it, wins when both are set.
  STRATA_API_KEY: ['auth', 'api_key'],
  STRATA_ADMIN_API_KEY: ['auth', 'api_key'],
  STRATA_CLUSTER_SECRET: ['cluster', 'secret'],
  STRATA_SHARDS: ['cluster', 'shards'],
  STRATA_JOIN: ['cluster', 'join'],
  STRATA_ADVERTISE_URL: ['cluster', 'advertise_url'],
  STRATA_LOG_LEVEL: ['log', 'level'],
};

/** `1=http://a:3001,2=http://b:3002` → [{id: 1, url}, …]; anything else is left for the schema to reject. */
function parsePeers(value: string): unknown {
  if (value.trim() === '') return [];
  return value.split(',').map((part) => {
    const eq = part.indexOf('=');
    const id = Number(part.slice(0, eq).trim());
    return { id: Number.isInteger(id) ? id : part.slice(0, eq).trim(), url: part.slice(eq + 1).trim().replace(/\/+$/, '') };
  });
}

/** An environment value as the schema's type wants it: numbers, booleans and null as themselves. */
/** Keys holding a list of strings: comma-separated in an environment variable. */
const LIST_KEYS: ReadonlySet<string> = new Set(['allowed_origins', 'allowed_hosts']);

function envValue(key: string, value: string): unknown {
  if (key === 'peers') return parsePeers(value);
  if (LIST_KEYS.has(key)) return value.split(',').map((v) => v.trim()).filter((v) => v !== '');
  if (value === 'null') return null;
  if (value === 'true' || value === 'false') return value === 'true';
  if (/^-?\d+(\.\d+)?$/.test(value)) return Number(value);
  return value;
}

function set(raw: Raw, sources: Map<string, string>, sectionName: string, key: string, value: unknown, source: string) {
  raw[sectionName] = raw[sectionName] ?? {};
  raw[sectionName][key] = value;
  sources.set(`${sectionName}.${key}`, source);
}

export interface LoadOptions {
  env?: NodeJS.ProcessEnv;
  /** path of a TOML file; defaults to STRATA_CONFIG */
  file?: string | null;
  /** values that override everything (tests) */
  overrides?: Partial<{ [S in keyof Config]: Partial<Config[S]> }>;
}

export function loadConfig(options: LoadOptions = {}): Config {
  const env = options.env ?? process.env;
  const raw: Raw = {};
  const sources = new Map<string, string>();
  const file = options.file ?? env.STRATA_CONFIG ?? null;
  if (file) {
    let parsed: Record<string, unknown>;
    try {
      parsed = parseToml(readFileSync(file, 'utf8')) as Record<string, unknown>;
    } catch (err) {
      throw new ConfigError(`Cannot read configuration file ${file}: ${(err as Error).message}`);
    }
    for (const [sectionName, body] of Object.entries(parsed)) {
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        throw new ConfigError(`Invalid configuration: '${sectionName}' in ${file} must be a [section]`);
      }
      for (const [key, value] of Object.entries(body)) {
        set(raw, sources, sectionName, key, key === 'peers' && typeof value === 'string' ? parsePeers(value) : value, file);
      }
    }
  }
  for (const [name, value] of Object.entries(env)) {
    const m = /^STRATA__([A-Z0-9_]+?)__([A-Z0-9_]+)$/.exec(name);
    if (m && value !== undefined) {
      const key = m[2].toLowerCase();
      set(raw, sources, m[1].toLowerCase(), key, envValue(key, value), name);
    }
  }
  for (const [name, [sectionName, key]] of Object.entries(SHORTCUTS)) {
    const value = env[name];
    if (value !== undefined && value !== '') set(raw, sources, sectionName, key, envValue(key, value), name);
  }
  for (const [sectionName, body] of Object.entries(options.overrides ?? {})) {
    for (const [key, value] of Object.entries(body ?? {})) set(raw, sources, sectionName, key, value, 'overrides');
  }
  return validateConfig(raw, sources);
}

function describe(err: ErrorObject, sources: Map<string, string>): string {
  const parts = err.instancePath.split('/').filter(Boolean);
  if (err.keyword === 'additionalProperties') {
    const key = [...parts, (err.params as { additionalProperty: string }).additionalProperty].join('.');
    return `unknown key '${key}'${sources.has(key) ? ` (from ${sources.get(key)})` : ''}`;
  }
  const key = parts.filter((p) => !/^\d+$/.test(p)).slice(0, 2).join('.');
  const source = sources.get(key);
  return `'${parts.join('.')}' ${err.message}${source ? ` (from ${source})` : ''}`;
}

export function validateConfig(raw: Raw, sources = new Map<string, string>()): Config {
  const ajv = new Ajv({ useDefaults: true, allErrors: true, strict: false });
  const validate = ajv.compile(CONFIG_SCHEMA);
  const copy = JSON.parse(JSON.stringify(raw)) as Raw;
  if (!validate(copy)) {
    const messages = (validate.errors ?? []).map((e) => describe(e, sources));
    throw new ConfigError(`Invalid configuration: ${[...new Set(messages)].join('; ')}`);
  }
  const config = copy as unknown as Config;
  if (config.server.headers_timeout_ms > config.server.request_timeout_ms) {
    throw new ConfigError(`Invalid configuration: 'server.headers_timeout_ms' (${config.server.headers_timeout_ms}) must not exceed 'server.request_timeout_ms' (${config.server.request_timeout_ms}): the headers are part of the request`);
  }
  if (config.cluster.peers.length > 0 && !config.cluster.peers.some((p) => p.id === config.cluster.node_id)) {
    throw new ConfigError(`Invalid configuration: 'cluster.node_id' ${config.cluster.node_id} is not one of the ids in 'cluster.peers' (STRATA_PEERS)`);
  }
  const { auto_split_records: splitAbove, auto_merge_records: mergeBelow } = config.cluster;
  if (splitAbove > 0 && mergeBelow * 4 > splitAbove) {
    throw new ConfigError(`Invalid configuration: 'cluster.auto_merge_records' (${mergeBelow}) must be at most a quarter of 'cluster.auto_split_records' (${splitAbove}): a merged group must stay well below the split threshold, or the two would undo each other`);
  }
  if (config.cluster.peers.length > 1 && !config.cluster.secret) {
    throw new ConfigError(`Invalid configuration: 'cluster.secret' (STRATA_CLUSTER_SECRET) is required when 'cluster.peers' lists more than one node`);
  }
  return config;
}
