/**
 * Where an MCP tool's write runs. A tool call may reach any node, but only the leader of the user's
 * shard can propose: here when this node leads it (or is alone), else the same action is sent to the
 * leader as its REST request with the caller's credentials (the route there makes every check again),
 * exactly as a REST write reaching a follower is forwarded (cluster/forward.ts).
 */
import { isErrorCode, StrataError, type ErrorDetail } from '@strata/store';
import type { Forwarder } from '../cluster/forward';
import { shardOf } from '../shards';

export interface RestEquivalent {
  method: 'POST' | 'PUT';
  path: string;
  body: unknown;
  headers?: Record<string, string>;
}

export interface LeaderGate {
  /** runs `local` where the user's shard can propose, else `rest` on the shard's leader */
  write<T>(userId: string, credentials: Record<string, string>, local: () => Promise<T>, rest: RestEquivalent): Promise<T>;
}

/** A node without peers proposes everything itself. */
export const SINGLE_NODE: LeaderGate = { write: (_userId, _credentials, local) => local() };

export function forwardingGate(forwarder: Forwarder, shards: number, timeoutMs: number): LeaderGate {
  return {
    async write(userId, credentials, local, rest) {
      const deadline = Date.now() + timeoutMs;
      const leader = await forwarder.leaderOf(shardOf(userId, shards), deadline);
      if (leader === 'self') return local();
      const answer = await forwarder.call(leader.url, rest.method, rest.path, { ...credentials, ...rest.headers }, rest.body, deadline);
      if (answer.status >= 400) throw errorOf(answer.status, answer.body);
      return answer.body as never;
    },
  };
}

/** The leader's error envelope as the StrataError it was (its code and details kept). */
function errorOf(status: number, body: unknown): StrataError {
  const envelope = (typeof body === 'object' && body !== null ? body : {}) as { code?: unknown; error?: unknown; details?: ErrorDetail[] };
  const code = isErrorCode(envelope.code) ? envelope.code : status >= 500 ? 'internal' : 'validation_failed';
  return new StrataError(code as never, typeof envelope.error === 'string' ? envelope.error : `The shard leader answered ${status}.`, envelope.details);
}
