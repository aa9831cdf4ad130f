import { open as openFile, readdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Level } from 'level';
import type { AbstractSublevel } from 'abstract-level';
import type { SemanticPlanRecord } from './commands';
import type { AccountRecord, ApiKeyRecord, Edge, EventRecord, Goal, L3Task, MemoryUnit, Relation } from './types';
import type { StoredWebhook, WebhookAttempt, WebhookDelivery, WebhookState } from './webhooks';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Sub<V> = AbstractSublevel<any, any, string, V>;

/** Up to this many keys are read one by one synchronously; more in one asynchronous getMany. */
export const SYNC_READ_MAX = 16;

/**
 * Point reads of a few keys: synchronous `getSync` each (answered from the memtable or block cache in
 * microseconds), or one `getMany` for more. A `getMany` costs a thread-pool round trip and its own
 * setup whatever its size: a live trickle reads a few keys per command and per batch, and its
 * `getMany` calls were a large part of the main thread's LevelDB time (docs/performance.md, issue 27).
 * Both read the latest state, so the answer is the same.
 */
export async function readMany<V>(sub: Sub<V>, keys: readonly string[]): Promise<(V | undefined)[]> {
  if (keys.length <= SYNC_READ_MAX) return keys.map((k) => sub.getSync(k));
  return sub.getMany(keys as string[]);
}

export interface PendingEntry {
  user_id: string;
  stream_id: string;
  event_id: string;
  accepted_at: string;
}

/** A unit's embedding: little-endian float32, base64; the embedder id says which model made it. */
export interface StoredVector {
  embedder_id: string;
  dims: number;
  f32_b64: string;
}

/** One end of an edge, kept under each of its units so a unit's neighbours are one key range. */
export interface AdjacencyEntry {
  /** the unit at the other end */
  other_id: string;
  relation: Relation;
  /** true when this unit is the edge's source */
  out: boolean;
}

export interface DroppedRecord {
  reason: string;
  at: string;
}

export interface FailedRecord {
  user_id: string;
  stream_id: string;
  event_id: string;
  error: string;
  attempts: number;
  at: string;
}

/** A stream whose events were consolidated since its last reflection. */
export interface ReflectionDue {
  /** acceptance time of the newest consolidated event of the stream */
  last_event_at: string;
}

/** The goal or task an L0 event gave (so a `parent_id` naming the event finds it). */
export interface L3Source {
  kind: 'goal' | 'task';
  id: string;
}

/** How often retrieval returned a unit, and when last (reinforcement, decay). Not on MemoryUnit: usage, not content. */
export interface UnitStats {
  retrievals: number;
  last_retrieved_at: string;
}

/** The organization recorded for a user, when, and how (an admin set it, or an org-scoped key's first write claimed it). */
export interface UserOrgRecord {
  org_id: string;
  at: string;
  by: 'set' | 'claim';
}

export interface IdempotencyRecord {
  answer: unknown;
  expires_at: string;
}

/**
 * The state machine's LevelDB: one database, one sublevel per record type. Only `apply` writes to it
 * (through ApplyContext); queries read it directly.
 */
export class StateDb {
  /** applied_index and counters */
  readonly meta: Sub<unknown>;
  /** user \0 stream \0 seq → EventRecord */
  readonly events: Sub<EventRecord>;
  /** user \0 event_id → { stream_id, seq } */
  readonly eventIds: Sub<{ stream_id: string; seq: string }>;
  /** seq → PendingEntry: events accepted but not yet consolidated, in acceptance order */
  readonly pending: Sub<PendingEntry>;
  /** user \0 stream \0 idempotency key → first answer */
  readonly idempotency: Sub<IdempotencyRecord>;
  /** asset_id (sha256 hex) → bytes; content-addressed, so stored once however often it is sent */
  readonly assets: Sub<Buffer>;
  /**
   * user \0 asset_id → how many of the user's events and units refer to the asset. A key exists only for
   * a user that gave the bytes (ingest, or an import's asset line): it is what lets the user's export read
   * them (apply/assets.ts). Knowing an asset's id is not enough.
   */
  readonly assetHolds: Sub<number>;
  /** asset_id → how many users hold it; when it falls to 0 the bytes are deleted. */
  readonly assetHolders: Sub<number>;
  /** `account` \0 name → AccountRecord; `apikey` \0 id → ApiKeyRecord; `apikey_hash` \0 sha → id; `jwt_secret` */
  readonly auth: Sub<unknown>;
  /** user \0 seq → PendingEntry: the same entries as `pending`, by user, so the worker can serve users in turn */
  readonly pendingByUser: Sub<PendingEntry>;
  /** user \0 unit_id → MemoryUnit (L1 and L2) */
  readonly units: Sub<MemoryUnit>;
  /** user \0 unit_id → StoredVector */
  readonly vectors: Sub<StoredVector>;
  /** user \0 edge_id → Edge */
  readonly edges: Sub<Edge>;
  /** user \0 unit_id \0 edge_id → AdjacencyEntry */
  readonly adjacency: Sub<AdjacencyEntry>;
  /** user \0 subject \0 attribute \0 unit_id → unit_id: units stating a fact about subject+attribute (corrections) */
  readonly unitBySubject: Sub<string>;
  /** user \0 event_id → DroppedRecord: events consolidation kept no memory of, and why */
  readonly dropped: Sub<DroppedRecord>;
  /** seq → FailedRecord: events consolidation gave up on */
  readonly failed: Sub<FailedRecord>;
  /** user \0 stream_id → ReflectionDue */
  readonly reflectionDue: Sub<ReflectionDue>;
  /** user \0 goal_id → Goal (L3) */
  readonly goals: Sub<Goal>;
  /** user \0 task_id → L3Task */
  readonly tasks: Sub<L3Task>;
  /** user \0 event_id → L3Source: events already planned, and the record each gave */
  readonly l3ByEvent: Sub<L3Source>;
  /** plan_id → SemanticPlanRecord (in the shard of the plan's user) */
  readonly semanticPlans: Sub<SemanticPlanRecord>;
  /** expires_at \0 plan_id → plan_id: plans by expiry, so apply prunes expired ones in order */
  readonly planExpiry: Sub<string>;
  /** org \0 user \0 unit_id → unit_id: units that carry an org_id (organization knowledge) */
  readonly orgUnits: Sub<string>;
  /** user \0 unit_id → UnitStats: retrieval counts of units (written by `memory.reinforce`, removed with the unit) */
  readonly unitStats: Sub<UnitStats>;
  /** user → UserOrgRecord: the organization the user belongs to (in the user's shard; `user.set_org`) */
  readonly userOrgs: Sub<UserOrgRecord>;
  /** org \0 user → user: the users of each organization (the same records, by org) */
  readonly orgUsers: Sub<string>;
  /** webhook_id → StoredWebhook: every shard's copy of the subscriptions (webhooks.ts) */
  readonly webhooks: Sub<StoredWebhook>;
  /** webhook_id \0 seq → WebhookDelivery: deliveries not yet advanced past, in commit order */
  readonly webhookOutbox: Sub<WebhookDelivery>;
  /** webhook_id → WebhookState: the subscription's counters in this shard */
  readonly webhookState: Sub<WebhookState>;
  /** webhook_id \0 log index + position → WebhookAttempt: recent delivery attempts (bounded) */
  readonly webhookAttempts: Sub<WebhookAttempt>;

  private constructor(readonly level: Level<string, unknown>) {
    const json = { valueEncoding: 'json' } as const;
    this.meta = level.sublevel<string, unknown>('meta', json);
    this.events = level.sublevel<string, EventRecord>('events', json);
    this.eventIds = level.sublevel<string, { stream_id: string; seq: string }>('event_ids', json);
    this.pending = level.sublevel<string, PendingEntry>('pending', json);
    this.idempotency = level.sublevel<string, IdempotencyRecord>('idempotency', json);
    this.assets = level.sublevel<string, Buffer>('assets', { valueEncoding: 'buffer' });
    this.assetHolds = level.sublevel<string, number>('asset_holds', json);
    this.assetHolders = level.sublevel<string, number>('asset_holders', json);
    this.auth = level.sublevel<string, unknown>('auth', json);
    this.pendingByUser = level.sublevel<string, PendingEntry>('pending_by_user', json);
    this.units = level.sublevel<string, MemoryUnit>('units', json);
    this.vectors = level.sublevel<string, StoredVector>('vectors', json);
    this.edges = level.sublevel<string, Edge>('edges', json);
    this.adjacency = level.sublevel<string, AdjacencyEntry>('adjacency', json);
    this.unitBySubject = level.sublevel<string, string>('unit_by_subject', json);
    this.dropped = level.sublevel<string, DroppedRecord>('dropped', json);
    this.failed = level.sublevel<string, FailedRecord>('failed', json);
    this.reflectionDue = level.sublevel<string, ReflectionDue>('reflection_due', json);
    this.goals = level.sublevel<string, Goal>('goals', json);
    this.tasks = level.sublevel<string, L3Task>('tasks', json);
    this.l3ByEvent = level.sublevel<string, L3Source>('l3_by_event', json);
    this.semanticPlans = level.sublevel<string, SemanticPlanRecord>('semantic_plans', json);
    this.planExpiry = level.sublevel<string, string>('plan_expiry', json);
    this.orgUnits = level.sublevel<string, string>('org_units', json);
    this.unitStats = level.sublevel<string, UnitStats>('unit_stats', json);
    this.userOrgs = level.sublevel<string, UserOrgRecord>('user_orgs', json);
    this.orgUsers = level.sublevel<string, string>('org_users', json);
    this.webhooks = level.sublevel<string, StoredWebhook>('webhooks', json);
    this.webhookOutbox = level.sublevel<string, WebhookDelivery>('webhook_outbox', json);
    this.webhookState = level.sublevel<string, WebhookState>('webhook_state', json);
    this.webhookAttempts = level.sublevel<string, WebhookAttempt>('webhook_attempts', json);
  }

  static async open(path: string): Promise<StateDb> {
    await removeSetAside(path);
    const level = new Level<string, unknown>(path, { valueEncoding: 'json' });
    await level.open();
    return new StateDb(level);
  }

  /**
   * Deletes the whole database, files included, and opens it again empty (a replica wiped from this
   * node). The directory is renamed aside first (atomic): a crash leaves either the old database or
   * an empty one, never a LevelDB missing half its files; what was set aside is deleted now, or by
   * the next open(). The sublevels stay valid: they follow the reopened database.
   */
  async reset(): Promise<void> {
    const path = this.level.location;
    await this.level.close();
    const aside = `${path}${SET_ASIDE}${Date.now()}`;
    await rename(path, aside);
    await syncDir(dirname(path));
    await this.level.open();
    // a sublevel closes with its database but does not reopen with it
    for (const sub of this.sublevels()) await sub.open();
    await rm(aside, { recursive: true, force: true });
  }

  async close(): Promise<void> {
    await this.level.close();
  }

  /** Every record type's sublevel (the fields above). */
  private sublevels(): Sub<unknown>[] {
    return Object.values(this).filter((v): v is Sub<unknown> => v !== this.level && typeof v === 'object' && v !== null && 'prefix' in v && typeof (v as Sub<unknown>).open === 'function');
  }

  async account(username: string): Promise<AccountRecord | undefined> {
    return (await this.auth.get(`account\x00${username}`)) as AccountRecord | undefined;
  }

  async apiKeyByHash(hash: string): Promise<ApiKeyRecord | undefined> {
    const id = (await this.auth.get(`apikey_hash\x00${hash}`)) as string | undefined;
    return id ? ((await this.auth.get(`apikey\x00${id}`)) as ApiKeyRecord | undefined) : undefined;
  }

  async jwtSecret(): Promise<string | undefined> {
    return (await this.auth.get('jwt_secret')) as string | undefined;
  }

  async counter(name: string): Promise<number> {
    return ((await this.meta.get(`counter\x00${name}`)) as number | undefined) ?? 0;
  }

  /** `counter` read synchronously (the memtable or block cache answer in microseconds): for polls that run often. */
  counterSync(name: string): number {
    return (this.meta.getSync(`counter\x00${name}`) as number | undefined) ?? 0;
  }
}

/** What a reset database's directory is renamed to, before it is deleted: `<dir>.wiped-<time>`. */
const SET_ASIDE = '.wiped-';

/** Deletes what an interrupted reset() left beside `path`. */
async function removeSetAside(path: string): Promise<void> {
  const prefix = basename(path) + SET_ASIDE;
  const names = await readdir(dirname(path)).catch(() => [] as string[]);
  for (const name of names) if (name.startsWith(prefix)) await rm(join(dirname(path), name), { recursive: true, force: true });
}

/** A rename is durable once its directory is synced (some filesystems refuse: then it is as durable as they make it). */
async function syncDir(dir: string): Promise<void> {
  const fh = await openFile(dir, 'r');
  try {
    await fh.sync();
  } catch {
    // refused by the filesystem
  } finally {
    await fh.close();
  }
}

/** number[] → StoredVector (float32, little-endian on every platform, so replicas store the same bytes). */
export function encodeVector(vector: ArrayLike<number>, embedderId: string): StoredVector {
  const buf = Buffer.alloc(vector.length * 4);
  for (let i = 0; i < vector.length; i++) buf.writeFloatLE(vector[i], i * 4);
  return { embedder_id: embedderId, dims: vector.length, f32_b64: buf.toString('base64') };
}

export function decodeVector(stored: StoredVector): Float32Array {
  const buf = Buffer.from(stored.f32_b64, 'base64');
  const out = new Float32Array(stored.dims);
  for (let i = 0; i < stored.dims; i++) out[i] = buf.readFloatLE(i * 4);
  return out;
}
