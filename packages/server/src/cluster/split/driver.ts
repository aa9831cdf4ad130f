/**
 * Drives the splits recorded in shard 0 (docs/cluster.md "Splitting a group"), on the leader of shard 0
 * only, like the placement loop. Every step is a command in a log and may be repeated, so a new leader
 * of shard 0 simply starts each split in flight again from its first step:
 *
 * 1. the new group's placement is recorded (the old group's voters, up to the replication factor: the
 *    copy stays on the nodes that hold the records; the planner moves replicas later like any group's),
 *    and one of its voters initializes it;
 * 2. the old group fences the moving range (`range.fence`): from that entry on it refuses writes about
 *    those users, so its records of them are final;
 * 3. the new group fences the range itself and reserves event numbers for the copy (`range.receive`);
 *    the records are read in chunks from a replica of the old group that has applied the fence and
 *    proposed to the new group (`range.seed`): once the last chunk is committed, a quorum of the new
 *    group holds them all;
 * 4. shard 0 commits the split (`cluster.split` commit): every node routes the range to the new group
 *    from that entry on;
 * 5. the new group lifts its fence (it serves the range from then on), the old group deletes the moved
 *    records (`range.drop`, whole users at a time) and shard 0 notes it.
 *
 * A merge (docs/cluster.md "Merging two groups") is the same hand-over of the old group's whole range to
 * an existing group, adjacent: no placing or initializing (it serves its own users meanwhile).
 *
 * An abort (the operator's, `POST /v1/cluster/groups/:id/split/abort` or `…/merge/abort`) takes the split
 * out of flight in shard 0; this loop then puts its groups back: the old group unfenced first (its
 * users are writable again even while the new group is unreachable), then what was copied into the new
 * group cleared (`range.clear`) and a merge's receiving fence lifted; shard 0 then forgets it (`cleared`),
 * and only then is the new group's id free for another split.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import {
  movingRange, rangesOfGroup, readFences, readHalf, settle, unavailable, type Command, type HalfCursor, type KeyRangeTable, type KeySplit, type RangeFenceSpec, type RangeRecord,
} from '@strata/store';
import type { Forwarder } from '../forward';
import type { PeerSigner } from '../peer-auth';
import type { ClusterRuntime } from '../runtime';
import type { Shard } from '../../shards';
import type { PlacementDirectory } from '../placement/directory';
import type { KeyRangeDirectory } from '../placement/range-directory';

/** records per seed command, and about this many bytes of JSON (a raft entry stays well under its limits) */
export const SEED_RECORDS = 500;
export const SEED_BYTES = 512 * 1024;
/** records per drop command */
export const DROP_RECORDS = 2000;

export interface SplitDriverDeps {
  rt: ClusterRuntime;
  meta: Shard;
  ranges: KeyRangeDirectory;
  directory: PlacementDirectory;
  fwd: Forwarder;
  signer: PeerSigner;
  logger: Logger;
  shards: () => Shard[];
  /** retired groups whose leader reported an empty webhook outbox in the placement loop's last round */
  outboxEmpty: () => ReadonlySet<number>;
}

/** A split's progress on this node (status): which step it is at. */
export interface SplitProgress {
  split: KeySplit;
  step: 'placing' | 'initializing' | 'fencing' | 'receiving' | 'copying' | 'committing' | 'dropping' | 'aborting';
  records_copied: number;
  records_dropped: number;
  error: string | null;
  /** the new group was initialized by this node's driver (not again) */
  initialized?: boolean;
}

const keyOf = (s: KeySplit) => `${s.group}/${s.point}/${s.new_group}`;

/** Pure: the keys a split or merge moves, as the table stood before its commit (null: it no longer fits the table). */
export function movingOf(table: KeyRangeTable, split: KeySplit): { start: number; end: number } | null {
  return split.merge ? { start: split.point, end: split.merge.end } : movingRange(table, split);
}

/** Pure: the fence of a split: the moving half of the old group's range, under the table's base. */
export function fenceOf(base: number, split: KeySplit, end: number): RangeFenceSpec {
  return { base, start: split.point, end, new_group: split.new_group };
}

/** Pure: the retired groups that may be removed: not removed yet, named by no split or merge unfinished, their outbox reported empty. */
export function removableGroups(
  ranges: Pick<KeyRangeDirectory, 'retired' | 'removed' | 'splits' | 'drops' | 'aborts'>, outboxEmpty: ReadonlySet<number>,
): number[] {
  const busy = new Set([...ranges.splits(), ...ranges.drops(), ...ranges.aborts()].flatMap((s) => [s.group, s.new_group]));
  return ranges.retired().filter((g) => !ranges.removed().includes(g) && !busy.has(g) && outboxEmpty.has(g));
}

export class SplitDriver {
  private readonly running = new Map<string, Promise<void>>();
  readonly progress = new Map<string, SplitProgress>();
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(private readonly deps: SplitDriverDeps) {}

  start(): void {
    const every = Math.max(100, this.deps.rt.config.cluster.placement_interval_ms);
    const loop = () => {
      if (this.stopped) return;
      this.tick();
      this.timer = setTimeout(loop, every);
    };
    this.timer = setTimeout(loop, every);
  }

  /** This node's store of a group (null when it has not opened it). */
  shard(group: number): Shard | null {
    return this.deps.shards().find((s) => s.id === group) ?? null;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await Promise.all(this.running.values());
  }

  /** Starts a task for each split in flight or dropping that has none (on the leader of shard 0 only). */
  private tick(): void {
    if (!this.deps.meta.log.isLeader()) return;
    for (const split of [...this.deps.ranges.splits(), ...this.deps.ranges.drops(), ...this.deps.ranges.aborts()]) {
      // one task per split: an abort's clean-up starts only once the task that moved the range has stopped
      const key = keyOf(split);
      if (this.running.has(key)) continue;
      const aborted = this.deps.ranges.aborts().some((s) => keyOf(s) === key);
      this.running.set(key, (aborted ? this.putBack(split) : this.drive(split)).finally(() => this.running.delete(key)));
    }
    for (const group of removableGroups(this.deps.ranges, this.deps.outboxEmpty())) {
      const key = `remove/${group}`;
      if (this.running.has(key)) continue;
      this.running.set(key, this.removeRetired(group).finally(() => this.running.delete(key)));
    }
  }

  /**
   * A retired group whose records are dropped and whose webhook outbox is empty is removed (docs/cluster.md
   * "Removing a retired group"): `cluster.remove_group` in shard 0; every node wipes its replica when it
   * applies it (node.ts). Refused (and tried again next round) while a split or merge names it.
   */
  private async removeRetired(group: number): Promise<void> {
    try {
      const answer = settle(await this.deps.meta.log.propose({ type: 'cluster.remove_group', at: new Date().toISOString(), group })) as { status: string };
      this.deps.logger.info({ shard: group, status: answer.status }, 'retired group removed: every node wipes its replica');
    } catch (err) {
      this.deps.logger.info({ shard: group, err: (err as Error).message }, 'removing a retired group not done; trying again');
    }
  }

  private active(): boolean {
    return !this.stopped && this.deps.meta.log.isLeader();
  }

  /** Runs a split to its end, each step again after a failure, while this node leads shard 0. */
  private async drive(split: KeySplit): Promise<void> {
    const key = keyOf(split);
    const p: SplitProgress = this.progress.get(key) ?? { split, step: 'placing', records_copied: 0, records_dropped: 0, error: null };
    this.progress.set(key, p);
    while (this.active()) {
      try {
        const committed = this.deps.ranges.drops().some((s) => keyOf(s) === key);
        if (!committed && !this.deps.ranges.splits().some((s) => keyOf(s) === key)) break; // aborted, or done
        if (committed) await this.dropMoved(split, p);
        else await this.moveRange(split, p);
        p.error = null;
        if (!committed) continue; // committed now: the drop next
        this.progress.delete(key);
        this.deps.logger.info({ split }, 'split done: the old group dropped the moved records');
        return;
      } catch (err) {
        p.error = (err as Error).message;
        this.deps.logger.info({ split, step: p.step, err: p.error }, 'split step not done; trying again');
        await sleep(Math.max(250, this.deps.rt.config.cluster.placement_interval_ms));
      }
    }
  }

  /** Steps 1 to 4. */
  private async moveRange(split: KeySplit, p: SplitProgress): Promise<void> {
    const { meta, ranges } = this.deps;
    const table = ranges.table();
    const moving = movingOf(table, split);
    if (!moving) throw new Error('the split no longer fits the table');
    const fence = fenceOf(table.base, split, moving.end);
    const at = () => new Date().toISOString();
    if (!split.merge) await this.ensureGroup(split, p);
    p.step = 'fencing';
    const fenced = settle(await this.command(split.group, { type: 'range.fence', at: at(), fence })) as { stream_index: number };
    // the receiving group fences the range itself and reserves a block of event numbers as long as the
    // old group's numbering at its fence (a merge's has events of its own, numbered alike); a retry
    // answers the block reserved the first time
    p.step = 'receiving';
    const { shift } = settle(await this.command(split.new_group, { type: 'range.receive', at: at(), fence, span: fenced.stream_index })) as { shift: number };
    p.step = 'copying';
    p.records_copied = 0;
    let cursor: HalfCursor | null = { sub: 0, after: null };
    while (cursor) {
      if (!this.active()) throw new Error('no longer the leader of shard 0');
      if (!this.inFlight(split)) throw new Error('the split is no longer in flight (aborted)');
      const chunk: { records: RangeRecord[]; next: HalfCursor | null } = await this.readChunk(split.group, fence, cursor);
      if (chunk.records.length) settle(await this.command(split.new_group, { type: 'range.seed', at: at(), seq_floor: 0, seq_shift: shift, records: chunk.records }));
      p.records_copied += chunk.records.length;
      cursor = chunk.next;
    }
    p.step = 'committing';
    settle(await meta.log.propose({ type: 'cluster.split', at: at(), phase: 'commit', split }));
    this.deps.logger.info({ split, records: p.records_copied }, `${split.merge ? 'merge' : 'split'} committed: the range is routed to the new group`);
  }

  private inFlight(split: KeySplit): boolean {
    return this.deps.ranges.splits().some((s) => keyOf(s) === keyOf(split));
  }

  /** Steps 1 and 2 of a split: the new group placed and initialized. */
  private async ensureGroup(split: KeySplit, p: SplitProgress): Promise<void> {
    const { meta, directory } = this.deps;
    const at = () => new Date().toISOString();
    p.step = 'placing';
    const voters = this.votersFor(split.group);
    if (!directory.recorded(split.new_group)) {
      settle(await meta.log.propose({ type: 'cluster.placement', at: at(), groups: [{ group_id: split.new_group, voters, learners: [], leader: null, move: null }] }));
    }
    p.step = 'initializing';
    // Once: a voter still blank must not be bootstrapped again after its group elected a leader (the
    // placement may have changed the voters since; an identical bootstrap entry on a blank voter before
    // that is harmless, as every voter bootstrapped with the same configuration is).
    const placed = directory.get(split.new_group);
    const local = this.deps.rt.shardIds().includes(split.new_group) ? this.deps.rt.group(split.new_group).status() : null;
    if (!p.initialized && (placed?.leader ?? null) === null && !(local && local.members.length > 0 && local.leader !== null)) {
      await this.initialize(split.new_group, placed?.voters ?? voters);
    }
    p.initialized = true;
  }

  /** Step 5. */
  private async dropMoved(split: KeySplit, p: SplitProgress): Promise<void> {
    const table = this.deps.ranges.table();
    const end = split.merge ? split.merge.end : rangesOfGroup(table, split.new_group).find((r) => r.start === split.point)?.end;
    if (end === undefined) throw new Error('the new group no longer owns the range it was given');
    const fence = fenceOf(table.base, split, end);
    // the directory names the receiving group now: it serves the range from here on
    p.step = 'receiving';
    settle(await this.command(split.new_group, { type: 'range.unfence', at: new Date().toISOString(), fence }));
    p.step = 'dropping';
    for (;;) {
      if (!this.active()) throw new Error('no longer the leader of shard 0');
      const answer = settle(await this.command(split.group, { type: 'range.drop', at: new Date().toISOString(), fence, limit: DROP_RECORDS })) as { deleted: number; done: boolean };
      p.records_dropped += answer.deleted;
      if (answer.done) break;
    }
    settle(await this.deps.meta.log.propose({ type: 'cluster.split', at: new Date().toISOString(), phase: 'dropped', split }));
  }

  /** An aborted split or merge: its groups put back (module comment), each step again after a failure, while this node leads shard 0. */
  private async putBack(split: KeySplit): Promise<void> {
    const key = keyOf(split);
    const p: SplitProgress = this.progress.get(key) ?? { split, step: 'aborting', records_copied: 0, records_dropped: 0, error: null };
    this.progress.set(key, p);
    while (this.active() && this.deps.ranges.aborts().some((s) => keyOf(s) === key)) {
      try {
        p.step = 'aborting';
        const table = this.deps.ranges.table();
        const moving = movingOf(table, split);
        if (!moving) throw new Error('the aborted split no longer fits the table');
        const fence = fenceOf(table.base, split, moving.end);
        const at = () => new Date().toISOString();
        settle(await this.command(split.group, { type: 'range.unfence', at: at(), fence }));
        // a split's new group holds something only once placed (seeds come after); it may have been
        // placed and not initialized yet: initialized here, so it can take the clear (and a later split)
        if (split.merge || this.deps.directory.recorded(split.new_group)) {
          if (!split.merge) await this.ensureGroup(split, p);
          p.step = 'aborting';
          for (;;) {
            if (!this.active()) throw new Error('no longer the leader of shard 0');
            const answer = settle(await this.command(split.new_group, { type: 'range.clear', at: at(), fence, limit: DROP_RECORDS })) as { deleted: number; done: boolean };
            p.records_dropped += answer.deleted;
            if (answer.done) break;
          }
          settle(await this.command(split.new_group, { type: 'range.unfence', at: at(), fence }));
        }
        settle(await this.deps.meta.log.propose({ type: 'cluster.split', at: at(), phase: 'cleared', split }));
        this.progress.delete(key);
        this.deps.logger.info({ split }, `${split.merge ? 'merge' : 'split'} aborted: its groups are as before`);
        return;
      } catch (err) {
        p.error = (err as Error).message;
        this.deps.logger.info({ split, err: p.error }, 'putting an aborted split back not done; trying again');
        await sleep(Math.max(250, this.deps.rt.config.cluster.placement_interval_ms));
      }
    }
  }

  /** A group's voters, its leader first, up to `rf` (the replication factor). */
  private votersFor(group: number, rf = this.deps.rt.config.cluster.replication_factor): number[] {
    const { rt, directory } = this.deps;
    const placed = group === 0 ? null : directory.get(group);
    const voters = placed ? placed.voters : rt.group(0).status().members.filter((m) => m.voter).map((m) => m.id);
    const leader = placed ? placed.leader : rt.group(0).leaderId();
    const ordered = [...voters].sort((a, b) => a - b);
    return (leader !== null && ordered.includes(leader) ? [leader, ...ordered.filter((v) => v !== leader)] : ordered).slice(0, rf);
  }

  /** Initializes the new group on one of its voters (the others are sent the log by its leader). */
  private async initialize(group: number, voters: number[]): Promise<void> {
    const { rt, fwd, signer } = this.deps;
    const members = voters.map((id) => ({ id, url: rt.urlOf(id, 0) ?? '' }));
    if (members.some((m) => m.url === '')) throw new Error('a voter of the new group has no known address');
    const path = `/v1/cluster/groups/${group}/initialize`;
    const body = { members };
    for (const m of members) {
      try {
        if (m.id === rt.config.cluster.node_id) {
          if (!rt.shardIds().includes(group)) continue; // not opened here yet
          await rt.group(group).initialize(members);
          return;
        }
        const r = await fwd.call(m.url, 'post', path, signer.sign(m.id, 'POST', path, body), body, Date.now() + 5000);
        if (r.status === 200) return;
      } catch {
        // not reachable, or the group not opened there yet: the next voter
      }
    }
    throw unavailable(`Shard ${group} could not be initialized yet.`);
  }

  /** Proposes a command on a group's leader (this node's replica, or another node's through a signed request). */
  private async command(group: number, command: Command): Promise<unknown> {
    const { fwd, signer, rt, shards } = this.deps;
    const deadline = Date.now() + rt.config.cluster.forward_timeout_ms;
    const leader = await fwd.leaderOf(group, deadline);
    if (leader === 'self') return shards().find((s) => s.id === group)!.log.propose(command);
    const path = `/v1/cluster/groups/${group}/range-command`;
    const body = { command };
    const r = await fwd.call(leader.url, 'post', path, signer.sign(leader.id, 'POST', path, body), body, deadline + 30_000);
    if (r.status !== 200) throw new Error(`${path} on node ${leader.id}: ${r.status} ${(r.body as { error?: string } | null)?.error ?? ''}`);
    return r.body;
  }

  /** A chunk of the moving records, read from a replica of the old group that has applied the fence. */
  private async readChunk(group: number, fence: RangeFenceSpec, cursor: HalfCursor): Promise<{ records: RangeRecord[]; next: HalfCursor | null }> {
    const { fwd, signer, shards, rt } = this.deps;
    const local = shards().find((s) => s.id === group);
    if (local && local.log.isLeader()) return readFenced(local, fence, cursor);
    const path = `/v1/cluster/groups/${group}/range-records`;
    const body = { fence, cursor };
    // the group's voters, its leader first (it has applied the fence: the fence's proposal returned there)
    const errors: string[] = [];
    for (const id of this.votersFor(group, Infinity)) {
      const url = rt.urlOf(id, 0);
      if (id === rt.config.cluster.node_id || !url) continue;
      try {
        const r = await fwd.call(url, 'post', path, signer.sign(id, 'POST', path, body), body, Date.now() + 30_000);
        if (r.status === 200) return r.body as { records: RangeRecord[]; next: HalfCursor | null };
        errors.push(`node ${id}: ${r.status}`);
      } catch (err) {
        errors.push(`node ${id}: ${(err as Error).message}`);
      }
    }
    if (local) return readFenced(local, fence, cursor);
    throw new Error(`${path}: no replica answered (${errors.join('; ')})`);
  }
}

/** Reads a chunk of a fenced range from this replica; 503 when it has not applied the fence (yet). */
export async function readFenced(shard: Shard, fence: RangeFenceSpec, cursor: HalfCursor): Promise<{ records: RangeRecord[]; next: HalfCursor | null }> {
  const fences = await readFences(shard.db);
  const mine = fences.find((f) => f.start === fence.start && f.end === fence.end && f.new_group === fence.new_group && f.base === fence.base);
  if (!mine || mine.state !== 'moving') throw unavailable(`Shard ${shard.id} has not applied this fence here (or the range moved already).`);
  return readHalf(shard.db, fence, cursor, SEED_RECORDS, SEED_BYTES);
}
