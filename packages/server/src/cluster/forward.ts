/**
 * Writes reaching a node that does not lead the target shard go to that shard's leader: the same
 * request (method, path, query, the caller's credentials, Idempotency-Key, body) over a kept-alive
 * undici pool, with a hop header so a forwarded request is never forwarded again. While no leader is
 * known (election), it waits up to `cluster.forward_timeout_ms`, then answers 503 `no_leader`.
 */
import type { Request, Response } from 'express';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Agent, Dispatcher } from 'undici';
/** undici, required on first use: a single node never forwards, and its start loads less (issue 29). */
let undiciModule: typeof import('undici') | null = null;
const undici = (): typeof import('undici') => (undiciModule ??= require('undici') as typeof import('undici'));

import { NotStoredError, StrataError, unavailable, type ErrorDetail } from '@strata/store';
import { sendJson } from '../http/json-reply';
import type { RouteSpec } from '../http/route';
import type { UserGroups } from '../shards';
import type { Tracing } from '../telemetry/tracing';
import { LeaderDeadline } from './leader-deadline';
import { answerError, notSent, peerJson } from './peer-answer';

export const HOP_HEADER = 'x-strata-forwarded-by';
/**
 * Set by a node that does not hold the target group and sent the request where the placement directory
 * pointed: a member that no longer leads may then forward it once more, to the leader it knows.
 */
export const VIA_DIRECTORY_HEADER = 'x-strata-via-directory';

/** Headers that describe one connection, not the request: never copied to the forwarded request. */
const HOP_BY_HOP = new Set(['host', 'connection', 'keep-alive', 'content-length', 'transfer-encoding', 'upgrade', 'proxy-connection', 'te', 'trailer', 'expect']);

/** Pure: does this route change state (default: every method but GET)? */
export function routeWrites(route: { method: RouteSpec['method']; writes?: boolean }): boolean {
  return route.writes ?? route.method !== 'get';
}

/** Pure: the user a request is about: the :user_id path parameter, else body.user_id (undefined: service-wide). */
export function targetUser(params: Record<string, string>, body: unknown): string | undefined {
  const fromBody = typeof body === 'object' && body !== null ? (body as { user_id?: unknown }).user_id : undefined;
  return params.user_id ?? (typeof fromBody === 'string' ? fromBody : undefined);
}

/** Pure: the shard a request targets: its user's (targetUser), else shard 0 (service-wide). */
export function targetShard(params: Record<string, string>, body: unknown, groups: UserGroups): number {
  const user = targetUser(params, body);
  return user === undefined ? 0 : groups.groupOf(user);
}

/** What the forwarder needs to know about the shard groups on this node. */
export interface LeaderView {
  nodeId: number;
  isLeader(shard: number): boolean;
  leaderId(shard: number): number | null;
  urlOf(nodeId: number, shard: number): string | null;
  /** this node serves the group's reads (default: every group is on every node) */
  holds?(shard: number): boolean;
  /** nodes that serve the group's reads, best first (for a group this node does not hold) */
  replicas?(shard: number): number[];
}

export interface ForwarderOptions {
  view: LeaderView;
  timeoutMs: number;
  /** how often to look again for a leader while none is known */
  pollMs?: number;
  /**
   * A client span around each forwarded request, and the `traceparent` of the active span on every
   * request to another node, so the leader's spans join the caller's trace.
   */
  tracing?: Tracing;
}


export class Forwarder {
  /** writes this node ran again because leadership moved before they committed (runLocal) */
  notStoredRetries = 0;
  /** made on the first request to another node (see undici above) */
  private agent: Agent | null = null;

  constructor(private readonly opts: ForwarderOptions) {}

  /**
   * Waits until the shard has a leader. Returns 'self' when this node leads it, else the leader's
   * id and URL; throws 503 `no_leader` after the timeout.
   */
  async leaderOf(shard: number, deadline: number): Promise<'self' | { id: number; url: string }> {
    const { view } = this.opts;
    for (;;) {
      if (view.isLeader(shard)) return 'self';
      const id = view.leaderId(shard);
      const url = id !== null && id !== view.nodeId ? view.urlOf(id, shard) : null;
      if (id !== null && url) return { id, url };
      if (Date.now() >= deadline) throw noLeader(shard);
      await sleep(this.opts.pollMs ?? 25);
    }
  }

  /**
   * Runs `local` when this node leads the shard; otherwise forwards the request to the leader and
   * copies its answer to `res`. A request that was already forwarded once is never sent on again.
   * `keyed`: the route stores a request once per Idempotency-Key: one carrying the header is sent again
   * to the new leader when the one it went to died before answering (outcome unknown), as the client
   * would, until the deadline.
   * `target`: the shard, or how to find it (the user's group in the key-range directory): asked again
   * before each attempt. A split or merge committed while the request waits hands its user to another
   * group; the old group's leader then refuses it (not stored) on every attempt, and asking that group
   * again until the deadline answered 503 for a write the new group would take, and asked a retired
   * group's leader until the group was removed from this node.
   */
  async route(target: number | (() => number), req: Request, res: Response, local: () => Promise<void>, opts: { keyed?: boolean } = {}): Promise<void> {
    // counted afresh after a "not stored" answer (a new leader committed meanwhile; LeaderDeadline)
    const deadline = new LeaderDeadline(this.opts.timeoutMs);
    const { view } = this.opts;
    const shardNow = typeof target === 'number' ? () => target : target;
    const shard = shardNow();
    let viaDirectory = !this.holds(shard);
    if (req.headers[HOP_HEADER] !== undefined) {
      // The sender believed this node leads the shard; if it no longer does, say so rather than loop,
      // unless the sender only knew the directory's word: a member then knows the leader better.
      if (view.isLeader(shard)) {
        if (await this.runLocal(local, deadline, () => !res.headersSent && replayable(req))) return;
        // leadership moved before the write committed here: the new leader takes it (one more hop)
      } else if (req.headers[VIA_DIRECTORY_HEADER] === undefined || !this.holds(shard)) {
        // not run here, so not stored: the sender looks for the leader again (send)
        throw new NotStoredError(`This node no longer leads shard ${shard}; the write was not run (not stored); retry.`);
      }
      viaDirectory = false;
    }
    await this.untilStored(shardNow, shard, viaDirectory, deadline, {
      local: () => this.runLocal(local, deadline, () => !res.headersSent && replayable(req)),
      remote: (url, via) => this.send(url, req, res, deadline.at, via),
      replayable: replayable(req),
      keyed: opts.keyed === true && hasKey(req),
    });
  }

  /**
   * A JSON write that is not an Express request of its own (the MCP write tools): run here when this
   * node leads the user's shard, else sent as its REST request to the leader, with the REST route's
   * rules (route): a "not stored" answer or a leader not reached looks for the leader again until the
   * deadline, and a node that does not hold the group names the directory as its source, so a member
   * that no longer leads passes it on to the leader it knows. Answers the local result or the leader's
   * JSON body; any other error answer is raised as the StrataError it was.
   */
  async write<T>(target: () => number, local: () => Promise<T>, rest: { method: string; path: string; headers: Record<string, string>; body: unknown }): Promise<T> {
    const deadline = new LeaderDeadline(this.opts.timeoutMs);
    const shard = target();
    let answered: T | undefined;
    await this.untilStored(target, shard, !this.holds(shard), deadline, {
      local: () => this.runLocal(async () => { answered = await local(); }, deadline, () => true),
      remote: async (url, via) => {
        const answer = await this.call(url, rest.method, rest.path, { ...rest.headers, ...(via ? { [VIA_DIRECTORY_HEADER]: '1' } : {}) }, rest.body, deadline.at);
        if (answer.status === 503 && answer.headers[NotStoredError.HEADER] !== undefined) throw new NotStoredError(...said(answer.body));
        if (answer.status >= 400) throw answerError(answer.status, answer.body, 'The shard leader');
        answered = answer.body as T;
      },
      replayable: true,
      keyed: rest.headers['idempotency-key'] !== undefined,
    });
    return answered as T;
  }

  /**
   * Looks for the shard's leader and runs the write there (`local` here, `remote` on another node) until
   * it is stored or known to have failed. `local` answers false when leadership moved before the write
   * committed (runLocal). A "not stored" answer from another node is tried again when the write can be
   * sent again; a leader not reached, when nothing was sent or the write carries an Idempotency-Key.
   */
  private async untilStored(shardNow: () => number, shard: number, viaDirectory: boolean, deadline: LeaderDeadline,
    ways: { local: () => Promise<boolean>; remote: (url: string, viaDirectory: boolean) => Promise<void>; replayable: boolean; keyed: boolean }): Promise<void> {
    for (let failed = 0; ; ) {
      const current = shardNow();
      if (current !== shard) {
        // the user's range was handed to another group meanwhile: nothing was stored, that group's leader takes it
        shard = current;
        failed = 0;
        viaDirectory = !this.holds(shard);
      }
      const leader = viaDirectory && failed > 0 ? this.anotherReplica(shard, failed) ?? await this.leaderOf(shard, deadline.at) : await this.leaderOf(shard, deadline.at);
      if (leader === 'self') {
        if (await ways.local()) return;
        continue;
      }
      try {
        await ways.remote(leader.url, viaDirectory);
        return;
      } catch (err) {
        if (err instanceof NotStoredError && ways.replayable && (deadline.renew() || !deadline.passed())) {
          // the leader it was sent to no longer leads, or lost leadership before the write committed
          this.notStoredRetries++;
          await sleep(Math.max(this.opts.pollMs ?? 25, 50));
          continue;
        }
        if (err instanceof StrataError) throw err;
        // The leader could not be reached: if nothing was sent, look for the leader again until the
        // deadline; likewise when it was sent but a retry is harmless (the same Idempotency-Key).
        const again = notSent(err) || (ways.keyed && ways.replayable);
        if (!again || deadline.passed()) throw noLeader(shard);
        failed++;
        await sleep(this.opts.pollMs ?? 25);
      }
    }
  }

  /**
   * Runs the write here, as this node leads the shard. False when it failed only because leadership
   * moved before it committed (nothing stored: NotStoredError), nothing was answered yet, its body can
   * be sent again and the deadline has not passed: the caller then looks for the new leader and runs the
   * request there, as a client retrying would, so a planned move is not a client error. Bounded by the
   * request's deadline (cluster.forward_timeout_ms), started afresh by each such answer (at most
   * MAX_NOT_STORED_RENEWALS times: LeaderDeadline), with a short pause between attempts.
   */
  private async runLocal(local: () => Promise<void>, deadline: LeaderDeadline, mayRunAgain: () => boolean): Promise<boolean> {
    try {
      await local();
      return true;
    } catch (err) {
      if (!(err instanceof NotStoredError) || !mayRunAgain()) throw err;
      if (!deadline.renew() && deadline.passed()) throw err;
      this.notStoredRetries++;
      await sleep(Math.max(this.opts.pollMs ?? 25, 50));
      return false;
    }
  }

  /**
   * The directory's leader of a group this node does not hold did not answer (it may have died, and
   * the directory not caught up yet): its other voters in turn, which forward to the leader they know.
   */
  private anotherReplica(shard: number, failed: number): { id: number; url: string } | null {
    const replicas = this.opts.view.replicas?.(shard) ?? [];
    if (replicas.length === 0) return null;
    const id = replicas[failed % replicas.length];
    const url = this.opts.view.urlOf(id, shard);
    return url ? { id, url } : null;
  }

  /** This node serves the group's reads (without placement: every group is here). */
  holds(shard: number): boolean {
    return this.opts.view.holds ? this.opts.view.holds(shard) : true;
  }

  /**
   * A read of one user's data: served here when this node holds the user's group, else by one of the
   * group's voters (onHolders). A read forwarded to a node that does not hold the group (the directory
   * moved on meanwhile) is refused with 503 rather than answered from a replica that is not there.
   */
  async read(shard: number, req: Request, res: Response, local: () => Promise<void>): Promise<void> {
    if (this.holds(shard)) return local();
    if (req.headers[HOP_HEADER] !== undefined) throw notHeld(shard);
    const deadline = Date.now() + this.opts.timeoutMs;
    await this.onHolders(shard, deadline, async (url) => {
      await (req.method === 'GET' ? this.relay(url, req, res, deadline) : this.send(url, req, res, deadline, false));
      return true;
    });
  }

  /**
   * A JSON read asked of a node holding the group (the MCP tools' reads): its answer; a node answering
   * 503 (no longer holding the group, or without a leader) is passed over like one not reached.
   */
  async callHolder(shard: number, method: string, path: string, headers: Record<string, string>, body: unknown): Promise<{ status: number; body: unknown }> {
    const deadline = Date.now() + this.opts.timeoutMs;
    return this.onHolders(shard, deadline, async (url) => {
      const answer = await this.call(url, method, path, headers, body, deadline);
      return answer.status === 503 ? undefined : answer;
    });
  }

  /**
   * Tries the group's voters (the directory's leader first), round after round until the deadline:
   * `attempt` answers, or says to go on (undefined, or an error raised before anything was sent).
   * An error after sending ends it with 503: a read may be asked again, of the client's choosing.
   */
  private async onHolders<T>(shard: number, deadline: number, attempt: (url: string) => Promise<T | undefined>): Promise<T> {
    for (;;) {
      for (const id of this.opts.view.replicas?.(shard) ?? []) {
        const url = this.opts.view.urlOf(id, shard);
        if (!url) continue;
        try {
          const answer = await attempt(url);
          if (answer !== undefined) return answer;
        } catch (err) {
          if (err instanceof StrataError) throw err;
          if (!notSent(err)) throw notHeld(shard);
        }
      }
      if (Date.now() >= deadline) throw notHeld(shard);
      await sleep(this.opts.pollMs ?? 25);
    }
  }

  /** Sends a JSON request to another node with the hop header, answering with its parsed body or its error. */
  async call(url: string, method: string, path: string, headers: Record<string, string>, body: unknown, deadline: number): Promise<{ status: number; body: unknown; headers: Record<string, string | string[] | undefined> }> {
    const r = await undici().request(url.replace(/\/+$/, '') + path, {
      method: method.toUpperCase() as 'POST',
      dispatcher: this.dispatcher(),
      headers: { ...headers, ...this.traceHeaders(), [HOP_HEADER]: String(this.opts.view.nodeId), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body !== undefined ? JSON.stringify(body) : undefined,
      headersTimeout: Math.max(1, deadline - Date.now()),
      bodyTimeout: Math.max(1, deadline - Date.now()),
    });
    return answerOf(r);
  }

  /** The client's headers that describe the request (not the connection), for the node it goes on to. */
  private outgoing(req: Request, viaDirectory: boolean): Record<string, string> {
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) {
      if (v === undefined || HOP_BY_HOP.has(k) || k === HOP_HEADER || k === VIA_DIRECTORY_HEADER) continue;
      headers[k] = Array.isArray(v) ? v.join(', ') : v;
    }
    if (viaDirectory) headers[VIA_DIRECTORY_HEADER] = '1';
    return headers;
  }

  /**
   * A GET goes on as it is and its answer comes back as it is, streamed (an NDJSON export as much as a
   * JSON page), with its status and content type.
   */
  private async relay(url: string, req: Request, res: Response, deadline: number): Promise<void> {
    const r = await undici().request(url.replace(/\/+$/, '') + req.originalUrl, {
      method: 'GET', dispatcher: this.dispatcher(),
      headers: { ...this.outgoing(req, false), ...this.traceHeaders(), [HOP_HEADER]: String(this.opts.view.nodeId) },
      headersTimeout: Math.max(1, deadline - Date.now()), bodyTimeout: 0,
    });
    res.status(r.statusCode);
    for (const name of ['content-type', 'content-disposition', 'retry-after', 'allow']) {
      const v = r.headers[name];
      if (v !== undefined) res.setHeader(name, v);
    }
    res.setHeader(HOP_HEADER, String(this.opts.view.nodeId));
    await pipeline(r.body, res);
  }

  private async send(url: string, req: Request, res: Response, deadline: number, viaDirectory: boolean): Promise<void> {
    const headers = this.outgoing(req, viaDirectory);
    const hasBody = req.body !== undefined && ['POST', 'PUT', 'PATCH', 'DELETE'].includes(req.method);
    // A body read here goes on re-serialized as plain JSON: the client's encoding no longer describes it.
    if (!unreadBody(req)) delete headers['content-encoding'];
    const exchange = () => (unreadBody(req)
      ? this.stream(url, req, headers)
      : this.call(url, req.method, req.originalUrl, headers, hasBody ? req.body : undefined, deadline));
    let answer;
    try {
      answer = this.opts.tracing
        ? await this.opts.tracing.client(`forward ${req.method}`, { 'server.address': url, 'strata.forwarded_by': this.opts.view.nodeId }, exchange)
        : await exchange();
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
        throw unavailable('The shard leader did not answer in time; the write may or may not have been stored: retry with the same Idempotency-Key.', 'no_leader');
      }
      throw err;
    }
    // nothing stored there: route() looks for the leader again, or answers this 503 (the leader's
    // sentence: an import's says where the file stopped) after the deadline
    if (answer.status === 503 && answer.headers[NotStoredError.HEADER] !== undefined) throw new NotStoredError(...said(answer.body));
    for (const name of ['retry-after', 'allow']) {
      const v = answer.headers[name];
      if (v !== undefined) res.setHeader(name, v);
    }
    res.setHeader(HOP_HEADER, String(this.opts.view.nodeId));
    sendJson(res, answer.status, answer.body);
  }

  /**
   * A body the route reads itself (a raw route: `POST /v1/import`) goes on as it arrives, still encoded
   * (its Content-Type and Content-Encoding are copied), with back-pressure. The leader answers once it
   * has read and applied all of it, which takes as long as the body does: no deadline applies here (the
   * client's connection and the leader's server.request_timeout_ms bound it).
   */
  private async stream(url: string, req: Request, headers: Record<string, string>): Promise<{ status: number; body: unknown; headers: Record<string, string | string[] | undefined> }> {
    const r = await undici().request(url.replace(/\/+$/, '') + req.originalUrl, {
      method: req.method as 'POST', dispatcher: this.dispatcher(), body: req,
      headers: { ...headers, ...this.traceHeaders(), [HOP_HEADER]: String(this.opts.view.nodeId) },
      headersTimeout: 0, bodyTimeout: 0,
    });
    return answerOf(r);
  }

  /** The active span's trace context for a request to another node (replaces a client's own traceparent). */
  private traceHeaders(): Record<string, string> {
    return this.opts.tracing?.inject() ?? {};
  }

  private dispatcher(): Agent {
    this.agent ??= new (undici().Agent)({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 60_000, connections: 64, connectTimeout: 2000 });
    return this.agent;
  }

  async close(): Promise<void> {
    await this.agent?.close();
  }
}

function hasKey(req: Request): boolean {
  const key = req.headers['idempotency-key'];
  return typeof key === 'string' && key !== '';
}

/** A request that can run again: its body was read and parsed here (or it has none), not streamed by a raw route. */
function replayable(req: Request): boolean {
  const declared = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
  return !declared || req.body !== undefined;
}

/** The message and details of a peer's error envelope, when it has them (else the default sentence). */
function said(body: unknown): [string?, ErrorDetail[]?] {
  const envelope = body as { error?: unknown; details?: unknown } | null;
  if (typeof envelope?.error !== 'string') return [];
  return [envelope.error, Array.isArray(envelope.details) ? (envelope.details as ErrorDetail[]) : undefined];
}

/** A request whose body was not read here (a raw route reads its own): it must be streamed on, not re-serialized. */
function unreadBody(req: Request): boolean {
  const declared = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
  return declared && req.body === undefined && !req.readableEnded;
}

/** A peer's answer: its status, headers and JSON body (peerJson). */
async function answerOf(r: Dispatcher.ResponseData): Promise<{ status: number; body: unknown; headers: Record<string, string | string[] | undefined> }> {
  return { status: r.statusCode, body: peerJson(await r.body.text()), headers: r.headers };
}

function notHeld(shard: number): StrataError {
  return unavailable(`No node holding shard ${shard} answered (its replicas are moving or down); retry shortly.`, 'no_leader');
}

export function noLeader(shard: number): StrataError {
  return unavailable(`No leader is known for shard ${shard} (election in progress or no quorum); retry shortly.`, 'no_leader');
}
