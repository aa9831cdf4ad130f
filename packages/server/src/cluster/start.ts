/**
 * What a node does about its Raft groups when it starts: the seed initializes them, a node started
 * with STRATA_JOIN asks a member to add it (signed with the cluster secret) until it is a voter, the
 * others wait to be contacted. Then the admin account is created through the log by whichever node
 * leads shard 0 (the single-node case waits for it, so the node serves with its admin in place).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { StrataError } from '@strata/store';
import type { AuthService } from '../auth/service';
import { ADMIN } from '../auth/service';
import type { Shard } from '../shards';
import { JoinSigner, type ClusterService } from './membership';
import type { KeyRangeDirectory } from './placement/range-directory';
import { startPlan, type ClusterRuntime } from './runtime';

export interface StartHandle {
  /** resolves when the background loops have ended (after stop()) */
  stop(): Promise<void>;
}

export async function startCluster(rt: ClusterRuntime, cluster: ClusterService, meta: Shard, auth: AuthService, ranges: KeyRangeDirectory, logger: Logger): Promise<StartHandle> {
  let stopped = false;
  const abort = new AbortController();
  const loops: Promise<void>[] = [];
  const plan = startPlan(rt.config);
  if (rt.isBlank()) {
    if (plan === 'initialize') {
      const { done, elsewhere } = await rt.initialize();
      logger.info({ members: rt.initialMembers().map((m) => m.id), shards: done }, 'raft groups initialized');
      // groups this node is not an initial voter of: their voters initialize them when they answer
      for (const g of elsewhere) {
        loops.push(cluster.initializeElsewhere(g, Infinity, () => stopped).then(
          (r) => logger.info(r, 'raft group initialized on its voters'),
          (err) => { if (!stopped) logger.error({ err, shard: g.group_id }, 'raft group initialization failed'); },
        ));
      }
    } else if (plan === 'join') {
      loops.push(joinLoop(rt, logger, () => stopped, abort.signal));
    } else {
      logger.info('waiting to be initialized or joined (POST /v1/cluster/initialize, or a member adds this node)');
    }
  }
  const single = rt.config.cluster.peers.length <= 1 && plan === 'initialize';
  const admin = ensureAdmin(meta, auth, logger, () => stopped);
  if (single) await admin;
  else loops.push(admin);
  loops.push(recordRanges(meta, ranges, logger, () => stopped));
  return {
    stop: async () => {
      stopped = true;
      abort.abort();
      await Promise.all(loops);
    },
  };
}

/** Creates the admin account once a leader of shard 0 exists (every node tries while it leads). */
async function ensureAdmin(meta: Shard, auth: AuthService, logger: Logger, stopped: () => boolean): Promise<void> {
  while (!stopped()) {
    const account = await meta.db.account(ADMIN);
    if (account) return auth.tidyInitialPassword(account);
    if (meta.log.isLeader()) {
      try {
        await auth.bootstrap();
        return;
      } catch (err) {
        if (!(err instanceof StrataError && err.status === 503)) logger.error({ err }, 'admin bootstrap failed');
      }
    }
    await sleep(50);
  }
}

/**
 * Records the key-range directory in shard 0 once (whichever node leads it): a new data directory's
 * initial table, and for one made before ranges existed the table equivalent to its modulus layout, so
 * the migration is a command in the log like any change. Routing does not wait for it: until it is
 * applied, every node routes with the same initial table.
 */
async function recordRanges(meta: Shard, ranges: KeyRangeDirectory, logger: Logger, stopped: () => boolean): Promise<void> {
  while (!stopped() && !ranges.recorded()) {
    if (meta.log.isLeader()) {
      try {
        const answer = await meta.log.propose({ type: 'cluster.ranges', at: new Date().toISOString(), table: ranges.initialTable() });
        logger.info({ answer, groups: ranges.initialTable().ranges.length }, 'key-range directory recorded');
        return;
      } catch (err) {
        if (!(err instanceof StrataError && err.status === 503)) logger.error({ err }, 'recording the key-range directory failed');
      }
    }
    await sleep(100);
  }
}

/** Asks the member at STRATA_JOIN to add this node, until it answers 200 (or a definite refusal). */
async function joinLoop(rt: ClusterRuntime, logger: Logger, stopped: () => boolean, signal: AbortSignal): Promise<void> {
  const { node_id } = rt.config.cluster;
  const target = rt.config.cluster.join!.replace(/\/+$/, '');
  const secret = rt.config.cluster.secret;
  if (!secret) {
    logger.error('STRATA_JOIN needs the cluster secret (STRATA_CLUSTER_SECRET) to sign the join request');
    return;
  }
  const signer = new JoinSigner(secret, rt.config.cluster.peer_clock_skew_s * 1000);
  for (let attempt = 1; !stopped(); attempt++) {
    try {
      // undici is required here, by a joining node only: a node's start loads less without it (issue 29)
      const res = await (require('undici') as typeof import('undici')).request(`${target}/v1/cluster/join`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...signer.sign({ node_id, address: rt.selfUrl }), // fresh every attempt: a signature is single-use
          ...(rt.config.auth.api_key ? { 'x-api-key': rt.config.auth.api_key } : {}),
        },
        body: JSON.stringify({ node_id, address: rt.selfUrl }),
        signal,
        headersTimeout: 120_000,
        bodyTimeout: 120_000,
      });
      const text = await res.body.text();
      if (res.statusCode === 200) {
        logger.info({ via: target, answer: JSON.parse(text) }, 'joined the cluster');
        return;
      }
      if (res.statusCode === 409 || res.statusCode === 401 || res.statusCode === 403 || res.statusCode === 400) {
        logger.error({ via: target, status: res.statusCode, answer: text }, 'the cluster refused to join this node');
        return;
      }
      logger.warn({ via: target, status: res.statusCode, attempt }, 'join not done yet; retrying');
    } catch (err) {
      if (stopped()) return;
      logger.warn({ via: target, err: (err as Error).message, attempt }, 'join request failed; retrying');
    }
    for (let i = 0; i < 20 && !stopped(); i++) await sleep(50);
  }
}
