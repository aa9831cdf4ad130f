/**
 * The simulator's proposer: builds one realistic command at a time, of every type the store defines,
 * the way the server does it: it reads the state of the replica that proposes (the leader) and puts
 * everything non-deterministic (ids, times, hashes, embeddings, chosen from the seed) into the command.
 * Some commands are built on purpose from a state that no longer holds (a stale compare-and-set, an
 * already consumed pending entry, an expired plan, a unit deleted meanwhile) or are re-proposed verbatim
 * (a client retry after an unknown outcome), because the real log carries those too.
 */
import { createHash } from 'node:crypto';
import type {
  Command, ConsolidateBatch, ConsolidateCommand, ConsolidateUsersCommand, InsightsCommand, InsightVector, L3EventPlan, L3RecordUpdate, PendingRef, ProposedEvent, UnitWithVector, WebhookProgress,
} from '../commands';
import { commandVector } from '../command-vectors';
import { encodeVector, type StateDb } from '../db';
import type { EventConsolidation, ExportRecord } from '../export-format';
import { prefixRange, SEP } from '../keys';
import { fnv1a32, freeGroupId, initialRanges, middleOf, rangeKey, rangesOfGroup } from '../key-ranges';
import { readKeyRanges, readRetiredGroups } from '../apply/key-ranges';
import { readHalf } from '../range-split';
import { RELATIONS, TASK_STATUSES, type Edge, type Goal, type L3Task, type MemoryUnit, type TaskStatus } from '../types';
import { WEBHOOK_KINDS, isLiveWebhook, outboxPage, type WebhookAttempt, type WebhookFilterKind } from '../webhooks';
import type { Draw } from './draw';

// Small pools, so commands meet each other's records: corrections of one subject, claims of one user, replays of one key.
// Ids with characters above U+00FF and astral ones: keys compare as UTF-8 bytes, not UTF-16 units.
const USERS = ['u1', 'u2', 'ü3', '𝄞4'];
const STREAMS = ['s1', 's2'];
const ORGS = ['org-a', 'org-b'];
const SUBJECTS = ['user', 'alice', 'café', `odd${SEP}subject`];
const ATTRIBUTES = ['address', 'employer', 'favorite_color'];
const ACCOUNTS = ['admin', 'ops'];
const DIMS = 8;

const round3 = (x: number): number => Math.round(x * 1000) / 1000;
const iso = (ms: number): string => new Date(ms).toISOString();

export type CommandKind = Command['type'] | 'retry';

/** Relative frequency of each command kind (a retry re-proposes one of the last commands verbatim). */
const WEIGHTS: [CommandKind, number][] = [
  ['events.ingest', 21], ['memory.consolidate_users', 3], ['memory.consolidate', 14], ['memory.consolidation_failed', 2], ['memory.insights', 6],
  ['l3.plan', 6], ['l3.task_status', 8], ['graph.add_edge', 5], ['memory.delete', 3], ['semantic.plan', 3],
  ['semantic.execute', 3], ['memory.reinforce', 5], ['memory.prune', 3], ['user.set_org', 3], ['auth.bootstrap', 1],
  ['auth.set_password', 1], ['apikey.create', 2], ['apikey.revoke', 1], ['import.records', 4], ['webhook.create', 2],
  ['webhook.delete', 1], ['webhook.advance', 5], ['cluster.placement', 1], ['cluster.ranges', 1], ['cluster.split', 2], ['cluster.remove_group', 1],
  ['range.fence', 1], ['range.unfence', 2], ['range.seed', 1], ['range.drop', 1], ['range.receive', 1], ['range.clear', 1], ['retry', 3],
];
const TOTAL = WEIGHTS.reduce((s, [, w]) => s + w, 0);

/** The command kinds the workload builds: every member of `Command['type']`. */
export const COMMAND_KINDS: readonly Command['type'][] = WEIGHTS.map(([k]) => k).filter((k): k is Command['type'] => k !== 'retry');

async function collect<V>(it: AsyncIterable<V>, limit = 1000): Promise<V[]> {
  const out: V[] = [];
  for await (const v of it) {
    out.push(v);
    if (out.length >= limit) break;
  }
  return out;
}

const tail = (key: string): string => key.slice(key.lastIndexOf(SEP) + 1);

export class Workload {
  private readonly recent: Command[] = [];
  /** versions of tasks seen earlier: a stale `before` for a compare-and-set that must not write */
  private readonly oldTasks: L3Task[] = [];
  /** pending entries consumed earlier: a consolidation plan made from a state that no longer holds */
  private readonly consumedRefs: PendingRef[] = [];
  private counter = 0;
  /** which form the next command vector takes (withVector) */
  private vectorForms = 0;

  /** `without`: kinds never built (a test that builds a state to split leaves out the split's own commands) */
  constructor(private readonly draw: Draw, private readonly without: ReadonlySet<CommandKind> = new Set()) {}

  /** The next command, built from the proposer's state at the proposer's clock `nowMs`. */
  async next(db: StateDb, nowMs: number): Promise<Command> {
    for (let attempt = 0; attempt < 8; attempt++) {
      const cmd = await this.build(this.kind(), db, nowMs);
      if (cmd) {
        this.recent.push(cmd);
        if (this.recent.length > 20) this.recent.shift();
        return cmd;
      }
    }
    return this.ingest(nowMs);
  }

  private kind(): CommandKind {
    let r = this.draw.int(TOTAL);
    for (const [k, w] of WEIGHTS) {
      if (r < w) return this.without.has(k) ? 'events.ingest' : k;
      r -= w;
    }
    return 'events.ingest';
  }

  /** A command of that kind, or null when the state offers nothing to build it from. */
  private async build(kind: CommandKind, db: StateDb, now: number): Promise<Command | null> {
    const d = this.draw;
    const user = d.pick(USERS);
    const at = iso(now);
    switch (kind) {
      case 'retry': {
        // What a proposer re-proposes after an unknown outcome. Never an ingest without an idempotency key:
        // the server answers that case with a 503 and the client's retry gets new event ids.
        const again = this.recent.filter((c) => c.type !== 'events.ingest' || c.idempotency !== null);
        return again.length ? d.pick(again) : null;
      }
      case 'events.ingest':
        return this.ingest(now);
      case 'memory.consolidate':
        return this.consolidate(db, user, now);
      case 'memory.consolidate_users':
        return this.consolidateUsers(db, now);
      case 'memory.consolidation_failed': {
        const pending = await this.pendingOf(db, user);
        if (!pending.length) return null;
        return { type: 'memory.consolidation_failed', user_id: user, at, entries: d.some(pending, 3), error: 'llm timeout', attempts: 1 + d.int(5) };
      }
      case 'memory.insights':
        return this.insights(db, user, now);
      case 'l3.plan':
        return this.plan(db, user, now);
      case 'l3.task_status':
        return this.taskStatus(db, user, now);
      case 'graph.add_edge': {
        const units = await this.unitsOf(db, user);
        if (units.length < 2) return null;
        const [a, b] = d.some(units, 2);
        const edge = this.edge(user, a.id, d.chance(0.05) ? a.id : d.chance(0.05) ? d.uuid() : b.id, now);
        if (d.chance(0.05)) edge.weight = 1.5;
        return { type: 'graph.add_edge', user_id: user, edge };
      }
      case 'memory.delete': {
        const units = await this.unitsOf(db, user);
        const events = await this.eventIdsOf(db, user);
        const unitIds = d.some(units, d.int(3)).map((u) => u.id);
        if (d.chance(0.1)) unitIds.push(d.uuid());
        return { type: 'memory.delete', user_id: user, at, unit_ids: unitIds, event_ids: d.some(events, d.int(3)), require_units: d.chance(0.5) };
      }
      case 'semantic.plan': {
        const units = await this.unitsOf(db, user);
        const expires = now + d.pick([2_000, 30_000, 3_600_000]);
        return {
          type: 'semantic.plan', at,
          record: { plan_id: d.uuid(), user_id: user, org_id: null, created_at: at, expires_at: iso(expires), plan: { kind: d.pick(['forget', 'update']), unit_ids: d.some(units, 3).map((u) => u.id) } },
        };
      }
      case 'semantic.execute':
        return this.execute(db, now);
      case 'memory.reinforce': {
        const users = [];
        for (const u of d.some(USERS, 1 + d.int(2))) {
          const ids = (await this.unitsOf(db, u)).map((x) => x.id);
          if (d.chance(0.2)) ids.push(d.uuid());
          const units = d.some(ids, 1 + d.int(3)).map((unit_id) => ({ unit_id, delta: round3(d.float() * 0.2), retrievals: 1 + d.int(3), at: iso(now - d.int(5000)) }));
          if (units.length) users.push({ user_id: u, units });
        }
        return users.length ? { type: 'memory.reinforce', at, users } : null;
      }
      case 'memory.prune': {
        const l1 = (await this.unitsOf(db, user)).filter((u) => u.level === 1);
        if (!l1.length) return null;
        const units = [];
        for (const u of d.some(l1, 3)) {
          const stats = await db.unitStats.get(`${user}${SEP}${u.id}`);
          // Mostly judged on the state as it is; sometimes on a state a reinforcement changed since.
          units.push({
            unit_id: u.id, importance: d.chance(0.85) ? u.importance : round3(d.float()),
            last_retrieved_at: stats?.last_retrieved_at ?? null, effective_importance: round3(u.importance / 2),
          });
        }
        return { type: 'memory.prune', user_id: user, at, below: 0.1, units };
      }
      case 'user.set_org':
        return { type: 'user.set_org', user_id: user, org_id: d.chance(0.2) ? null : d.pick(ORGS), mode: d.chance(0.5) ? 'claim' : 'set', at };
      case 'auth.bootstrap':
        return {
          type: 'auth.bootstrap', jwt_secret: d.hex(32),
          account: { username: d.pick(ACCOUNTS), password_hash: `scrypt$16384$8$1$${d.hex(8)}$${d.hex(16)}`, must_change_password: true, updated_at: at },
        };
      case 'auth.set_password':
        return { type: 'auth.set_password', username: d.pick([...ACCOUNTS, 'nobody']), password_hash: `scrypt$16384$8$1$${d.hex(8)}$${d.hex(16)}`, at };
      case 'apikey.create':
        return {
          type: 'apikey.create',
          record: {
            key_id: d.uuid(), key_hash: d.hex(32), key_prefix: `sk_${d.hex(3)}`, name: d.chance(0.5) ? `key ${this.counter++}` : null,
            org_id: d.chance(0.3) ? d.pick(ORGS) : null, user_ids: d.chance(0.3) ? d.some(USERS, 2) : null, role: d.pick(['read', 'write', 'admin'] as const), created_at: at,
          },
        };
      case 'apikey.revoke': {
        const ids = (await collect(db.auth.keys(prefixRange('apikey')), 50)).map(tail);
        return { type: 'apikey.revoke', key_id: ids.length && d.chance(0.8) ? d.pick(ids) : d.uuid() };
      }
      case 'import.records':
        return this.importRecords(db, user, now);
      case 'webhook.create':
        return this.webhookCreate(db, now);
      case 'webhook.delete': {
        const ids = [...(await collect(db.webhooks.keys(), 50))];
        return { type: 'webhook.delete', webhook_id: ids.length && d.chance(0.85) ? d.pick(ids) : d.uuid(), at };
      }
      case 'webhook.advance':
        return this.webhookAdvance(db, now);
      case 'cluster.ranges': {
        // the first valid table stays; sometimes invalid (a range out of order): refused on every replica
        const table = initialRanges(d.int(8) + 1);
        if (d.chance(0.1) && table.ranges.length > 1) table.ranges.reverse();
        return { type: 'cluster.ranges', at, table };
      }
      case 'cluster.split': {
        // a split of the recorded table's group at its middle, a phase at random (some refused: not begun, or stale)
        const table = await readKeyRanges(db);
        const group = table ? d.pick(table.ranges).group : 0;
        const point = (table && middleOf(table, group)) ?? 1;
        const newGroup = (table && freeGroupId(table)) ?? 255;
        const phase = d.pick(['begin', 'begin', 'commit', 'abort', 'cleared', 'dropped'] as const);
        // sometimes a merge of the group into its left neighbour (its whole range), or one out of date
        const ranges = table ? rangesOfGroup(table, group) : [];
        const left = table?.ranges.findIndex((r) => r.group === group) ?? -1;
        if (table && left > 0 && ranges.length === 1 && d.chance(0.3)) {
          const end = d.chance(0.9) ? ranges[0].end : ranges[0].end - 1;
          return { type: 'cluster.split', at, phase, split: { group, point: ranges[0].start, new_group: table.ranges[left - 1].group, merge: { end } } };
        }
        return { type: 'cluster.split', at, phase, split: { group, point, new_group: newGroup } };
      }
      case 'cluster.remove_group': {
        // a retired group (when one is) or any group: mostly refused (not retired), sometimes out of range
        const retired = await readRetiredGroups(db);
        const group = retired.length && d.chance(0.7) ? d.pick(retired) : d.chance(0.1) ? 0 : d.int(8) + 1;
        return { type: 'cluster.remove_group', at, group };
      }
      case 'range.fence':
      case 'range.unfence':
      case 'range.drop':
      case 'range.receive':
      case 'range.clear':
      case 'range.seed': {
        // a fence over one user's key only (u1's: the others stay writable however the run goes); a drop marks it moved
        const fence = { base: 4, start: rangeKey(fnv1a32(USERS[0]), 4), end: rangeKey(fnv1a32(USERS[0]), 4) + 1, new_group: 5 };
        if (kind === 'range.drop' || kind === 'range.clear') return { type: kind, at, fence, limit: d.int(20) + 1 };
        if (kind === 'range.receive') return { type: kind, at, fence, span: d.int(50) };
        if (kind !== 'range.seed') return { type: kind, at, fence };
        // records of the fenced user as the proposer's replica holds them (written back here: counted once)
        const { records } = await readHalf(db, fence, { sub: 0, after: null }, d.int(30) + 1);
        return { type: 'range.seed', at, seq_floor: d.int(1000), records };
      }
      case 'cluster.placement': {
        // sometimes invalid (no voters): refused deterministically, the state unchanged on every replica
        const voters = d.chance(0.9) ? d.some([1, 2, 3, 4, 5], 3) : [];
        return { type: 'cluster.placement', at, groups: [{ group_id: d.int(8), voters, learners: [], leader: voters.length ? d.pick(voters) : null, move: null }] };
      }
    }
  }

  // ------------------------------------------------------------------ reads of the proposer's state

  private async pendingOf(db: StateDb, user: string): Promise<PendingRef[]> {
    return (await collect(db.pendingByUser.iterator({ ...prefixRange(user), limit: 8 }))).map(([k, e]) => ({ seq: tail(k), event_id: e.event_id }));
  }

  private async unitsOf(db: StateDb, user: string, currentOnly = false): Promise<MemoryUnit[]> {
    const all = await collect(db.units.values(prefixRange(user)), 200);
    return currentOnly ? all.filter((u) => u.retired_at === null) : all;
  }

  private async eventIdsOf(db: StateDb, user: string): Promise<string[]> {
    return (await collect(db.eventIds.keys(prefixRange(user)), 200)).map(tail);
  }

  // ------------------------------------------------------------------ records

  private event(user: string, stream: string, now: number, extra: Partial<ProposedEvent> = {}): ProposedEvent {
    const d = this.draw;
    return {
      event_id: d.uuid(), user_id: user, stream_id: stream, content: `said ${this.counter++} ${d.pick(['hello', 'I moved to Paris', 'buy milk', 'café ☕'])}`,
      content_type: 'text', org_id: d.chance(0.1) ? d.pick(ORGS) : null, agent_id: d.chance(0.3) ? 'agent-1' : null, role: d.pick([null, 'user', 'assistant']),
      level: null, parent_id: null, task_status: null, task_progress: null, valid_time: iso(now - d.int(86_400_000)), transaction_time: iso(now),
      metadata: d.chance(0.2) ? { n: d.int(100), tags: ['x', 'ÿ'] } : null, assets: [], ...extra,
    };
  }

  private unit(user: string, level: 1 | 2, now: number, references: string[]): MemoryUnit {
    const d = this.draw;
    const fact = level === 1 && d.chance(0.6);
    return {
      id: d.uuid(), user_id: user, stream_id: d.pick(STREAMS), org_id: d.chance(0.2) ? d.pick(ORGS) : null, agent_id: null, level,
      memory_type: d.pick(['factual', 'procedural'] as const), content: `unit ${this.counter++}`, keywords: d.some(['paris', 'milk', 'work', 'café'], 2),
      speaker: d.pick([null, 'user', 'assistant']), valid_time: iso(now - d.int(3_600_000)), transaction_time: iso(now), references, assets: [],
      importance: round3(d.float()), subject: fact ? d.pick(SUBJECTS) : null, attribute: fact ? d.pick(ATTRIBUTES) : null,
      retired_at: null, retired_reason: null, superseded_by: null,
    };
  }

  /**
   * Both forms of a command's vector (command-vectors.ts), alternately: the logs of earlier versions
   * carry numbers, today's proposers float32 base64. Chosen by a counter, not drawn, so the seeded
   * workload (and its digests) stays what it was when only numbers were sent.
   */
  private withVector(unit: MemoryUnit): UnitWithVector {
    const vector = this.draw.vector(DIMS);
    return this.vectorForms++ % 2 === 0 ? { unit, vector } : { unit, ...commandVector(vector) };
  }

  /** An insight's vector in either form, alternately, as withVector (`memory.insights`, InsightVector). */
  private insightVector(vector: number[] | null): InsightVector {
    return this.vectorForms++ % 2 === 0 ? { vector } : commandVector(vector);
  }

  private edge(user: string, source: string, target: string, now: number, relation?: Edge['relation']): Edge {
    const d = this.draw;
    return { edge_id: d.uuid(), user_id: user, source_id: source, target_id: target, relation: relation ?? d.pick(RELATIONS), weight: round3(d.float()), created_at: iso(now) };
  }

  // ------------------------------------------------------------------ commands that need more than a line

  private ingest(now: number): Command {
    const d = this.draw;
    const user = d.pick(USERS);
    const stream = d.pick(STREAMS);
    const events = Array.from({ length: 1 + d.int(4) }, () => this.event(user, stream, now));
    const assets: { asset_id: string; data_b64: string }[] = [];
    if (d.chance(0.15)) {
      // content-addressed: a small pool of payloads, so the same asset is sent again and stored once
      const bytes = Buffer.from(`image bytes ${d.int(3)}`);
      const asset_id = createHash('sha256').update(bytes).digest('hex');
      assets.push({ asset_id, data_b64: bytes.toString('base64') });
      events[0].assets = [{ asset_id, media_type: 'image', size: bytes.length, url: null, phash: null }];
      events[0].content_type = 'image';
    }
    // A few keys per stream and expiries short and long: replays within the window, fresh writes after it.
    const idempotency = d.chance(0.4) ? { key: `idem-${d.int(4)}`, expires_at: iso(now + d.pick([3_000, 600_000])) } : null;
    return { type: 'events.ingest', user_id: user, stream_id: stream, at: iso(now), idempotency, events, assets };
  }

  private async consolidate(db: StateDb, user: string, now: number): Promise<ConsolidateCommand | null> {
    const d = this.draw;
    const pending = await this.pendingOf(db, user);
    if (!pending.length) return null;
    const consumed = d.some(pending, 1 + d.int(4));
    if (this.consumedRefs.length && d.chance(0.08)) consumed.push(d.pick(this.consumedRefs));
    this.consumedRefs.push(...consumed);
    if (this.consumedRefs.length > 50) this.consumedRefs.splice(0, this.consumedRefs.length - 50);
    const refs = consumed.map((c) => c.event_id);
    const current = await this.unitsOf(db, user, true);
    const units = Array.from({ length: d.int(4) }, () => this.withVector(this.unit(user, 1, now, d.some(refs, 2))));
    const reinforced = d.some(current, d.int(3)).map((u) => ({ unit_id: u.id, add_references: d.some(refs, 1), importance: round3(Math.min(1, u.importance + 0.1)) }));
    const reinforcedIds = new Set(reinforced.map((r) => r.unit_id));
    const retired = units.length && d.chance(0.3)
      ? d.some(current.filter((u) => !reinforcedIds.has(u.id)), 1).map((u) => ({ unit_id: u.id, retired_at: iso(now), reason: 'superseded' as const, superseded_by: units[0].unit.id }))
      : [];
    const ids = [...units.map((u) => u.unit.id), ...current.map((u) => u.id)];
    const edges = ids.length >= 2 ? Array.from({ length: d.int(3) }, () => { const [a, b] = d.some(ids, 2); return this.edge(user, a, b, now); }) : [];
    const dropped = units.length ? [] : d.some(refs, 1).map((event_id) => ({ event_id, reason: 'noise' }));
    return {
      type: 'memory.consolidate', user_id: user, at: iso(now), consumed, embedder_id: 'sim-embedder-8', method: d.pick(['offline', 'llm']),
      units, reinforced, retired, edges, dropped,
    };
  }

  /** Batches of two to four users in one command; now and then a user twice (refused as a whole). */
  private async consolidateUsers(db: StateDb, now: number): Promise<ConsolidateUsersCommand | null> {
    const d = this.draw;
    const users = d.some(USERS, 2 + d.int(3));
    if (d.chance(0.05)) users.push(users[0]);
    const batches: ConsolidateBatch[] = [];
    for (const user of users) {
      const cmd = await this.consolidate(db, user, now);
      if (!cmd) continue;
      const { type: _type, at: _at, ...batch } = cmd;
      batches.push(batch);
    }
    return batches.length ? { type: 'memory.consolidate_users', at: iso(now), users: batches } : null;
  }

  private async insights(db: StateDb, user: string, now: number): Promise<InsightsCommand | null> {
    const d = this.draw;
    const all = await this.unitsOf(db, user);
    const l1 = all.filter((u) => u.level === 1);
    if (!l1.length) return null;
    const create = Array.from({ length: d.int(3) }, () => ({ unit: this.unit(user, 2, now, []), ...this.insightVector(d.chance(0.8) ? d.vector(DIMS) : null) }));
    const l2 = all.filter((u) => u.level === 2);
    const update = d.some(l2, d.int(3)).map((u) => ({
      unit_id: u.id, content: `${u.content} (revised)`, keywords: u.keywords, references: d.some(l1, 2).map((x) => x.id), importance: round3(d.float()),
      valid_time: iso(now), memory_type: d.chance(0.5) ? ('procedural' as const) : undefined, ...this.insightVector(d.chance(0.5) ? d.vector(DIMS) : null),
    }));
    const sources = [...create.map((c) => c.unit.id), ...l2.map((u) => u.id)];
    const edges = sources.length ? Array.from({ length: d.int(4) }, () => this.edge(user, d.pick(sources), d.pick(l1).id, now, 'DerivedFrom')) : [];
    const existing = (await collect(db.edges.keys(prefixRange(user)), 100)).map(tail);
    const streams = (await collect(db.reflectionDue.iterator(prefixRange(user)))).map(([k, v]) => ({ stream_id: tail(k), through: d.chance(0.7) ? v.last_event_at : iso(now - 600_000) }));
    return {
      type: 'memory.insights', user_id: user, at: iso(now), embedder_id: 'sim-embedder-8', create, update, edges,
      removed_edges: d.some(existing, d.int(2)), reflected: d.some(streams, 2),
    };
  }

  private async plan(db: StateDb, user: string, now: number): Promise<Command | null> {
    const d = this.draw;
    const eventIds = await this.eventIdsOf(db, user);
    const unplanned: string[] = [];
    for (const id of eventIds) if ((await db.l3ByEvent.get(`${user}${SEP}${id}`)) === undefined) unplanned.push(id);
    // Mostly events not planned yet; sometimes one planned already (a plan made before another committed).
    const chosen = d.chance(0.9) || unplanned.length === eventIds.length ? d.some(unplanned, 2) : d.some(eventIds, 1);
    if (!chosen.length) return null;
    const goals = await collect(db.goals.values(prefixRange(user)), 50);
    const events: L3EventPlan[] = chosen.map((event_id) => {
      const stream = d.pick(STREAMS);
      const g: Goal[] = d.chance(0.5) ? [{
        id: d.uuid(), user_id: user, stream_id: stream, content: `goal ${this.counter++}`, status: 'pending', progress: 0, source_event_id: event_id, transaction_time: iso(now),
      }] : [];
      const parents = [...g.map((x) => x.id), ...goals.map((x) => x.id)];
      const tasks: L3Task[] = Array.from({ length: g.length ? d.int(3) : 1 + d.int(2) }, () => ({
        task_id: d.uuid(), user_id: user, org_id: null, agent_id: d.chance(0.3) ? 'agent-1' : null, stream_id: stream,
        parent_id: parents.length && d.chance(0.7) ? d.pick(parents) : null, title: `task ${this.counter++}`, description: 'do it', status: 'pending',
        status_reason: null, progress: 0, dependencies: [], context_refs: [event_id], created_at: iso(now), updated_at: iso(now), result_summary: null,
      }));
      return { event_id, goals: g, tasks };
    });
    const updates: L3RecordUpdate[] = goals.length && d.chance(0.3)
      ? d.some(goals, 1).map((before) => ({ kind: 'goal', before, after: { ...before, progress: round3(d.float()) } }))
      : [];
    return { type: 'l3.plan', user_id: user, at: iso(now), planner: d.pick(['offline', 'llm']), events, updates };
  }

  /** As `PUT /tasks/:id/status` proposes it: the task's next version, its goal's progress, and the outcome event on completion. */
  private async taskStatus(db: StateDb, user: string, now: number): Promise<Command | null> {
    const d = this.draw;
    const tasks = await collect(db.tasks.values(prefixRange(user)), 100);
    if (!tasks.length) return null;
    const task = d.pick(tasks);
    this.oldTasks.push(task);
    if (this.oldTasks.length > 30) this.oldTasks.shift();
    const to: TaskStatus = d.pick(TASK_STATUSES);
    const terminal = (s: TaskStatus) => s === 'completed' || s === 'cancelled';
    // Re-sending a terminal status is a no-op the server does not propose; leaving one needs reopen (allowed).
    if (terminal(task.status) && task.status === to) return null;
    const stale = d.chance(0.1) ? this.oldTasks.find((t) => t.task_id === task.task_id && t !== task && JSON.stringify(t) !== JSON.stringify(task)) : undefined;
    const before = stale ?? task;
    const after: L3Task = {
      ...before, status: to, status_reason: to === 'blocked' || to === 'failed' ? 'waiting on x' : null, updated_at: iso(now),
      progress: to === 'completed' ? 1 : d.chance(0.5) ? round3(d.float()) : before.progress,
      result_summary: to === 'completed' && d.chance(0.5) ? 'done well' : before.result_summary,
    };
    const updates: L3RecordUpdate[] = [{ kind: 'task', before, after }];
    if (task.parent_id) {
      const goal = await db.goals.get(`${user}${SEP}${task.parent_id}`);
      if (goal) updates.push({ kind: 'goal', before: goal, after: { ...goal, progress: round3(d.float()) } });
    }
    const completedNow = to === 'completed' && before.status !== 'completed';
    const sediment = completedNow
      ? this.event(user, before.stream_id, now, { content: `Task '${before.title}' completed.`, role: 'system', level: 3, parent_id: before.task_id, task_status: 'completed', task_progress: 1 })
      : null;
    return { type: 'l3.task_status', user_id: user, at: iso(now), task_id: task.task_id, updates, sediment };
  }

  /**
   * A chunk of an import file as the import operation proposes it: new records of every kind (events in
   * every consolidation state, units with vectors and stats, a superseded one, edges, a goal and its
   * task, the user's org) mixed with records stored already, an edge to a missing unit and a record
   * repeated in the chunk, which apply skips.
   */
  private async importRecords(db: StateDb, user: string, now: number): Promise<Command> {
    const d = this.draw;
    const at = iso(now);
    const stream = d.pick(STREAMS);
    const records: ExportRecord[] = [];
    for (const u of d.some(await this.unitsOf(db, user), 2)) records.push({ kind: 'unit', ...u, vector: null, stats: null });
    for (const { seq: _seq, ...e } of d.some(await collect(db.events.values(prefixRange(user)), 50), 1)) {
      records.push({ kind: 'event', ...e, consolidation: { state: 'consolidated' }, l3_source: null });
    }
    const goal: Goal | null = d.chance(0.5)
      ? { id: d.uuid(), user_id: user, stream_id: stream, content: `imported goal ${this.counter++}`, status: 'pending', progress: 0, source_event_id: null, transaction_time: at }
      : null;
    const states: EventConsolidation[] = [
      { state: 'pending' }, { state: 'consolidated' }, { state: 'dropped', reason: 'noise', at }, { state: 'failed', error: 'llm timeout', attempts: 3, at },
    ];
    const events = Array.from({ length: 1 + d.int(3) }, () => this.event(user, stream, now - d.int(5000)));
    if (d.chance(0.2)) {
      const bytes = Buffer.from(`image bytes ${d.int(3)}`);
      const asset_id = createHash('sha256').update(bytes).digest('hex');
      records.push({ kind: 'asset', user_id: user, asset_id, data_b64: bytes.toString('base64') });
      events[0].assets = [{ asset_id, media_type: 'image', size: bytes.length, url: null, phash: null }];
    }
    events.forEach((e, i) => records.push({ kind: 'event', ...e, consolidation: d.pick(states), l3_source: goal && i === 0 ? { kind: 'goal', id: goal.id } : null }));
    const [a, b] = [this.unit(user, 1, now, [events[0].event_id]), this.unit(user, d.chance(0.3) ? 2 : 1, now, [])];
    const retired = d.chance(0.4) ? { ...a, retired_at: at, retired_reason: 'superseded' as const, superseded_by: b.id } : a;
    const vector = () => (d.chance(0.8) ? encodeVector(d.vector(DIMS), 'sim-embedder-8') : null);
    records.push({ kind: 'unit', ...retired, vector: vector(), stats: d.chance(0.5) ? { retrievals: 1 + d.int(3), last_retrieved_at: at } : null });
    records.push({ kind: 'unit', ...b, vector: vector(), stats: null });
    const others = (await this.unitsOf(db, user)).map((u) => u.id);
    records.push({ kind: 'edge', ...this.edge(user, b.id, a.id, now, 'EvolvedTo') });
    if (others.length) records.push({ kind: 'edge', ...this.edge(user, a.id, d.pick(others), now) });
    records.push({ kind: 'edge', ...this.edge(user, a.id, d.uuid(), now) });
    if (goal) {
      records.push({ kind: 'goal', ...goal });
      records.push({
        kind: 'task', task_id: d.uuid(), user_id: user, org_id: null, agent_id: null, stream_id: stream, parent_id: goal.id, title: `imported task ${this.counter++}`,
        description: '', status: d.pick(TASK_STATUSES), status_reason: null, progress: 0, dependencies: [], context_refs: [events[0].event_id], created_at: at, updated_at: at,
        result_summary: null,
      });
    }
    records.push({ kind: 'user', user_id: user, org_id: d.chance(0.5) ? d.pick(ORGS) : null });
    if (d.chance(0.2)) records.push(d.pick(records));
    return { type: 'import.records', at, records };
  }

  private async execute(db: StateDb, now: number): Promise<Command | null> {
    const d = this.draw;
    const plans = await collect(db.semanticPlans.values({ limit: 20 }));
    const plan = plans.length && d.chance(0.9) ? d.pick(plans) : null;
    // An unknown plan (404), a plan of another user (403), else the plan's own user.
    const user = plan && d.chance(0.9) ? plan.user_id : d.pick(USERS);
    const units = await this.unitsOf(db, user);
    const base = { type: 'semantic.execute' as const, user_id: user, at: iso(now), plan_id: plan?.plan_id ?? d.uuid(), embedder_id: 'sim-embedder-8' };
    if (d.chance(0.5)) {
      // A forget plan (memory/semantic executePlan): soft, retire as forgotten; hard, delete the units and matched events.
      if (d.chance(0.5)) {
        const retire = d.some(units, 1 + d.int(2)).map((u) => ({ unit_id: u.id, retired_at: u.retired_at ?? iso(now), retired_reason: 'forgotten' as const, superseded_by: u.superseded_by }));
        return { ...base, retire, delete_unit_ids: [], delete_event_ids: [], create: null, edges: [] };
      }
      const events = d.some(await this.eventIdsOf(db, user), d.int(3));
      return { ...base, retire: [], delete_unit_ids: d.some(units, 1 + d.int(2)).map((u) => u.id), delete_event_ids: events, create: null, edges: [] };
    }
    // An update plan: the new unit, the units it supersedes, an EvolvedTo or Contradicts edge to each.
    const create = this.withVector(this.unit(user, 1, now, []));
    const targets = d.some(units.filter((u) => u.retired_at === null), d.int(3));
    const retire = targets.map((u) => ({ unit_id: u.id, retired_at: iso(now), retired_reason: 'superseded' as const, superseded_by: create.unit.id }));
    const edges = targets.map((u) => (d.chance(0.5) ? this.edge(user, u.id, create.unit.id, now, 'EvolvedTo') : this.edge(user, create.unit.id, u.id, now, 'Contradicts')));
    return { ...base, retire, delete_unit_ids: [], delete_event_ids: [], create, edges };
  }

  // ------------------------------------------------------------------ webhooks

  /** A subscription as the route (or a shard's mirror) proposes it; sometimes with an id taken already, live or deleted. */
  private async webhookCreate(db: StateDb, now: number): Promise<Command> {
    const d = this.draw;
    const taken = await collect(db.webhooks.keys(), 50);
    const kinds: WebhookFilterKind[] = d.chance(0.3) ? ['*'] : d.some([...WEBHOOK_KINDS], 1 + d.int(3));
    const scope = d.pick([{ org_id: null, user_ids: null }, { org_id: d.pick(ORGS), user_ids: null }, { org_id: null, user_ids: d.some(USERS, 2) }]);
    return {
      type: 'webhook.create',
      record: {
        webhook_id: taken.length && d.chance(0.1) ? d.pick(taken) : d.uuid(), url: `https://hooks.example/${d.hex(4)}`, events: kinds,
        user_ids: d.chance(0.3) ? d.some(USERS, 1 + d.int(3)) : null, org_id: d.chance(0.2) ? d.pick(ORGS) : null, secret: d.hex(16), created_at: iso(now),
        created_by: { kind: 'api_key', subject: d.uuid(), role: d.pick(['write', 'admin'] as const), ...scope },
        // small bounds too, so full outboxes drop their oldest deliveries
        outbox_max: d.pick([2, 5, 50, 10_000]),
      },
    };
  }

  /**
   * A dispatcher's batched progress: for some live subscriptions, a position somewhere in (or before, or
   * past) its outbox, counts, and a few attempts; sometimes a subscription that no longer exists.
   */
  private async webhookAdvance(db: StateDb, now: number): Promise<Command | null> {
    const d = this.draw;
    const live = (await collect(db.webhooks.values(), 50)).filter(isLiveWebhook);
    const webhooks: WebhookProgress[] = [];
    for (const w of d.some(live, 1 + d.int(2))) {
      const page = await outboxPage(db, w.webhook_id, null, 12);
      const through = page.length && d.chance(0.85) ? d.pick(page).seq : d.chance(0.5) ? null : '9'.repeat(21);
      const attempts: WebhookAttempt[] = d.some(page, d.int(4)).map((del, i) => ({
        delivery_id: del.id, type: del.type, user_id: del.user_id, seq: del.seq, attempt: 1 + i, at: iso(now - d.int(1000)),
        status: d.pick([200, 500, null]), error: d.chance(0.5) ? null : 'connect ECONNREFUSED', duration_ms: d.int(300), outcome: d.pick(['delivered', 'failed', 'expired'] as const),
      }));
      webhooks.push({ webhook_id: w.webhook_id, through, delivered: d.int(5), expired: d.int(2), attempts });
    }
    if (d.chance(0.1)) webhooks.push({ webhook_id: d.uuid(), through: null, delivered: 1, expired: 0, attempts: [] });
    return webhooks.length ? { type: 'webhook.advance', at: iso(now), webhooks } : null;
  }
}
