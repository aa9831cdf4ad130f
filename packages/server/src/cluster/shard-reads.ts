/**
 * Reads over every shard group on a node that does not hold every group (placement: a group other
 * than 0 lives on `cluster.replication_factor` nodes; this node's replica of any other is empty or
 * stale). A cross-shard operation asks `each(name, args)` for one answer per group: a group held here
 * is read from the local replica; the others are asked of nodes that hold them, one peer-signed
 * request per node carrying every group it is asked for (`POST /v1/cluster/shard-reads`, answered by
 * `answer` there). A node asked for a group it does not hold says so for that group and the group is
 * asked of its next replica; when no holder answers within `cluster.forward_timeout_ms`: 503. Where
 * every group is held here (one node, or replication on every node) nothing leaves the node.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { badRequest, StrataError, unavailable } from '@strata/store';
import type { ShardRouter } from '../shards';
import type { Forwarder } from './forward';
import type { PeerSigner } from './peer-auth';
import { isReadName, parseReadArgs, runRead, type ReadArgs, type ReadName, type ReadResult } from './read-queries';

export const SHARD_READS_PATH = '/v1/cluster/shard-reads';

/** Where groups live (placement/routing.ts GroupRouting). */
export interface ReadRouting {
  holds(shard: number): boolean;
  replicas(shard: number): number[];
  urlOf(nodeId: number, shard: number): string | null;
}

/** What reaching other nodes takes; attached once the cluster runtime is built (node.ts builds services first). */
export interface ReadPeers {
  routing: ReadRouting;
  signer: Pick<PeerSigner, 'sign'>;
  forwarder: Pick<Forwarder, 'call'>;
}

export interface ReadOptions {
  /** the groups to read, in the order of the answer (default: every group, in id order) */
  groups?: number[];
  /** each group's replica first applies everything committed before the call (ReadIndex) */
  linearizable?: boolean;
}

/** The body of `POST /v1/cluster/shard-reads`. */
export interface ShardReadRequest {
  query: ReadName;
  args: unknown;
  groups: number[];
  linearizable: boolean;
}

/** One group's part of the answer: its result, or why this node could not give it (the asker tries another). */
export type GroupAnswer = { group: number; ok: true; value: unknown } | { group: number; ok: false; code: string; error: string };

export class ShardReads {
  private peers: ReadPeers | null = null;

  constructor(private readonly shards: ShardRouter, private readonly timeoutMs: number, private readonly pollMs = 25) {}

  attach(peers: ReadPeers): void {
    this.peers = peers;
  }

  /** This node serves the group's reads (before `attach`, and without placement: every group). */
  holds(group: number): boolean {
    return this.peers ? this.peers.routing.holds(group) : true;
  }

  /** One result per group (`opts.groups`, default all), in that order. */
  async each<N extends ReadName>(name: N, args: ReadArgs<N>, opts: ReadOptions = {}): Promise<ReadResult<N>[]> {
    const groups = opts.groups ?? this.shards.groupIds();
    const linearizable = opts.linearizable === true;
    const remote = groups.filter((g) => !this.holds(g));
    const [local, fetched] = await Promise.all([
      Promise.all(groups.map((g) => (remote.includes(g) ? undefined : this.runLocal(g, name, args, linearizable)))),
      remote.length > 0 ? this.fetch(name, args, remote, linearizable) : new Map<number, unknown>(),
    ]);
    return groups.map((g, i) => (remote.includes(g) ? fetched.get(g) : local[i]) as ReadResult<N>);
  }

  /** One group's result (a user's group, when the request was not routed to a holder of it). */
  async one<N extends ReadName>(group: number, name: N, args: ReadArgs<N>, opts: Omit<ReadOptions, 'groups'> = {}): Promise<ReadResult<N>> {
    return (await this.each(name, args, { ...opts, groups: [group] }))[0];
  }

  /**
   * The asked node's side: the body is checked (400), then each group is read here when this node
   * holds it, and refused for that group otherwise (never answered from a replica that is not there).
   */
  async answer(body: unknown): Promise<{ results: GroupAnswer[] }> {
    // ids up to the highest live one: they have gaps once a retired group is removed (one not open here is refused below)
    const req = parseShardReadRequest(body, Math.max(...this.shards.groupIds(), ...this.shards.all().map((s) => s.id)) + 1);
    const args = parseReadArgs(req.query, req.args);
    const results = await Promise.all(req.groups.map(async (group): Promise<GroupAnswer> => {
      if (!this.holds(group)) return { group, ok: false, code: 'no_leader', error: `This node does not hold shard ${group}.` };
      try {
        return { group, ok: true, value: await this.runLocal(group, req.query, args, req.linearizable) };
      } catch (err) {
        // a read barrier without a leader: another replica may do better
        if (err instanceof StrataError && err.status === 503) return { group, ok: false, code: err.code, error: err.message };
        throw err;
      }
    }));
    return { results };
  }

  private async runLocal<N extends ReadName>(group: number, name: N, args: ReadArgs<N>, linearizable: boolean): Promise<ReadResult<N>> {
    // by id, not position: a removed group leaves a gap; one removed a moment ago is not here (503, another replica may have it)
    const shard = this.shards.byId(group);
    if (!shard) throw unavailable(`This node does not hold shard ${group}.`, 'no_leader');
    if (linearizable) await shard.log.readBarrier();
    // only the users this node's key-range directory assigns to the group (read-queries.ts ReadQuery.run)
    return runRead(name, shard.db, args, (userId) => this.shards.groups.groupOf(userId) === group);
  }

  /**
   * Asks holders for the groups: each group goes to the first of its replicas not tried yet in this
   * round, one request per node; a group refused or unanswered goes to its next replica; when every
   * replica of the groups left was tried, the round starts again (the directory may have moved on)
   * until the deadline. Reads change nothing, so asking again is always safe.
   */
  private async fetch(name: ReadName, args: unknown, groups: number[], linearizable: boolean): Promise<Map<number, unknown>> {
    const peers = this.peers!;
    const deadline = Date.now() + this.timeoutMs;
    const done = new Map<number, unknown>();
    const tried = new Map<number, Set<number>>(groups.map((g) => [g, new Set<number>()]));
    let lastError = '';
    for (;;) {
      const left = groups.filter((g) => !done.has(g));
      if (left.length === 0) return done;
      const byNode = new Map<number, { url: string; groups: number[] }>();
      for (const g of left) {
        for (const node of peers.routing.replicas(g)) {
          const url = tried.get(g)!.has(node) ? null : peers.routing.urlOf(node, g);
          if (!url) continue;
          const batch = byNode.get(node) ?? { url, groups: [] };
          batch.groups.push(g);
          byNode.set(node, batch);
          break;
        }
      }
      const now = Date.now();
      if (now >= deadline) {
        throw unavailable(`No node holding shard ${left.join(', ')} answered in time (its replicas are moving or down${lastError ? `; last: ${lastError}` : ''}); retry shortly.`, 'no_leader');
      }
      if (byNode.size === 0) {
        for (const set of tried.values()) set.clear();
        await sleep(this.pollMs);
        continue;
      }
      // A node that does not answer gets half the time left, so another replica still can.
      const attemptDeadline = Math.min(deadline, now + Math.max(250, Math.ceil((deadline - now) / 2)));
      await Promise.all([...byNode].map(async ([node, batch]) => {
        for (const g of batch.groups) tried.get(g)!.add(node);
        const body: ShardReadRequest = { query: name, args, groups: batch.groups, linearizable };
        try {
          const r = await peers.forwarder.call(batch.url, 'POST', SHARD_READS_PATH, peers.signer.sign(node, 'POST', SHARD_READS_PATH, body), body, attemptDeadline);
          const results = (r.body as { results?: unknown } | null)?.results;
          if (r.status !== 200 || !Array.isArray(results)) {
            lastError = `node ${node} answered ${r.status}: ${String((r.body as { error?: unknown } | null)?.error ?? '')}`;
            return;
          }
          for (const a of results as GroupAnswer[]) {
            if (!batch.groups.includes(a?.group)) continue;
            if (a.ok === true) done.set(a.group, a.value);
            else lastError = `node ${node}: ${String(a.error)}`;
          }
        } catch (err) {
          lastError = `node ${node}: ${(err as Error).message}`;
        }
      }));
    }
  }
}

/** The body of a shard-read request, checked (400 `validation_failed` naming the field). */
export function parseShardReadRequest(body: unknown, shardCount: number): ShardReadRequest {
  const bad = (path: string, message: string) => badRequest('validation_failed', `${path.slice(1)} ${message}.`, [{ path, message }]);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('validation_failed', 'The body must be an object {query, args, groups, linearizable?}.', [{ path: '', message: 'must be an object' }]);
  const { query, args, groups, linearizable } = body as Record<string, unknown>;
  if (!isReadName(query)) throw bad('/query', 'names no read of this node');
  if (!Array.isArray(groups) || groups.length === 0 || groups.length > shardCount
    || !groups.every((g) => Number.isInteger(g) && (g as number) >= 0 && (g as number) < shardCount) || new Set(groups).size !== groups.length) {
    throw bad('/groups', `must be distinct shard ids from 0 to ${shardCount - 1}`);
  }
  if (linearizable !== undefined && typeof linearizable !== 'boolean') throw bad('/linearizable', 'must be a boolean');
  return { query, args, groups: groups as number[], linearizable: linearizable === true };
}
