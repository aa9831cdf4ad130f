/**
 * The named reads one shard group answers for a question about all of them (cluster/shard-reads.ts):
 * each is the per-group half of one cross-shard operation, run on the local replica when this node
 * holds the group, else on a node that does, by name, with its arguments as JSON. So every entry's
 * arguments and result are plain JSON values (no undefined inside, no Map, no typed array: a result
 * must read the same whether it was computed here or parsed from another node's answer), and `parse`
 * checks arguments that came over the wire (400 `validation_failed` naming the field; never a 500).
 */
import {
  KNOWLEDGE_SORTS, knowledgeDetail, knowledgePartial, listKnowledgeShard, orgKnowledgeFromUnits, parseKnowledgeQuery,
  type KnowledgeQuery,
} from '@strata/memory/org';
import {
  badRequest, getSemanticPlan, listUserIds, orgUnitsOf, pendingOfUsers, pendingSummary, readFences, recentAttempts, userCounts, userHasData,
  userOrg, usersOfOrg, webhookState, type FailedRecord, type PendingSummary, type StateDb,
} from '@strata/store';
import { orgIndexEntries } from '../indexes/derived';

export interface ReadQuery<A, R> {
  /** the arguments received from another node, checked (throws 400) */
  parse(args: unknown): A;
  /**
   * `owns`: whether the node's key-range directory assigns a user to this group. A listing keeps only
   * those: between a hand-over's copy and the old group's drop both groups hold the moved users'
   * records, and a listing over every group counted them twice (a split's new group holds its copy
   * from the seeding on; the old group keeps its own until the drop after the commit).
   */
  run(db: StateDb, args: A, owns: (userId: string) => boolean): Promise<R>;
}

/** An entry of the registry, its argument type inferred from `parse` and checked against `run`. */
const query = <A, R>(entry: ReadQuery<A, R>): ReadQuery<A, R> => entry;

const invalid = (name: string, message: string) => badRequest('validation_failed', `args.${name} ${message}.`, [{ path: `/args/${name}`, message }]);

function record(args: unknown): Record<string, unknown> {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) throw badRequest('validation_failed', 'args must be an object.', [{ path: '/args', message: 'must be an object' }]);
  return args as Record<string, unknown>;
}

/**
 * An id as the asking node has it: a non-empty string. Not the contract's identifier rule (1 to 256
 * bytes): whatever a client could get past its own node's checks must pass here too, or a request
 * valid on one node would fail on another; the bound only keeps a body from being absurd.
 */
const isId = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= 8192;

function id(a: Record<string, unknown>, name: string): string {
  const v = a[name];
  if (!isId(v)) throw invalid(name, 'must be a non-empty string');
  return v;
}

function ids(a: Record<string, unknown>, name: string, nullable: true): string[] | null;
function ids(a: Record<string, unknown>, name: string, nullable: false): string[];
function ids(a: Record<string, unknown>, name: string, nullable: boolean): string[] | null {
  const v = a[name];
  if (v === null && nullable) return null;
  if (!Array.isArray(v) || !v.every(isId)) throw invalid(name, nullable ? 'must be an array of identifiers or null' : 'must be an array of identifiers');
  return v;
}

function int(a: Record<string, unknown>, name: string, min: number, max: number): number {
  const v = a[name];
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw invalid(name, `must be an integer from ${min} to ${max}`);
  return v;
}

/** A cursor as a client sent it (any string), or null. */
function optionalString(a: Record<string, unknown>, name: string): string | null {
  const v = a[name];
  if (v !== null && typeof v !== 'string') throw invalid(name, 'must be a string or null');
  return v;
}

/** A failed record's seq (21 digits, status.ts cursors) or null: from the first. */
function seq(a: Record<string, unknown>, name: string): string | null {
  const v = a[name];
  if (v === null) return null;
  if (typeof v !== 'string' || !/^\d{21}$/.test(v)) throw invalid(name, 'must be a 21-digit sequence or null');
  return v;
}

/**
 * A parsed knowledge query as it travels (the cursor decoded): checked by encoding it back to the
 * raw query string form and parsing that with the route's own parser, so the rules are the route's.
 */
function knowledgeQuery(a: Record<string, unknown>, name: string): KnowledgeQuery {
  const q = a[name];
  if (typeof q !== 'object' || q === null || Array.isArray(q)) throw invalid(name, 'must be an object');
  const { q: text, contributor, source_type, sort, limit, cursor } = q as Record<string, unknown>;
  let raw: string | null = null;
  if (cursor !== null) {
    const c = cursor as { sort?: unknown; key?: unknown; id?: unknown } | undefined;
    if (typeof c !== 'object' || c === null) throw invalid(`${name}/cursor`, 'must be an object or null');
    raw = Buffer.from(JSON.stringify({ s: c.sort, k: c.key, id: c.id }), 'utf8').toString('base64url');
  }
  if (!(KNOWLEDGE_SORTS as readonly unknown[]).includes(sort)) throw invalid(`${name}/sort`, `must be one of ${KNOWLEDGE_SORTS.join(', ')}`);
  for (const [k, v] of Object.entries({ q: text, contributor, source_type })) if (v !== null && typeof v !== 'string') throw invalid(`${name}/${k}`, 'must be a string or null');
  if (typeof limit !== 'number') throw invalid(`${name}/limit`, 'must be an integer');
  return parseKnowledgeQuery({ q: text, contributor, source_type, sort, limit, cursor: raw });
}

/**
 * Whose data a scoped reader sees, as credentials carry it (auth/scope.ts `usersInScope`): with an
 * org, the users recorded for it, limited to `user_ids` when listed too; else `user_ids` (null: every
 * user). Resolved by each group, where its users' org records are, so the org's whole member list
 * never travels between nodes.
 */
export interface ReadScope {
  org_id: string | null;
  user_ids: string[] | null;
}

function scope(a: Record<string, unknown>): ReadScope {
  const s = a.scope;
  if (typeof s !== 'object' || s === null || Array.isArray(s)) throw invalid('scope', 'must be an object {org_id, user_ids}');
  const r = s as Record<string, unknown>;
  if (r.org_id !== null && !isId(r.org_id)) throw invalid('scope/org_id', 'must be an identifier or null');
  if (r.user_ids !== null && !(Array.isArray(r.user_ids) && r.user_ids.every(isId))) throw invalid('scope/user_ids', 'must be an array of identifiers or null');
  return { org_id: r.org_id as string | null, user_ids: r.user_ids as string[] | null };
}

/** The users of this group a scope covers, of those the group owns (null: every user). */
async function usersInScope(db: StateDb, s: ReadScope, owns: (userId: string) => boolean): Promise<string[] | null> {
  if (s.org_id === null) return s.user_ids === null ? null : s.user_ids.filter(owns);
  const members = (await usersOfOrg(db, s.org_id)).filter(owns);
  return s.user_ids === null ? members : members.filter((u) => s.user_ids!.includes(u));
}

/**
 * The group's backlog, of the users it owns: its counters while no range is handed over from or to it
 * (then it holds no one else's records), else counted over its pending and failed events.
 */
async function ownBacklog(db: StateDb, owns: (userId: string) => boolean): Promise<PendingSummary> {
  if ((await readFences(db)).length === 0) return pendingSummary(db);
  let pending = 0;
  let oldest: string | null = null;
  for await (const e of db.pending.values()) {
    if (!owns(e.user_id)) continue;
    pending++;
    if (oldest === null) oldest = e.accepted_at; // in acceptance order
  }
  let failed = 0;
  for await (const e of db.failed.values()) if (owns(e.user_id)) failed++;
  return { pending, failed, oldest_accepted_at: oldest };
}

const orgRecords = async (db: StateDb, orgId: string, owns: (userId: string) => boolean) =>
  orgKnowledgeFromUnits(orgId, (await orgUnitsOf(db, orgId)).filter((u) => owns(u.user_id)));

/** Registered reads: the name is what travels; `ShardReads.each(name, args)` is typed by the entry. */
export const READ_QUERIES = {
  /** auth/user-orgs.ts: the users recorded for an org */
  usersOfOrg: query({
    parse: (args: unknown) => ({ org_id: id(record(args), 'org_id') }),
    run: async (db: StateDb, a: { org_id: string }, owns: (userId: string) => boolean) => (await usersOfOrg(db, a.org_id)).filter(owns),
  }),
  /** auth/user-orgs.ts: one user's org record (scope checks of requests not routed by user) */
  userOrg: query({
    parse: (args: unknown) => ({ user_id: id(record(args), 'user_id') }),
    run: (db: StateDb, a: { user_id: string }) => userOrg(db, a.user_id),
  }),
  userHasData: query({
    parse: (args: unknown) => ({ user_id: id(record(args), 'user_id') }),
    run: (db: StateDb, a: { user_id: string }) => userHasData(db, a.user_id),
  }),
  /** operations/users.ts: the group's first `limit` user ids after the cursor */
  userIds: query({
    parse: (args: unknown) => {
      const a = record(args);
      return { after: optionalString(a, 'after'), limit: int(a, 'limit', 1, 10_001) };
    },
    run: (db: StateDb, a: { after: string | null; limit: number }) => listUserIds(db, a.after, a.limit),
  }),
  /** operations/users.ts: the org and counts of some users of the group */
  userRows: query({
    parse: (args: unknown) => ({ user_ids: ids(record(args), 'user_ids', false) }),
    run: (db: StateDb, a: { user_ids: string[] }) => Promise.all(a.user_ids.map(async (user_id) => {
      const [org_id, counts] = await Promise.all([userOrg(db, user_id), userCounts(db, user_id)]);
      return { user_id, org_id, counts };
    })),
  }),
  /** operations/status.ts: the backlog of the group, of the users in `scope` (see usersInScope) */
  pending: query({
    parse: (args: unknown) => ({ scope: scope(record(args)) }),
    run: async (db: StateDb, a: { scope: ReadScope }, owns: (userId: string) => boolean) => {
      const users = await usersInScope(db, a.scope, owns);
      return users === null ? ownBacklog(db, owns) : pendingOfUsers(db, users);
    },
  }),
  /**
   * operations/status.ts: up to `limit` failed records of the users in `scope`, after `after` (a seq
   * of this group; null: from the first), in seq order.
   */
  failed: query({
    parse: (args: unknown) => {
      const a = record(args);
      return { after: seq(a, 'after'), limit: int(a, 'limit', 1, 10_001), scope: scope(a) };
    },
    run: async (db: StateDb, a: { after: string | null; limit: number; scope: ReadScope }, owns: (userId: string) => boolean) => {
      const inScope = await usersInScope(db, a.scope, owns);
      const users = inScope === null ? null : new Set(inScope);
      const out: { seq: string; record: FailedRecord }[] = [];
      for await (const [key, value] of db.failed.iterator(a.after === null ? {} : { gt: a.after })) {
        if (users ? !users.has(value.user_id) : !owns(value.user_id)) continue;
        out.push({ seq: key, record: value });
        if (out.length === a.limit) break;
      }
      return out;
    },
  }),
  /** operations/org.ts: the group's page of the org's knowledge (merged with mergeKnowledgePages) */
  orgKnowledgePage: query({
    parse: (args: unknown) => {
      const a = record(args);
      return { org_id: id(a, 'org_id'), query: knowledgeQuery(a, 'query') };
    },
    run: async (db: StateDb, a: { org_id: string; query: KnowledgeQuery }, owns: (userId: string) => boolean) => listKnowledgeShard(await orgRecords(db, a.org_id, owns), a.query),
  }),
  orgKnowledgePartial: query({
    parse: (args: unknown) => ({ org_id: id(record(args), 'org_id') }),
    run: async (db: StateDb, a: { org_id: string }, owns: (userId: string) => boolean) => knowledgePartial(await orgRecords(db, a.org_id, owns)),
  }),
  /** one knowledge item's detail, or null when the group has none with this id */
  orgKnowledgeItem: query({
    parse: (args: unknown) => {
      const a = record(args);
      return { org_id: id(a, 'org_id'), id: id(a, 'id') };
    },
    run: async (db: StateDb, a: { org_id: string; id: string }, owns: (userId: string) => boolean) => {
      const found = (await orgRecords(db, a.org_id, owns)).find((r) => r.unit.id === a.id);
      return found ? knowledgeDetail(found) : null;
    },
  }),
  /** indexes/retrieval-service.ts: the org's units with what indexing them needs */
  orgIndexEntries: query({
    parse: (args: unknown) => ({ org_id: id(record(args), 'org_id') }),
    run: (db: StateDb, a: { org_id: string }, owns: (userId: string) => boolean) => orgIndexEntries(db, a.org_id, {}, owns),
  }),
  /** operations/webhooks.ts: the subscription's counters and most recent attempts in the group */
  webhookDeliveries: query({
    parse: (args: unknown) => {
      const a = record(args);
      return { webhook_id: id(a, 'webhook_id'), limit: int(a, 'limit', 1, 10_000) };
    },
    run: async (db: StateDb, a: { webhook_id: string; limit: number }) => {
      const { queued, delivered, dropped, expired } = await webhookState(db, a.webhook_id);
      return { queued, delivered, dropped, expired, attempts: await recentAttempts(db, a.webhook_id, a.limit) };
    },
  }),
  /** operations/maintenance.ts: whose a semantic plan is (null: not in this group) */
  semanticPlanOwner: query({
    parse: (args: unknown) => ({ plan_id: id(record(args), 'plan_id') }),
    run: async (db: StateDb, a: { plan_id: string }) => (await getSemanticPlan(db, a.plan_id))?.user_id ?? null,
  }),
};

export type ReadName = keyof typeof READ_QUERIES;
export type ReadArgs<N extends ReadName> = (typeof READ_QUERIES)[N] extends ReadQuery<infer A, unknown> ? A : never;
export type ReadResult<N extends ReadName> = (typeof READ_QUERIES)[N] extends ReadQuery<infer _A, infer R> ? R : never;

export function isReadName(name: unknown): name is ReadName {
  return typeof name === 'string' && Object.prototype.hasOwnProperty.call(READ_QUERIES, name);
}

/** Runs a registered read on a local replica (typed; the registry's entries differ in types, hence the one cast). */
export function runRead<N extends ReadName>(name: N, db: StateDb, args: ReadArgs<N>, owns: (userId: string) => boolean): Promise<ReadResult<N>> {
  return (READ_QUERIES[name] as unknown as ReadQuery<ReadArgs<N>, ReadResult<N>>).run(db, args, owns);
}

/** Checks the arguments of a read received from another node (400 when they do not fit). */
export function parseReadArgs<N extends ReadName>(name: N, args: unknown): ReadArgs<N> {
  return (READ_QUERIES[name] as unknown as ReadQuery<ReadArgs<N>, unknown>).parse(args);
}
