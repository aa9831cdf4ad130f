/**
 * A shard group's data where this node cannot reach it itself (placement, docs/cluster.md): a group
 * other than 0 is on `cluster.replication_factor` nodes only, and every node opens every group, so the
 * local replica of a group this node does not hold is empty or stale, and it can propose only to a
 * group it leads. Two operations need more than one user's forwarded request:
 *
 * - an import (operations/import.ts) proposes each chunk to its group's leader: here when this node
 *   leads it, else as a peer-signed `POST /v1/cluster/groups/:group_id/propose` on the leader
 *   (routes/cluster-groups.ts), looked for again while it answers 503 or cannot be reached;
 * - an export of every user (operations/export.ts) reads a group it does not hold from a node that
 *   does: a peer-signed `GET /v1/cluster/groups/:group_id/records`, streamed, which the holder reads
 *   from one LevelDB snapshot (so the group's lines are one applied state there, as they are here).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Agent, Dispatcher } from 'undici';
/** undici, required on first use: a single node holds every group and asks no other node, and its start loads less (issue 29). */
let undiciModule: typeof import('undici') | null = null;
const undici = (): typeof import('undici') => (undiciModule ??= require('undici') as typeof import('undici'));

import { NotStoredError, StrataError, unavailable, type ExportRecord, type ImportAnswer, type ImportCommand } from '@strata/store';
import { ndjsonLines } from '../operations/export-lines';
import type { LeaderView } from './forward';
import { LeaderDeadline } from './leader-deadline';
import { importBody, LEADER_HEADER, proposePath, recordsPath } from './group-wire';
import { answerError, notSent, peerJson } from './peer-answer';
import { sha256Hex, type PeerSigner } from './peer-auth';

export interface RemoteGroupsOptions {
  /** where each group is (GroupRouting): held here, its voters, their URLs */
  view: LeaderView;
  /** the leader of a group, waited for until a deadline (Forwarder.leaderOf) */
  leaderOf(shard: number, deadline: number): Promise<'self' | { id: number; url: string }>;
  signer: Pick<PeerSigner, 'sign' | 'signDigest'>;
  /** how long to look for a leader or a holder that answers (cluster.forward_timeout_ms) */
  timeoutMs: number;
  /** how long one proposal may take on the leader once sent (server.request_timeout_ms) */
  requestTimeoutMs: number;
  /** the longest line accepted from a holder's record stream */
  maxLineBytes: number;
  /** how often to look again while no node answers (ms) */
  pollMs?: number;
}

/** A refusal every node may give for a while (no leader, not the leader, not held, overloaded): ask again. */
const passing = (err: unknown): err is StrataError => err instanceof StrataError && err.status === 503;

/** The leader a refusal named (LEADER_HEADER), by refusal. */
const leaderNamed = new WeakMap<Error, number>();

export class RemoteGroups {
  /** chunks whose search for a leader started afresh after a "not stored" answer (proposeImport) */
  notStoredRenewals = 0;
  /** made on the first request to another node (see undici above) */
  private agent: Agent | null = null;

  constructor(private readonly opts: RemoteGroupsOptions) {}

  /** This node serves the group's reads from its own replica. */
  holds(shard: number): boolean {
    return this.opts.view.holds ? this.opts.view.holds(shard) : true;
  }

  /**
   * Proposes an `import.records` command to the group's leader and answers what it applied: `local`
   * when this node leads the group, else the leader's propose route (the directory's leader first for a
   * group not held here, then its other voters: one of them leads it). A 503 (an election, a leader that
   * moved, too many writes waiting) or a leader that cannot be reached is asked again until the timeout.
   * Asking again is safe: apply skips every record whose id is stored, so a chunk applied twice (a
   * proposal whose outcome was unknown) only counts its records as skipped the second time.
   * A "not stored" answer (the leader lost leadership before the chunk committed, here or on the node
   * it was sent to: NotStoredError, or its header on a peer's 503) starts the timeout afresh
   * (LeaderDeadline): it arrives only once a new leader has committed, often just as a timeout counted
   * from the first attempt runs out.
   */
  async proposeImport(shard: number, command: ImportCommand, local: () => Promise<ImportAnswer>): Promise<ImportAnswer> {
    const { view } = this.opts;
    const deadline = new LeaderDeadline(this.opts.timeoutMs);
    const path = proposePath(shard);
    let body: Buffer | null = null;
    let last: StrataError | null = null;
    /** a refusal to ask again after; a "not stored" one starts the search for the leader afresh */
    const refused = (err: StrataError) => {
      last = err;
      if (err instanceof NotStoredError && deadline.renew()) this.notStoredRenewals++;
    };
    for (;;) {
      const leader = await this.opts.leaderOf(shard, deadline.at);
      if (leader === 'self') {
        try {
          return await local();
        } catch (err) {
          if (!passing(err)) throw err;
          refused(err);
          if (deadline.passed()) throw err;
        }
      } else {
        body ??= importBody(command);
        const targets = [leader.id, ...(this.holds(shard) ? [] : (view.replicas?.(shard) ?? []).filter((id) => id !== leader.id))];
        for (let i = 0; i < targets.length; i++) {
          const id = targets[i];
          const url = id === leader.id ? leader.url : view.urlOf(id, shard);
          if (!url) continue;
          try {
            return await this.post(id, url, path, body);
          } catch (err) {
            if (!passing(err)) throw err;
            refused(err);
            // A node that no longer leads names the one it knows: asked next. This node's own view (or
            // the directory's) may lag a leadership move by seconds on a busy machine, and asking only
            // the old leader again until the deadline failed the import with 503.
            const named = leaderNamed.get(err);
            if (named !== undefined && named !== view.nodeId && !targets.slice(i + 1).includes(named)) targets.splice(i + 1, 0, named);
          }
        }
      }
      if (deadline.passed()) throw last ?? unavailable(`No leader of shard ${shard} took the import's chunk in time; import the file again (stored records are skipped).`, 'no_leader');
      await sleep(this.opts.pollMs ?? 50);
    }
  }

  /** One proposal on one node: its answer, or its refusal as the StrataError it was (503: try another). */
  private async post(to: number, url: string, path: string, body: Buffer): Promise<ImportAnswer> {
    const digest = sha256Hex(body);
    let r: Dispatcher.ResponseData;
    try {
      r = await undici().request(url.replace(/\/+$/, '') + path, {
        method: 'POST', dispatcher: this.dispatcher(), body,
        headers: { ...this.opts.signer.signDigest(to, 'POST', path, digest), 'content-type': 'application/x-ndjson' },
        headersTimeout: this.opts.requestTimeoutMs, bodyTimeout: this.opts.requestTimeoutMs,
      });
    } catch (err) {
      if (notSent(err)) throw unavailable(`Node ${url} could not be reached.`, 'no_leader');
      // sent, and no answer: the chunk may or may not be stored (asking again is safe, see proposeImport)
      throw unavailable(`The leader did not answer the import's chunk (${(err as Error).message}); it may or may not be stored.`, 'no_leader');
    }
    const parsed = peerJson(await r.body.text());
    if (r.statusCode !== 200) {
      // nothing stored there (leadership moved before the chunk committed): a definite answer, read as
      // Forwarder.send reads it; proposeImport then looks for the leader afresh
      const notStored = r.statusCode === 503 && r.headers[NotStoredError.HEADER] !== undefined;
      const err = notStored ? new NotStoredError(answerError(r.statusCode, parsed).message) : answerError(r.statusCode, parsed, `The leader at ${url}`);
      const named = Number(r.headers[LEADER_HEADER]);
      if (Number.isInteger(named) && named > 0) leaderNamed.set(err, named);
      throw err;
    }
    return parsed as ImportAnswer;
  }

  /**
   * Every record of a group this node does not hold, read on a node that holds it (the directory's
   * leader first, the next voter when one cannot be reached or answers 503), from one LevelDB snapshot
   * there; with `linearizable`, that node first waits until its replica has applied everything
   * committed. Pulled: the holder's stream waits (TCP back-pressure) while the caller does. A holder
   * that fails after its first line cuts the stream, and this iterator throws: the records already
   * produced cannot be taken back.
   */
  async *groupRecords(shard: number, linearizable: boolean): AsyncGenerator<ExportRecord> {
    const { view } = this.opts;
    const deadline = Date.now() + this.opts.timeoutMs;
    const path = recordsPath(shard, linearizable);
    let last: StrataError | null = null;
    for (;;) {
      for (const id of view.replicas?.(shard) ?? []) {
        const url = view.urlOf(id, shard);
        if (!url) continue;
        let r: Dispatcher.ResponseData;
        try {
          r = await undici().request(url.replace(/\/+$/, '') + path, {
            method: 'GET', dispatcher: this.dispatcher(), headers: this.opts.signer.sign(id, 'GET', path, undefined),
            headersTimeout: Math.max(1000, deadline - Date.now()), bodyTimeout: 0,
          });
        } catch (err) {
          // a read: any node that did not answer is passed over for the next
          last = unavailable(`Node ${id} did not answer for shard ${shard} (${(err as Error).message}).`, 'no_leader');
          continue;
        }
        if (r.statusCode !== 200) {
          const text = await r.body.text().catch(() => '');
          let parsed: unknown = null;
          try {
            parsed = text ? JSON.parse(text) : null;
          } catch {
            parsed = { error: text };
          }
          const err = answerError(r.statusCode, parsed, `Node ${id}`);
          if (!passing(err)) throw err;
          last = err;
          continue;
        }
        try {
          for await (const l of ndjsonLines(r.body, this.opts.maxLineBytes)) yield JSON.parse(l.text) as ExportRecord;
        } catch (err) {
          throw err instanceof StrataError ? err : unavailable(`The records of shard ${shard} from node ${id} were cut off (${(err as Error).message}).`);
        } finally {
          r.body.destroy(); // nothing left to read when the stream ended; the connection closed when the caller stopped early
        }
        return;
      }
      if (Date.now() >= deadline) throw last ?? unavailable(`No node holding shard ${shard} is known; retry shortly.`, 'no_leader');
      await sleep(this.opts.pollMs ?? 50);
    }
  }

  private dispatcher(): Agent {
    this.agent ??= new (undici().Agent)({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 60_000, connections: 16, connectTimeout: 2000 });
    return this.agent;
  }

  async close(): Promise<void> {
    await this.agent?.close();
  }
}
