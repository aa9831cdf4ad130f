/**
 * Where an MCP tool runs. A tool call may reach any node, but only the leader of the user's shard can
 * propose, and only a node holding the user's group (placement) has its data: a write runs here when
 * this node leads the shard (or is alone), else the same action is sent to the leader as its REST
 * request with the caller's credentials (the route there makes every check again), exactly as a REST
 * write reaching a follower is forwarded (cluster/forward.ts); a read runs here when this node holds the
 * group, else its REST request goes to a node that does, as a REST read would.
 */
import type { Forwarder } from '../cluster/forward';
import { answerError } from '../cluster/peer-answer';
import type { UserGroups } from '../shards';

export interface RestEquivalent {
  method: 'POST' | 'PUT';
  path: string;
  body: unknown;
  headers?: Record<string, string>;
}

/** The REST request of a read (no body for a GET). */
export interface RestRead {
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
}

export interface LeaderGate {
  /** runs `local` where the user's shard can propose, else `rest` on the shard's leader */
  write<T>(userId: string, credentials: Record<string, string>, local: () => Promise<T>, rest: RestEquivalent): Promise<T>;
  /** runs `local` where this node holds the user's group, else `rest` on a node that does; answers the REST answer's body */
  read<T>(userId: string, credentials: Record<string, string>, local: () => Promise<T>, rest: RestRead): Promise<T>;
}

/** A node without peers proposes and reads everything itself. */
export const SINGLE_NODE: LeaderGate = { write: (_userId, _credentials, local) => local(), read: (_userId, _credentials, local) => local() };

export function forwardingGate(forwarder: Forwarder, groups: UserGroups): LeaderGate {
  return {
    /** As a REST write is routed (Forwarder.write: a leader that moved meanwhile is looked for again). */
    async write(userId, credentials, local, rest) {
      return forwarder.write(() => groups.groupOf(userId), local, { method: rest.method, path: rest.path, headers: { ...credentials, ...rest.headers }, body: rest.body }) as never;
    },

    /** A node holding the group (Forwarder.callHolder: the directory's leader first, then the other voters). */
    async read(userId, credentials, local, rest) {
      const shard = groups.groupOf(userId);
      if (forwarder.holds(shard)) return local();
      const answer = await forwarder.callHolder(shard, rest.method, rest.path, credentials, rest.body);
      if (answer.status >= 400) throw answerError(answer.status, answer.body, 'The node holding the shard');
      return answer.body as never;
    },
  };
}
