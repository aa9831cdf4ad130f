import type { CommandVector } from './command-vectors';
import type { ApplyFailure } from './errors';
import type { KeyRangeTable, KeySplit } from './key-ranges';
import type { ExportKind, ExportRecord } from './export-format';
import type { AccountRecord, ApiKeyRecord, Edge, EventRecord, Goal, L3Task, MemoryType, MemoryUnit } from './types';
import type { WebhookAttempt, WebhookRecord } from './webhooks';

/**
 * Commands of the replicated log. A command carries everything non-deterministic (ids, times, hashes,
 * secrets, embeddings) so that applying it is a pure function of the state and the command.
 */

/** An event as proposed: everything but `seq`, which apply derives from the log index. */
export type ProposedEvent = Omit<EventRecord, 'seq'>;

export interface IngestCommand {
  type: 'events.ingest';
  user_id: string;
  stream_id: string;
  /** when the node accepted the request (transaction time of the events) */
  at: string;
  idempotency: { key: string; expires_at: string } | null;
  events: ProposedEvent[];
  /** media bytes to store, base64, keyed by content hash; already-stored assets are skipped by apply */
  assets: { asset_id: string; data_b64: string }[];
}

export interface AuthBootstrapCommand {
  type: 'auth.bootstrap';
  account: AccountRecord;
  jwt_secret: string;
}

export interface SetPasswordCommand {
  type: 'auth.set_password';
  username: string;
  password_hash: string;
  at: string;
}

export interface ApiKeyCreateCommand {
  type: 'apikey.create';
  record: ApiKeyRecord;
}

export interface ApiKeyRevokeCommand {
  type: 'apikey.revoke';
  key_id: string;
}

/** A pending-consolidation entry named by its key (`seq`) and the event it stands for. */
export interface PendingRef {
  seq: string;
  event_id: string;
}

/**
 * A unit to create, with its embedding: `f32_b64`, the float32 bytes the state stores, from proposers
 * since issue 27; `vector` (JSON numbers) in logs written before, still applied (command-vectors.ts).
 */
export type UnitWithVector = { unit: MemoryUnit } & CommandVector;

export interface UnitReinforcement {
  unit_id: string;
  /** event ids added to the unit's references (set union) */
  add_references: string[];
  /** the unit's new importance */
  importance: number;
}

export interface UnitRetirement {
  unit_id: string;
  retired_at: string;
  reason: 'superseded';
  superseded_by: string;
}

export interface DroppedEvent {
  event_id: string;
  reason: string;
}

/**
 * The result of consolidating one user's batch of pending events (a consolidation plan, computed by the
 * shard leader with its embedder and LLM). Apply is all or nothing: when any consumed entry is no longer
 * pending, or a unit it reinforces is gone, the plan was made from a state that no longer holds and the
 * command changes nothing (the events still pending are planned again).
 */
export interface ConsolidateCommand {
  type: 'memory.consolidate';
  user_id: string;
  /** planning time (transaction time of new units and edges) */
  at: string;
  consumed: PendingRef[];
  embedder_id: string;
  method: 'offline' | 'llm';
  units: UnitWithVector[];
  reinforced: UnitReinforcement[];
  retired: UnitRetirement[];
  edges: Edge[];
  dropped: DroppedEvent[];
}

/** One user's batch inside `memory.consolidate_users`: a `memory.consolidate` without its type and time. */
export type ConsolidateBatch = Omit<ConsolidateCommand, 'type' | 'at'>;

/**
 * The batches of several users planned in one tick, in one command (issue 27): in a trickle each batch
 * holds a few events, and a command per user paid a proposal, a log entry, an apply and a LevelDB batch
 * for each. Each batch is applied as its own `memory.consolidate` would be, in order, and answers alone:
 * a stale or refused batch writes nothing, the others are applied. One batch per user.
 */
export interface ConsolidateUsersCommand {
  type: 'memory.consolidate_users';
  /** planning time of every batch (transaction time of their new units and edges) */
  at: string;
  /** `users`, as `memory.reinforce` names its per-user entries: a split's fence finds every user of the command */
  users: ConsolidateBatch[];
}

/** Events that could not be consolidated after `attempts` tries: moved from `pending` to `failed`. */
export interface ConsolidationFailedCommand {
  type: 'memory.consolidation_failed';
  user_id: string;
  at: string;
  entries: PendingRef[];
  error: string;
  attempts: number;
}

/** A new content of an existing L2 unit (a community insight or a stream reflection). */
/**
 * An L2 unit's embedding in `memory.insights`: `f32_b64` (float32 base64, '' for none) since issue 27,
 * as consolidation's (command-vectors.ts); `vector` (JSON numbers, null for none) in logs written before.
 */
export type InsightVector = { f32_b64: string; vector?: undefined } | { vector: number[] | null; f32_b64?: undefined };

/** What an update of an existing L2 unit changes, but its vector. */
export interface InsightUnitFields {
  unit_id: string;
  content: string;
  keywords: string[];
  references: string[];
  importance: number;
  valid_time: string;
  memory_type?: MemoryType;
}

/** An update of an existing L2 unit; a vector of '' (or null, the old form) keeps the stored one. */
export type InsightUnitUpdate = InsightUnitFields & InsightVector;

/** L2 insights and reflections of one user (planned by the shard leader). */
export interface InsightsCommand {
  type: 'memory.insights';
  user_id: string;
  at: string;
  embedder_id: string;
  create: ({ unit: MemoryUnit } & InsightVector)[];
  update: InsightUnitUpdate[];
  edges: Edge[];
  removed_edges: string[];
  /** streams reflected on, up to the acceptance time of their last event: clears their "reflection due" mark */
  reflected: { stream_id: string; through: string }[];
}

// ---- L3 goals and tasks, graph edges, memory maintenance (CONTRACT §5, §7, §8) ----

/**
 * A new version of an existing goal or task, with the version it was computed from. Apply writes
 * `after` only when the stored record still equals `before` (compare-and-set): a change made from a
 * state that no longer holds writes nothing, and the proposer reads again and recomputes.
 */
export type L3RecordUpdate =
  | { kind: 'goal'; before: Goal; after: Goal }
  | { kind: 'task'; before: L3Task; after: L3Task };

/** The goals and tasks one L0 event gave (the first goal, else the first task, is "the record it came from"). */
export interface L3EventPlan {
  event_id: string;
  goals: Goal[];
  tasks: L3Task[];
}

/**
 * Goals and tasks planned from a user's consolidated events (by the shard leader, offline or with its
 * LLM), plus the progress of existing parents recomputed over the new tasks. All or nothing: an event
 * already planned, or an update whose `before` no longer holds, makes the command stale.
 */
export interface L3PlanCommand {
  type: 'l3.plan';
  user_id: string;
  at: string;
  planner: 'offline' | 'llm';
  events: L3EventPlan[];
  updates: L3RecordUpdate[];
}

/**
 * `PUT /tasks/:task_id/status`: the task's new version first, then its ancestors' recomputed progress,
 * and on a transition into `completed` the outcome event, stored through the ingest apply path in the
 * same command (so it is atomic, replicated and consolidated like any other event).
 */
export interface TaskStatusCommand {
  type: 'l3.task_status';
  user_id: string;
  at: string;
  task_id: string;
  updates: L3RecordUpdate[];
  sediment: ProposedEvent | null;
}

/** `POST /graph/edges`: one edge between two units of the user. */
export interface EdgeAddCommand {
  type: 'graph.add_edge';
  user_id: string;
  edge: Edge;
}

/**
 * Hard delete: the units gone from every sublevel (record, vector, edges both ways and adjacency,
 * subject and org indexes, counters), and the listed L0 events with them. With `require_units`, a unit
 * that does not exist fails the whole command with 404 (the delete route); without, it is skipped.
 */
export interface MemoryDeleteCommand {
  type: 'memory.delete';
  user_id: string;
  at: string;
  unit_ids: string[];
  event_ids: string[];
  require_units: boolean;
}

/**
 * A semantic forget/update plan as the store keeps it: the fields apply checks, and the whole plan
 * (the memory package's SemanticPlan, opaque here) for the preview and the execution.
 */
export interface SemanticPlanRecord {
  plan_id: string;
  user_id: string;
  org_id: string | null;
  created_at: string;
  expires_at: string;
  plan: Record<string, unknown>;
}

/** A preview: the plan is stored (replicated) until executed or expired; plans expired at `at` are pruned. */
export interface SemanticPlanCommand {
  type: 'semantic.plan';
  at: string;
  record: SemanticPlanRecord;
}

export interface SemanticRetirement {
  unit_id: string;
  retired_at: string;
  retired_reason: 'superseded' | 'forgotten';
  superseded_by: string | null;
}

/**
 * Execution of a stored plan: exactly the changes the plan's preview showed, computed by the proposer
 * (the new unit of an update with its embedding), and the plan consumed. An unknown, executed or
 * expired plan (at `at`) fails with 404; a plan of another user with 403.
 */
export interface SemanticExecuteCommand {
  type: 'semantic.execute';
  user_id: string;
  at: string;
  plan_id: string;
  embedder_id: string;
  retire: SemanticRetirement[];
  delete_unit_ids: string[];
  delete_event_ids: string[];
  create: UnitWithVector | null;
  edges: Edge[];
}

// ---- importance and forgetting (retrieval reinforcement, pruning) ----

/** One unit returned by retrievals since the last reinforcement of its shard. */
export interface RetrievalReinforcement {
  unit_id: string;
  /**
   * Added to the stored importance (apply caps the sum at 1). A delta rather than a new value, so a
   * consolidation that reinforced the unit meanwhile is not overwritten.
   */
  delta: number;
  /** how many retrievals returned it in this batch (added to its `retrievals` count) */
  retrievals: number;
  /** when it was last returned (RFC 3339): its `last_retrieved_at`, where decay restarts */
  at: string;
}

/**
 * Retrieval reinforcement of one shard, batched by the node that served the retrievals: per user, the
 * units returned. Units missing or retired at apply are skipped; nothing else can make it fail.
 */
export interface ReinforceCommand {
  type: 'memory.reinforce';
  at: string;
  /** one entry per user (an array, not an object, so the order of application is the order written) */
  users: { user_id: string; units: RetrievalReinforcement[] }[];
}

/** A unit the pruning job found forgettable, with the state it judged (apply compares, see below). */
export interface PruneCandidate {
  unit_id: string;
  /** stored importance when judged */
  importance: number;
  /** `last_retrieved_at` of its stats when judged (null: never retrieved) */
  last_retrieved_at: string | null;
  /** effective (decayed) importance at `at`, for the record */
  effective_importance: number;
}

/**
 * Hard delete of forgettable L1 units of one user (the shard leader's pruning job). Apply checks each
 * unit again against the state it finds: still an L1, current, not organization knowledge, no insight
 * deriving from it (an incoming DerivedFrom edge), and not reinforced since it was judged (importance
 * and last retrieval unchanged). A unit failing a check is kept and named in the answer; the others go
 * through the hard-delete path of `memory.delete` (events are kept: L0 is the record of what was said).
 */
export interface PruneCommand {
  type: 'memory.prune';
  user_id: string;
  at: string;
  /** effective importance below which units were judged forgettable (for the record) */
  below: number;
  units: PruneCandidate[];
}

// ---- users and their organization (CONTRACT §1 scopes) ----

/**
 * The organization a user belongs to, which decides what org-scoped credentials may act on the user.
 * `set` (an admin's `PUT /v1/users/:user_id/org`) records `org_id`, or clears it with null. `claim`
 * (the first write for a user made with an org-scoped key) records it only when the user has no org
 * and no data yet, so an org key cannot take over an existing user; the answer says which org the
 * user belongs to afterwards, and the proposer refuses the write when it is not the key's.
 */
export interface UserOrgCommand {
  type: 'user.set_org';
  user_id: string;
  org_id: string | null;
  mode: 'set' | 'claim';
  at: string;
}

// ---- import (CONTRACT §14) ----

/**
 * One chunk of an import file (docs/export-format.md): records of users of one shard, validated by the
 * proposer, in file order. Apply writes each record whose id is not stored yet and skips the others
 * (an edge also when one of its units is missing), so importing a file twice changes nothing.
 */
export interface ImportCommand {
  type: 'import.records';
  /** when the node accepted the import (the time of the user → org records it writes) */
  at: string;
  records: ExportRecord[];
}

// ---- webhooks (CONTRACT §13, webhooks.ts) ----

/**
 * A subscription, in the meta shard (the route) or mirrored into another shard by its leader, with the
 * same record. A record (or tombstone) stored under the id already: nothing changes.
 */
export interface WebhookCreateCommand {
  type: 'webhook.create';
  record: WebhookRecord;
  /**
   * The caps apply holds the create to (the proposer's configuration, travelling in the command so every
   * replica decides alike; absent in commands logged before the caps were checked in apply: no cap).
   * `per_creator`: live subscriptions one set of credentials may have made (null: no such cap).
   */
  limits?: { max_subscriptions: number; per_creator: number | null };
}

/** Deletes a subscription: a tombstone replaces it, and its outbox, counters and attempts go. Unknown id: 404. */
export interface WebhookDeleteCommand {
  type: 'webhook.delete';
  webhook_id: string;
  at: string;
}

/** One subscription's progress since the dispatcher's last advance. */
export interface WebhookProgress {
  webhook_id: string;
  /** the outbox is removed up to this seq, inclusive (null: it did not move) */
  through: string | null;
  /** how many of those were delivered (2xx) and how many given up on after the retry window */
  delivered: number;
  expired: number;
  /** the attempts made meanwhile, oldest first (kept for the deliveries route, bounded) */
  attempts: WebhookAttempt[];
}

/**
 * The shard leader's dispatcher moves the delivery positions (batched: every few hundred milliseconds,
 * or when a subscription has as many unadvanced deliveries as it may). A subscription deleted
 * meanwhile is skipped.
 */
export interface WebhookAdvanceCommand {
  type: 'webhook.advance';
  at: string;
  webhooks: WebhookProgress[];
}

// ---- placement of shard groups on nodes (docs/cluster.md "Placement") ----

/** A replica move in flight: `to` joins (learner, then voter), then `from` leaves (null: an addition). */
export interface PlacementMove {
  to: number;
  from: number | null;
  reason: 'repair' | 'drain' | 'balance';
}

/** Where one shard group lives: its voters, learners, the leader last seen, and the move in flight. */
export interface GroupPlacementRecord {
  group_id: number;
  voters: number[];
  learners: number[];
  leader: number | null;
  move: PlacementMove | null;
  /**
   * Replicas removed from nodes and not yet wiped there: the placement loop asks each node to drop
   * the group (with the index of the membership entry that removed it) until it answers. Absent when none.
   */
  drops?: PlacementDrop[];
}

/** A replica to wipe: node `node` (reached at `url`) was removed from the group by the entry at `index`. */
export interface PlacementDrop {
  node: number;
  index: number;
  url: string;
}

/**
 * The placement directory, in the metadata group (shard 0, on every node): the leader of shard 0
 * records what each group's leader reports and the moves it starts, and every node routes a user's
 * requests to the nodes the directory names. Each record replaces the group's previous one.
 */
export interface PlacementCommand {
  type: 'cluster.placement';
  at: string;
  groups: GroupPlacementRecord[];
}

/**
 * The key-range directory (key-ranges.ts), in shard 0: which group holds each range of user keys.
 * Recorded once, at the first start of a data directory (or of one made before ranges existed: the
 * table equivalent to its `fnv1a32 mod shards` layout); a table already recorded is kept.
 */
export interface KeyRangesCommand {
  type: 'cluster.ranges';
  at: string;
  table: KeyRangeTable;
}

/**
 * A split of a group's key range in the key-range directory (shard 0), in three steps: `begin` records
 * the split in flight (routing does not change), `commit` switches the moving half to the new group in
 * one apply (every node routes by the new table from that entry on), `abort` takes a split not
 * committed out of flight (its groups are put back, then `cleared` forgets it), `dropped` records that the old group deleted the moved records. Retried steps answer `already_…` (docs/cluster.md "Splitting a group").
 */
export interface KeySplitCommand {
  type: 'cluster.split';
  at: string;
  phase: 'begin' | 'commit' | 'abort' | 'cleared' | 'dropped';
  split: KeySplit;
}

/**
 * Removes a group merged away (retired) once its records are dropped and its webhook outbox is empty
 * (docs/cluster.md "Removing a retired group"), in shard 0: the group is listed as removed (never opened
 * again; its id stays retired, never given to a new group) and its placement record goes. Every node
 * wipes its replica when it applies this. `already_removed` on a retry; 409 for a group not retired, or
 * one a split or merge not finished names.
 */
export interface RemoveGroupCommand {
  type: 'cluster.remove_group';
  at: string;
  group: number;
}

/** One record of a state machine's LevelDB, by sublevel name (a half of a group's state, range-split.ts). */
export type RangeRecord = [sublevel: string, key: string, value: unknown];

/** The keys a group hands over in a split: from `start` to `end` (exclusive) under the table's `base`. */
export interface RangeFenceSpec {
  base: number;
  start: number;
  end: number;
  new_group: number;
}

/**
 * In the group being split: from this entry on, the group refuses every command about a user of the
 * moving half (503 `range_moving`: the records are final, the new group is being seeded from them).
 */
export interface RangeFenceCommand {
  type: 'range.fence';
  at: string;
  fence: RangeFenceSpec;
}

/** In the group being split, when the split is aborted before its commit: the fence is lifted. */
export interface RangeUnfenceCommand {
  type: 'range.unfence';
  at: string;
  fence: RangeFenceSpec;
}

/**
 * In the receiving group: records of the moving range, as the group handing it over stores them (read
 * after its fence, range-split.ts). `seq_shift` (the receiving group's `range.receive` answer) moves
 * every copied event's number into the block the receiving group reserved: a merge's receiving group has
 * events of its own, numbered like the copied ones, and `pending` and `failed` are keyed by that number.
 * Only while that receiving fence is up. Without `seq_shift` (the first form), `seq_floor` raises the
 * group's numbering above the handing group's at its fence instead, and the copied numbers are kept.
 */
export interface RangeSeedCommand {
  type: 'range.seed';
  at: string;
  seq_floor: number;
  seq_shift?: number;
  records: RangeRecord[];
}

/**
 * In the receiving group of a split or merge, before the copy: the incoming range is fenced here too
 * (nothing about its users applies but the copy, until `range.unfence` after the commit or abort), and a
 * block of `span` event numbers is reserved for the copied events (the answer's `shift`).
 */
export interface RangeReceiveCommand {
  type: 'range.receive';
  at: string;
  fence: RangeFenceSpec;
  span: number;
}

/**
 * In the receiving group of an aborted split or merge: deletes up to `limit` records of the range's
 * users (the copy made so far; whole users at a time), answers whether any is left.
 */
export interface RangeClearCommand {
  type: 'range.clear';
  at: string;
  fence: RangeFenceSpec;
  limit: number;
}

/**
 * In the group that was split, after the directory's commit: deletes up to `limit` records of the
 * moved half (answers whether any is left), and marks the fence `moved`.
 */
export interface RangeDropCommand {
  type: 'range.drop';
  at: string;
  fence: RangeFenceSpec;
  limit: number;
}

/**
 * What any command may carry besides its own fields: the W3C `traceparent` of the request that proposed
 * it (tracing on only), so every replica's apply span joins the request's trace. Apply never reads it:
 * it changes no state, and the state images of replicas stay equal whatever it holds.
 */
export interface CommandTrace {
  trace?: string;
}

export type Command = CommandTrace & (
  | IngestCommand
  | AuthBootstrapCommand
  | SetPasswordCommand
  | ApiKeyCreateCommand
  | ApiKeyRevokeCommand
  | ConsolidateCommand
  | ConsolidateUsersCommand
  | ConsolidationFailedCommand
  | InsightsCommand
  | L3PlanCommand
  | TaskStatusCommand
  | EdgeAddCommand
  | MemoryDeleteCommand
  | SemanticPlanCommand
  | SemanticExecuteCommand
  | ReinforceCommand
  | PruneCommand
  | UserOrgCommand
  | ImportCommand
  | WebhookCreateCommand
  | WebhookDeleteCommand
  | WebhookAdvanceCommand
  | PlacementCommand
  | KeyRangesCommand
  | KeySplitCommand
  | RemoveGroupCommand
  | RangeFenceCommand
  | RangeUnfenceCommand
  | RangeSeedCommand
  | RangeDropCommand
  | RangeReceiveCommand
  | RangeClearCommand
);

export type CommandType = Command['type'];
/** The command of one type. */
export type CommandOf<K extends CommandType> = Extract<Command, { type: K }>;

/** Answer of `events.ingest`: the event ids in request order, and whether this was an idempotent replay. */
export interface IngestAnswer {
  event_ids: string[];
  replayed: boolean;
}

/** Answer of `memory.consolidate`. `applied: false` means stale (nothing written); `stale` says why. */
export interface ConsolidateAnswer {
  applied: boolean;
  stale: string | null;
  consumed: number;
  units_created: number;
  reinforced: number;
  retired: number;
  edges: number;
  dropped: number;
}

/** Answer of `memory.consolidate_users`: each batch's own answer, in the command's order. */
export interface ConsolidateUsersAnswer {
  users: (ConsolidateAnswer | ApplyFailure)[];
}

export interface ConsolidationFailedAnswer {
  failed: number;
}

export interface InsightsAnswer {
  created: number;
  updated: number;
  edges: number;
  removed_edges: number;
}

/** Answer of `l3.plan`. `applied: false` means stale (nothing written). */
export interface L3PlanAnswer {
  applied: boolean;
  stale: string | null;
  goals_created: number;
  tasks_created: number;
  updated: number;
}

/** Answer of `l3.task_status`: the task as stored after the command, and the outcome event's id when one was sedimented. */
export interface TaskStatusAnswer {
  applied: boolean;
  stale: string | null;
  task: L3Task | null;
  sediment_event_id: string | null;
}

export interface EdgeAddAnswer {
  edge_id: string;
}

/**
 * What a delete removed. Derived in-memory indexes (text, vectors, graph) listen to applied commands
 * and drop `deleted_unit_ids`; `deleted_edge_ids` are the edges removed with them.
 */
export interface MemoryDeleteAnswer {
  deleted_unit_ids: string[];
  deleted_event_ids: string[];
  deleted_edge_ids: string[];
}

/**
 * What an execution changed. For derived indexes: `retired_unit_ids` stopped being current (retired_at
 * set: hidden from retrieval, still visible to `as_of` before it), `deleted_unit_ids` are gone,
 * `created_unit_ids` are new (with their vector stored).
 */
export interface SemanticExecuteAnswer extends MemoryDeleteAnswer {
  retired_unit_ids: string[];
  created_unit_ids: string[];
  edges: number;
}

export interface SemanticPlanAnswer {
  plan_id: string;
  pruned: number;
}

export interface ReinforceAnswer {
  /** per user, the units whose importance and stats were written */
  reinforced: { user_id: string; unit_ids: string[] }[];
  /** entries skipped: unit missing or retired */
  skipped: number;
}

/** What pruning removed, and the units it kept after all (with the check that kept them). */
export interface PruneAnswer extends MemoryDeleteAnswer {
  kept: { unit_id: string; reason: string }[];
}

/** Answer of `user.set_org`: the user's org after the command, and whether the command changed it. */
export interface UserOrgAnswer {
  org_id: string | null;
  changed: boolean;
}

/** Answer of `import.records`: per record kind, how many were written and how many skipped. */
export interface ImportAnswer {
  imported: Record<ExportKind, number>;
  skipped: Record<ExportKind, number>;
}

/** Answer of `webhook.create`: false when a record (or tombstone) had the id already. */
export interface WebhookCreateAnswer {
  created: boolean;
}

export interface WebhookDeleteAnswer {
  webhook_id: string;
  /** deliveries still waiting that went with it */
  discarded: number;
}

export interface WebhookAdvanceAnswer {
  /** per subscription advanced: outbox entries removed */
  advanced: { webhook_id: string; removed: number }[];
  /** progress entries of subscriptions that no longer exist */
  skipped: number;
}
