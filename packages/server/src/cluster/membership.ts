/**
 * Cluster operations: initialize, join, remove, status, and the placement's own requests between
 * nodes (a group's initialization, one membership step). Any node accepts the operator's; each part
 * runs on the leader of the group it changes (reached over HTTP with the caller's credentials and
 * `?shard_id=`). Join and remove change the node set, which is shard 0's membership (on every node);
 * the other groups follow it through the placement loop (placement/executor.ts).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { ReplayGuard } from '@strata/raft';
import {
  MAX_GROUPS, NotLeaderStrataError, StrataError, badRequest, conflict, freeGroupId, fromRaftError, invalidMerge, invalidSplit, isErrorCode, medianOfUsers, middleOf, notFound, rangesOfGroup,
  settle, unavailable,
  type Command, type HalfCursor, type KeySplit, type RangeFenceSpec,
} from '@strata/store';
import type { GroupPlacementRecord, StateDb } from '@strata/store';
import type { ClusterRuntime } from './runtime';
import type { Forwarder } from './forward';
import type { PeerSigner } from './peer-auth';
import type { PlacementDirectory } from './placement/directory';
import type { PlacementExecutor } from './placement/executor';
import type { GroupRouting } from './placement/routing';
import { blankView, ReplicaDrops, replicaView } from './replica-drop';
import type { KeyRangeDirectory } from './placement/range-directory';
import { readFenced, type SplitDriver } from './split/driver';
import type { AutoScaler } from './split/auto';

export const JOIN_SIG_HEADER = 'x-strata-join-sig';
export const JOIN_TS_HEADER = 'x-strata-join-ts';
export const JOIN_NONCE_HEADER = 'x-strata-join-nonce';
/** a join waits for the new node to catch up; removal waits for a commit */
const JOIN_TIMEOUT_MS = 90_000;

export type ShardJoin = { shard_id: number; status: 'joined' | 'already_joined' };
export type ShardRemove = { shard_id: number; status: 'removed' | 'not_member' };

/**
 * Pure: HMAC a join request is signed with (the cluster secret never travels). It covers the route,
 * the body's fields (the only ones a join reads), a timestamp and a nonce `<boot id>.<sequence>`.
 */
export function joinSignature(secret: string, nodeId: number, address: string, ts: number, nonce: string): string {
  return createHmac('sha256', secret).update(`join\nPOST\n/v1/cluster/join\n${nodeId}\n${address}\n${ts}\n${nonce}`).digest('hex');
}

/**
 * Signs and checks join requests. A signature is single-use: its nonce is remembered (per signer
 * process, a window of sequence numbers, so memory stays bounded) and a timestamp further than the
 * clock skew from now is refused, so a captured join cannot be replayed, now or later.
 */
export class JoinSigner {
  private readonly boot = randomBytes(8).toString('hex');
  private seq = 0;
  private readonly seen: ReplayGuard;

  constructor(private readonly secret: string | null, private readonly skewMs: number, private readonly now: () => number = Date.now) {
    this.seen = new ReplayGuard(2 * skewMs);
  }

  /** Headers that make a join of `input` authorized by the cluster secret (fresh for every request). */
  sign(input: { node_id: number; address: string }): Record<string, string> {
    if (!this.secret) return {};
    const ts = this.now();
    const nonce = `${this.boot}.${++this.seq}`;
    return { [JOIN_SIG_HEADER]: joinSignature(this.secret, input.node_id, input.address, ts, nonce), [JOIN_TS_HEADER]: String(ts), [JOIN_NONCE_HEADER]: nonce };
  }

  /** True for a valid signature of `input`, within the skew, never seen before (it is used up now). */
  verify(input: { node_id: number; address: string }, h: { sig: string; ts: string; nonce: string }): boolean {
    const ts = Number(h.ts);
    const nonce = /^([0-9a-f]{1,32})\.([1-9][0-9]{0,15})$/.exec(h.nonce);
    const now = this.now();
    if (!this.secret || !nonce || !Number.isSafeInteger(ts) || Math.abs(now - ts) > this.skewMs) return false;
    const want = joinSignature(this.secret, input.node_id, input.address, ts, h.nonce);
    if (h.sig.length !== want.length || !timingSafeEqual(Buffer.from(h.sig), Buffer.from(want))) return false;
    return this.seen.accept(`join/${nonce[1]}`, Number(nonce[2]), now);
  }
}

/** Pure: validates a join body; errors name the field as the contract's details do. */
export function parseJoin(body: unknown): { node_id: number; address: string } {
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const details = [];
  if (!Number.isInteger(b.node_id) || (b.node_id as number) < 1) details.push({ path: '/node_id', message: 'must be a positive integer' });
  if (typeof b.address !== 'string' || !/^https?:\/\/[^\s/]+/.test(b.address)) details.push({ path: '/address', message: "must be the node's peer URL (http:// or https://)" });
  if (details.length) throw badRequest('validation_failed', 'The join request needs node_id (a positive integer) and address (the node\'s peer URL).', details);
  return { node_id: b.node_id as number, address: (b.address as string).replace(/\/+$/, '') };
}

/** Leadership moved while an operation ran: look for the leader again. */
class Moved extends Error {}

export type PlacementStepKind = 'add_learner' | 'promote' | 'remove' | 'transfer_leader';

/** Pure: validates the body of a placement step (sent by the placement loop of another node). */
export function parseStep(body: unknown): { kind: PlacementStepKind; node: number; url: string } {
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const kinds: PlacementStepKind[] = ['add_learner', 'promote', 'remove', 'transfer_leader'];
  if (!kinds.includes(b.kind as PlacementStepKind) || !Number.isSafeInteger(b.node) || (b.node as number) < 1 || typeof b.url !== 'string' || !/^https?:\/\//.test(b.url)) {
    throw badRequest('validation_failed', 'A placement step needs kind (add_learner, promote, remove, transfer_leader), node (an id) and url.');
  }
  return { kind: b.kind as PlacementStepKind, node: b.node as number, url: b.url };
}

/** Pure: validates the body of a replica drop: the index of the membership entry that removed this node. */
export function parseDrop(body: unknown): { index: number } {
  const i = typeof body === 'object' && body !== null ? (body as { index?: unknown }).index : undefined;
  if (!Number.isSafeInteger(i) || (i as number) < 1) throw badRequest('validation_failed', 'A drop needs index: the log index (a positive integer) of the membership entry that removed this node.');
  return { index: i as number };
}

/** Pure: validates the members of a group's initialization. */
export function parseMembers(body: unknown): { id: number; url: string }[] {
  const m = (typeof body === 'object' && body !== null ? (body as { members?: unknown }).members : undefined);
  const ok = Array.isArray(m) && m.length > 0 && m.every((x) => typeof x === 'object' && x !== null && Number.isSafeInteger((x as { id: unknown }).id) && (x as { id: number }).id > 0 && typeof (x as { url: unknown }).url === 'string');
  if (!ok) throw badRequest('validation_failed', 'members must be a non-empty list of {id, url}.');
  return (m as { id: number; url: string }[]).map((x) => ({ id: x.id, url: x.url }));
}

export class ClusterService {
  readonly joins: JoinSigner;
  /** set once the node has built its placement loop (status reports its last round) */
  executor: PlacementExecutor | null = null;
  /** set once the node has opened its key-range directory (status shows it) */
  ranges: KeyRangeDirectory | null = null;
  /** set once the node has built its split driver (split/driver.ts) */
  splits: SplitDriver | null = null;
  /** set once the node has built its automatic splits and merges (split/auto.ts) */
  autoscaler: AutoScaler | null = null;
  /** this node's replicas moved away, wiped when the placement loop asks (replica-drop.ts) */
  private readonly drops: ReplicaDrops;
  /** the group ids the key-range directory names (open here or not) */
  private readonly live: () => number[];

  constructor(
    private readonly rt: ClusterRuntime,
    private readonly fwd: Forwarder,
    private readonly routing: GroupRouting,
    private readonly directory: PlacementDirectory,
    readonly peers: PeerSigner,
    /**
     * `wipe`: deletes this node's replica of a group it was removed from (node.ts dropGroup: closed, its
     * directory and log deleted); `live`: the group ids the key-range directory names (a drop may ask
     * about one not open here: dropped already).
     */
    replicas?: {
      wipe: (group: number, removedAt: number) => Promise<void>; live: () => number[]; onWiped?: (group: number, removedAt: number) => void;
      serial?: <T>(decideAndWipe: () => Promise<T>) => Promise<T>;
    },
  ) {
    this.joins = new JoinSigner(rt.config.cluster.secret, rt.config.cluster.peer_clock_skew_s * 1000);
    this.live = replicas?.live ?? (() => rt.shardIds());
    this.drops = new ReplicaDrops({
      view: async (g) => {
        const log = rt.logs.get(g);
        if (log) return replicaView(this.nodeId, log.group, log.applier);
        // not open here: dropped already (nothing in its storage), or being opened or closed right now
        if ((await rt.inspectShard(g)).blank) return blankView(this.nodeId);
        throw unavailable(`This node's replica of shard ${g} is being opened or closed; ask again.`);
      },
      wipe: (g, removedAt) => (replicas ? replicas.wipe(g, removedAt) : Promise.reject(new Error('no replica wipe on this node'))),
      onWiped: (g, removedAt) => replicas?.onWiped?.(g, removedAt),
      serial: replicas?.serial,
    });
  }


  get nodeId(): number {
    return this.rt.config.cluster.node_id;
  }

  async status() {
    const retired = new Set(this.ranges?.retired() ?? []);
    const outboxEmpty = new Map<number, boolean>();
    for (const id of this.rt.shardIds()) {
      const db = retired.has(id) ? this.splits?.shard(id)?.db : undefined;
      const empty = db ? await outboxEmptyOf(db) : null;
      if (empty !== null) outboxEmpty.set(id, empty);
    }
    return {
      node_id: this.nodeId,
      shards: this.rt.shardIds().map((id) => {
        const s = this.rt.group(id).status();
        const learner = s.members.some((m) => m.id === s.nodeId && !m.voter);
        return {
          shard_id: id, leader: s.leader, term: s.term, role: learner ? 'learner' : s.role === 'pre_candidate' ? 'candidate' : s.role,
          commit_index: s.commitIndex, applied_index: s.appliedIndex, conf_index: s.confIndex, holds: this.routing.holds(id),
          members: s.members.map((m) => ({ node_id: m.id, url: m.url, voter: m.voter, match_index: m.matchIndex })),
          // what automatic splits and merges weigh (split/auto.ts): the records this replica stores
          records: this.recordsOf(id),
          // a retired group's: whether its queued webhook deliveries are all sent (it is removed then)
          ...(outboxEmpty.has(id) ? { outbox_empty: outboxEmpty.get(id) } : {}),
        };
      }),
      // node ids removed from the cluster (shard 0's applied membership changes): a removed node that
      // still runs learns of its removal from this (cluster/removal.ts)
      removed_nodes: [...this.removedIds()].sort((a, b) => a - b),
      placement: {
        replication_factor: this.rt.config.cluster.replication_factor,
        groups: this.directory.all(),
        // the last round of the placement loop, on the node that runs it (the leader of shard 0)
        last_round: this.executor?.last ?? null,
      },
      // which group holds each range of user keys (store/key-ranges.ts); `recorded` once in shard 0
      key_ranges: this.ranges ? {
        recorded: this.ranges.recorded(), ...this.ranges.table(), splits: this.ranges.splits(), dropping: this.ranges.drops(), aborting: this.ranges.aborts(), retired: this.ranges.retired(),
        removed: this.ranges.removed(),
      } : null,
      // on the leader of shard 0: how far each split it drives has got
      splits: this.splits ? [...this.splits.progress.values()] : [],
      // automatic splits and merges: the thresholds, and on the leader of shard 0 what it decided lately
      autoscale: {
        split_above_records: this.rt.config.cluster.auto_split_records,
        merge_below_records: this.rt.config.cluster.auto_merge_records,
        decisions: this.autoscaler?.decisions ?? [],
        skipped: this.autoscaler?.skipped ?? [],
      },
    };
  }

  /** Events and memory units in this node's replica of a group (null when it has not opened it: recordsOfReplica). */
  private recordsOf(groupId: number): number | null {
    const db = this.splits?.shard(groupId)?.db;
    return db ? recordsOfReplica(db) : null;
  }

  /**
   * An automatic split (split/auto.ts): at the median of the group's users' keys; false, and nothing
   * begun, when the group has fewer than two users (no point would move any: a hot user stays whole).
   */
  async autoSplit(groupId: number): Promise<boolean> {
    const range = rangesOfGroup(this.rangeDirectory().table(), groupId)[0];
    if (!range) return false;
    const median = await this.usersMedian(groupId, range);
    if (median.users < 2 || median.point === null) return false;
    await this.split(groupId, median.point);
    return true;
  }

  /**
   * Initializes shard 0 here and every other group on its initial voters: here when this node is one,
   * else by asking them (until `deadline`). Idempotent.
   */
  async initialize(deadline = Date.now() + this.rt.config.cluster.forward_timeout_ms) {
    const { done, elsewhere } = await this.rt.initialize();
    const remote = await Promise.all(elsewhere.map((g) => this.initializeElsewhere(g, deadline)));
    const shards = [...done, ...remote].sort((a, b) => a.shard_id - b.shard_id);
    return { status: shards.some((s) => s.status === 'initialized') ? 'initialized' : 'already_initialized', node_id: this.nodeId, shards };
  }

  /** Asks the group's initial voters, in turn, to initialize it; retries until one has (or `deadline`). */
  async initializeElsewhere(g: GroupPlacementRecord, deadline: number, stopped: () => boolean = () => false) {
    const members = this.rt.initialMembers().filter((m) => g.voters.includes(m.id));
    const path = `/v1/cluster/groups/${g.group_id}/initialize`;
    const body = { members };
    while (!stopped()) {
      for (const m of members) {
        try {
          const r = await this.fwd.call(this.rt.urlOf(m.id, 0) ?? m.url, 'post', path, this.peers.sign(m.id, 'POST', path, body), body, Date.now() + 5000);
          if (r.status === 200) return { shard_id: g.group_id, status: (r.body as { status: 'initialized' | 'already_initialized' }).status };
        } catch {
          // not up yet: the next voter, then again
        }
      }
      if (Date.now() >= deadline) break;
      await sleep(250);
    }
    throw unavailable(`Shard ${g.group_id} could not be initialized: none of its initial voters (${g.voters.join(', ')}) answered; retry.`);
  }

  /**
   * Begins a split of a group at `point` (default: the median of its users' keys, or the middle of its
   * range when it has fewer than two), on the leader of shard 0 (the route forwards it there): the split
   * driver takes it from there (split/driver.ts).
   */
  async split(groupId: number, point: number | null) {
    const ranges = this.rangeDirectory();
    // the initial table routes as the recorded one will: an unknown group is a 404 either way
    const table = ranges.table();
    if (!table.ranges.some((r) => r.group === groupId)) throw notFound(`No shard ${groupId} owns a key range.`);
    if (!ranges.recorded()) throw unavailable('The key-range directory is not recorded yet; retry.');
    this.notBusy(groupId);
    const at = point ?? (await this.usersMedian(groupId, rangesOfGroup(table, groupId)[0])).point ?? middleOf(table, groupId);
    const newGroup = freeGroupId(table, ranges.claimed());
    if (newGroup === null) throw conflict(`No group id is left (at most ${MAX_GROUPS} groups).`);
    const split: KeySplit = { group: groupId, point: at ?? -1, new_group: newGroup };
    const why = at === null ? 'the range holds a single key' : invalidSplit(table, split);
    if (why) throw badRequest('validation_failed', `Shard ${groupId} cannot be split there: ${why}.`, [{ path: '/point', message: why }]);
    const answer = settle(await this.rt.logs.get(0)!.propose({ type: 'cluster.split', at: new Date().toISOString(), phase: 'begin', split })) as { status: string };
    return { status: answer.status, split };
  }

  /**
   * Begins a merge: `donor`'s whole range goes to `groupId`, whose range must be adjacent (docs/cluster.md
   * "Merging two groups"); on the leader of shard 0, driven like a split (split/driver.ts).
   */
  async merge(groupId: number, donor: number) {
    const ranges = this.rangeDirectory();
    const table = ranges.table();
    for (const [g, path] of [[groupId, null], [donor, '/with']] as const) {
      if (!table.ranges.some((r) => r.group === g)) {
        if (path === null) throw notFound(`No shard ${g} owns a key range.`);
        throw badRequest('validation_failed', `No shard ${g} owns a key range.`, [{ path, message: 'owns no key range' }]);
      }
    }
    if (!ranges.recorded()) throw unavailable('The key-range directory is not recorded yet; retry.');
    const why = invalidMerge(table, groupId, donor);
    if (why) throw badRequest('validation_failed', `Shards ${groupId} and ${donor} cannot be merged: ${why}.`, [{ path: '/with', message: why }]);
    this.notBusy(groupId);
    this.notBusy(donor);
    const range = rangesOfGroup(table, donor)[0];
    const merge: KeySplit = { group: donor, point: range.start, new_group: groupId, merge: { end: range.end } };
    const answer = settle(await this.rt.logs.get(0)!.propose({ type: 'cluster.split', at: new Date().toISOString(), phase: 'begin', split: merge })) as { status: string };
    return { status: answer.status, merge: { group: groupId, with: donor, start: range.start, end: range.end } };
  }

  /** This node's key-range directory (503 while the node is still opening it). */
  private rangeDirectory(): KeyRangeDirectory {
    if (!this.ranges) throw unavailable('The key-range directory is not open yet; retry.');
    return this.ranges;
  }

  /** 409 when a group takes part in a split or merge not finished (in flight, dropping, or being put back after an abort). */
  private notBusy(groupId: number): void {
    const ranges = this.rangeDirectory();
    const involves = (s: KeySplit) => s.group === groupId || s.new_group === groupId;
    if (ranges.splits().some(involves)) throw conflict(`Shard ${groupId} is being split or merged already.`);
    if (ranges.drops().some(involves)) throw conflict(`Shard ${groupId} is finishing a split or merge (its old group is deleting the moved records); retry when GET /v1/cluster/status shows it done.`);
    if (ranges.aborts().some(involves)) throw conflict(`Shard ${groupId} is being put back after an aborted split or merge; retry when GET /v1/cluster/status shows it done.`);
  }

  /**
   * Aborts the split (`kind` 'split': the one whose old group is `groupId`) or merge (`kind` 'merge': the
   * one `groupId` receives) in flight: taken out of flight in shard 0 at once, so it is never committed;
   * the driver then puts the groups back (split/driver.ts). 404 when none is in flight, 409 once committed.
   */
  async abort(groupId: number, kind: 'split' | 'merge') {
    const ranges = this.rangeDirectory();
    const mine = (s: KeySplit) => (kind === 'merge' ? !!s.merge && s.new_group === groupId : !s.merge && s.group === groupId);
    const found = ranges.splits().find(mine);
    if (!found) {
      if (ranges.aborts().some(mine)) return { status: 'already_aborted', ...this.described(ranges.aborts().find(mine)!) };
      if (ranges.drops().some(mine)) throw conflict(`The ${kind} of shard ${groupId} is committed (its old group is deleting the moved records); it cannot be aborted.`);
      throw notFound(`No ${kind} of shard ${groupId} is in flight.`);
    }
    const answer = settle(await this.rt.logs.get(0)!.propose({ type: 'cluster.split', at: new Date().toISOString(), phase: 'abort', split: found })) as { status: string };
    // committed between the read above and this entry: the commit stands
    if (answer.status === 'not_in_flight') throw conflict(`The ${kind} of shard ${groupId} is no longer in flight; GET /v1/cluster/status shows whether it was committed.`);
    return { status: answer.status, ...this.described(found) };
  }

  private described(s: KeySplit) {
    return s.merge ? { merge: { group: s.new_group, with: s.group, start: s.point, end: s.merge.end } } : { split: { group: s.group, point: s.point, new_group: s.new_group } };
  }

  /** The median of a group's users' keys in `range`: from this node's replica when it holds one, else from a voter's (peer-signed). */
  private async usersMedian(groupId: number, range: { start: number; end: number }): Promise<{ point: number | null; users: number }> {
    const base = this.rangeDirectory().table().base;
    const local = this.splits?.shard(groupId);
    if (local && this.rt.group(groupId).isVoter()) return medianOfUsers(local.db, base, range);
    const path = `/v1/cluster/groups/${groupId}/range-median`;
    const body = { base, start: range.start, end: range.end };
    const placed = groupId === 0 ? null : this.directory.get(groupId);
    for (const id of placed ? [...(placed.leader !== null ? [placed.leader] : []), ...placed.voters] : []) {
      const url = this.rt.urlOf(id, 0);
      if (!url || id === this.nodeId) continue;
      try {
        const r = await this.fwd.call(url, 'post', path, this.peers.sign(id, 'POST', path, body), body, Date.now() + 30_000);
        if (r.status === 200) return r.body as { point: number | null; users: number };
      } catch {
        // the next voter
      }
    }
    throw unavailable(`No replica of shard ${groupId} answered for its users' median key; retry, or pass a point.`);
  }

  /** The median of this node's replica's users' keys in a range (a peer's, for a split without a point). */
  async rangeMedian(groupId: number, base: number, range: { start: number; end: number }) {
    this.knownGroup(groupId);
    const shard = this.splits?.shard(groupId);
    if (!shard || !this.rt.group(groupId).isVoter()) throw unavailable(`This node does not hold shard ${groupId}.`);
    return medianOfUsers(shard.db, base, range);
  }

  /** A split step proposed on this node's replica of a group, which must lead it (the split driver's, peer-signed). */
  async rangeCommand(groupId: number, command: Command) {
    this.knownGroup(groupId);
    const log = this.rt.logs.get(groupId)!;
    if (!log.isLeader()) throw unavailable(`This node does not lead shard ${groupId}.`, 'no_leader');
    return settle(await log.propose(command));
  }

  /** A chunk of a fenced range's records from this node's replica (the split driver's, peer-signed). */
  async rangeRecords(groupId: number, fence: RangeFenceSpec, cursor: HalfCursor) {
    this.knownGroup(groupId);
    const shard = this.splits?.shard(groupId);
    if (!shard || !this.rt.group(groupId).isVoter()) throw unavailable(`This node does not hold shard ${groupId}.`);
    return readFenced(shard, fence, cursor);
  }

  /** A group's initialization asked by the node that initializes the cluster (peer-signed). */
  async initializeGroup(groupId: number, members: { id: number; url: string }[]) {
    this.knownGroup(groupId);
    if (!members.some((m) => m.id === this.nodeId)) throw badRequest('validation_failed', `Node ${this.nodeId} is not among the members of shard ${groupId}.`);
    return { shard_id: groupId, status: await this.rt.group(groupId).initialize(members) };
  }

  /** One membership change of a group this node leads (peer-signed, from the placement loop). */
  async step(groupId: number, input: { kind: PlacementStepKind; node: number; url: string }) {
    this.knownGroup(groupId);
    const group = this.rt.group(groupId);
    if (!group.isLeader()) throw unavailable(`This node does not lead shard ${groupId}.`, 'no_leader');
    try {
      switch (input.kind) {
        case 'add_learner':
          return { status: await group.addLearner(input.node, input.url) };
        case 'promote':
          return { status: await group.promoteLearner(input.node) };
        case 'remove':
          // the index of the removal: the placement loop sends it to the removed node (drop below)
          return { status: 'removed', index: await group.removeNode(input.node) };
        case 'transfer_leader':
          await group.transferLeadership(input.node);
          return { status: 'transferred' };
      }
    } catch (err) {
      if (err instanceof StrataError) throw err;
      // refused by the membership rules, or leadership moved: the placement loop plans again
      throw conflict(`Shard ${groupId}: ${input.kind} of node ${input.node} not done: ${(err as Error).message}`);
    }
  }

  /**
   * The placement loop's request to wipe this node's replica of a group it was removed from by the
   * membership entry at `removedAt` (peer-signed). Decided here, from this node's own replica
   * (replica-drop.ts): `dropped` (wiped, or nothing held), `member` (named again since: kept), `not_yet`.
   */
  async drop(groupId: number, removedAt: number) {
    // a group not open here is asked about too: this node dropped it already, or never held it
    if (!this.rt.shardIds().includes(groupId) && !this.live().includes(groupId)) throw notFound(`No shard ${groupId} in this cluster.`);
    if (groupId === 0) throw badRequest('validation_failed', 'Shard 0 is on every node: it is never dropped.');
    return { shard_id: groupId, ...(await this.drops.drop(groupId, removedAt)) };
  }

  private knownGroup(groupId: number): void {
    if (!this.rt.shardIds().includes(groupId)) throw notFound(`No shard ${groupId} in this cluster.`);
  }

  /**
   * Ids removed from the cluster: from shard 0, whose membership is the node set (a replica moved out
   * of another group is not removed from the cluster and may come back to that group later).
   */
  private removedIds(): Set<number> {
    return new Set(this.rt.logs.get(0)!.applier.clusterMeta().removed);
  }

  /**
   * `signed`: the request was authorized by a join signature (not admin credentials); each hop to a
   * shard's leader then carries a fresh signature of this node, since a signature is single-use.
   */
  async join(input: { node_id: number; address: string }, headers: Record<string, string>, onlyShard: number | null, signed = false) {
    if (this.removedIds().has(input.node_id)) throw removedConflict(input.node_id);
    const shards: ShardJoin[] = [];
    const hopHeaders = () => (signed ? { ...headers, ...this.joins.sign(input) } : headers);
    for (const shard of onlyShard === null ? [0] : [onlyShard]) {
      shards.push(await this.onLeader(shard, 'post', '/v1/cluster/join', hopHeaders, input, onlyShard !== null, JOIN_TIMEOUT_MS,
        async () => ({ shard_id: shard, status: await this.joinLocal(shard, input) }),
        (answer) => (answer as { shards: ShardJoin[] }).shards[0]));
    }
    return { status: shards.every((s) => s.status === 'already_joined') ? 'already_joined' : 'joined', node_id: input.node_id, role: 'voter', shards };
  }

  private async joinLocal(shard: number, input: { node_id: number; address: string }): Promise<ShardJoin['status']> {
    const log = this.rt.logs.get(shard)!;
    if (this.removedIds().has(input.node_id)) throw removedConflict(input.node_id);
    const member = log.group.status().members.find((m) => m.id === input.node_id);
    if (member && member.url && member.url !== input.address) {
      throw conflict(`Node ${input.node_id} is already a member at ${member.url}; remove it first or use another id.`);
    }
    if (member?.voter) return 'already_joined';
    const r = await log.group.addNode(input.node_id, input.address);
    return r === 'already_member' ? 'already_joined' : 'joined';
  }

  async remove(nodeId: number, headers: Record<string, string>, onlyShard: number | null) {
    const shards: ShardRemove[] = [];
    for (const shard of onlyShard === null ? [0] : [onlyShard]) {
      shards.push(await this.onLeader(shard, 'delete', `/v1/cluster/nodes/${nodeId}`, headers, undefined, onlyShard !== null, JOIN_TIMEOUT_MS,
        async () => ({ shard_id: shard, status: await this.removeLocal(shard, nodeId) }),
        (answer) => (answer as { shards: ShardRemove[] }).shards[0]));
    }
    if (onlyShard === null && shards.every((s) => s.status === 'not_member')) throw notFound(`Node ${nodeId} is not a member of the cluster.`);
    return { status: 'removed', node_id: nodeId, shards };
  }

  private async removeLocal(shard: number, nodeId: number): Promise<ShardRemove['status']> {
    const group = this.rt.group(shard);
    if (!group.status().members.some((m) => m.id === nodeId)) return 'not_member';
    if (nodeId === this.nodeId) {
      // Removing the leader: hand leadership over first, then the new leader removes this node.
      await group.transferLeadership();
      throw new Moved();
    }
    await group.removeNode(nodeId);
    return 'removed';
  }

  /**
   * Runs `local` on the shard's leader: here when this node leads it, otherwise by calling the same
   * route on the leader with `?shard_id=` (answer picked by `pick`). A hop (`pinned`) only runs locally.
   */
  private async onLeader<T>(
    shard: number, method: string, path: string, headers: Record<string, string> | (() => Record<string, string>), body: unknown, pinned: boolean, timeoutMs: number,
    local: () => Promise<T>, pick: (answer: unknown) => T,
  ): Promise<T> {
    const deadline = Date.now() + this.rt.config.cluster.forward_timeout_ms;
    for (;;) {
      const leader = await this.fwd.leaderOf(shard, deadline);
      if (leader === 'self') {
        try {
          return await local();
        } catch (raw) {
          // Raft's own errors as the contract's: a join's catch-up wait that loses the leadership throws a
          // plain NotLeaderError, which answered 500 (the join is asked again of the new leader instead)
          const err = fromRaftError(raw);
          if (!(err instanceof Moved || err instanceof NotLeaderStrataError) || Date.now() >= deadline) throw err;
          continue;
        }
      }
      if (pinned) throw unavailable(`This node no longer leads shard ${shard}; retry.`, 'no_leader');
      let answer;
      try {
        answer = await this.fwd.call(leader.url, method, `${path}?shard_id=${shard}`, typeof headers === 'function' ? headers() : headers, body, Date.now() + timeoutMs);
      } catch (err) {
        if (Date.now() >= deadline) throw unavailable(`The leader of shard ${shard} could not be reached: ${(err as Error).message}`, 'no_leader');
        await new Promise((r) => setTimeout(r, 50));
        continue;
      }
      if (answer.status === 503 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
        continue;
      }
      if (answer.status !== 200) {
        const b = (answer.body ?? {}) as { error?: string; code?: string };
        // The leader runs this build: its code is one of ours. One that is not is relayed as unavailable.
        throw new StrataError(isErrorCode(b.code) ? b.code : 'unavailable', b.error ?? `shard ${shard}'s leader answered ${answer.status}`);
      }
      return pick(answer.body);
    }
  }
}

function removedConflict(id: number): StrataError {
  return conflict(`Node id ${id} was removed from this cluster and cannot be reused; start the node with a new id and an empty data directory.`);
}

/**
 * Events and memory units a replica's store counts; null while the store is not open. A replica being
 * wiped or reopened (moved off this node) or removed (a retired group) has its store closed for a
 * moment, and a read of a closed store throws: GET /v1/cluster/status answered 500 then
 * (test/cluster/placement.test.ts, node 2, in the whole suite).
 */
export function recordsOfReplica(db: Pick<StateDb, 'counterSync'>): number | null {
  try {
    return db.counterSync('events') + db.counterSync('units');
  } catch {
    return null;
  }
}

/** Whether a retired group's replica has no webhook delivery queued; null while its store is not open (recordsOfReplica). */
export async function outboxEmptyOf(db: Pick<StateDb, 'webhookOutbox'>): Promise<boolean | null> {
  try {
    // keys() of a closed store throws at once, not through the promise
    return (await db.webhookOutbox.keys({ limit: 1 }).all()).length === 0;
  } catch {
    return null;
  }
}
