import type { ReadinessVerdict } from './cluster/readiness';
import type { Logger } from 'pino';
import type { ScopeGuard } from './auth/scope';
import type { AuthService } from './auth/service';
import type { UserOrgs } from './auth/user-orgs';
import type { ShardReads } from './cluster/shard-reads';
import type { RemoteGroups } from './cluster/remote-groups';
import type { Config } from './config';
import type { RetrievalService } from './indexes/retrieval-service';
import type { Metrics } from './metrics';
import type { Providers } from './providers';
import type { ShardRouter } from './shards';

/** What route handlers reach: one object per node, no globals. */
export interface Services {
  config: Config;
  logger: Logger;
  metrics: Metrics;
  auth: AuthService;
  /** the scope checks (CONTRACT §1) every surface goes through */
  scope: ScopeGuard;
  /** the user → organization records (replicated) */
  userOrgs: UserOrgs;
  shards: ShardRouter;
  /**
   * reads over every shard group, for cross-shard operations: the local replica of a group held here,
   * a node holding it otherwise (a group's replica on a node that does not hold it is empty or stale)
   */
  reads: ShardReads;
  /** hybrid retrieval over the derived indexes of every local shard (retrieve and context routes) */
  retrieval: RetrievalService;
  /** the node's embedder and LLM (semantic previews and executions embed with it) */
  providers: Providers;
  /**
   * A group's data where this node neither holds nor leads it (placement: an import's chunks proposed on
   * their group's leader, an export reading a group from a node that holds it). Absent: every group is here.
   */
  groups?: RemoteGroups;
  /** whether this node can serve, for /readyz (cluster/readiness.ts; strict: a leader known now for every group it holds) */
  readiness(strict: boolean): ReadinessVerdict;
}
