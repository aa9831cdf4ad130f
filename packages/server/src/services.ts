import type { Logger } from 'pino';
import type { AuthService } from './auth/service';
import type { Config } from './config';
import type { Metrics } from './metrics';
import type { ShardRouter } from './shards';

/** What route handlers reach: one object per node, no globals. */
export interface Services {
  config: Config;
  logger: Logger;
  metrics: Metrics;
  auth: AuthService;
  shards: ShardRouter;
  /** true when this node can serve (storage open; a leader known for every local shard) */
  isReady(): boolean;
}
