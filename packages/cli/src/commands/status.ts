/** `strata status`: is the node up and ready, what is left to consolidate, and the cluster as it sees it. */
import type { Command } from 'commander';
import { StrataApiError, type ClusterStatus } from '@strata/client';
import { connected } from '../context';
import { clusterLines } from './cluster';

export function registerStatus(program: Command): void {
  program
    .command('status')
    .description('health (/livez, /readyz), pending backlog and cluster status of the node')
    .action(connected(async ({ client, out, url }) => {
      const health = await client.health();
      const pending = await client.pending();
      // Cluster status needs unscoped admin credentials; with any other key the rest is still worth showing.
      let cluster: ClusterStatus | null = null;
      let clusterError: { error: string; code: string } | null = null;
      try {
        cluster = await client.clusterStatus();
      } catch (err) {
        if (!(err instanceof StrataApiError && (err.status === 401 || err.status === 403))) throw err;
        clusterError = { error: err.message, code: err.code };
      }
      out.result({ url, health, pending, cluster, ...(clusterError ? { cluster_error: clusterError } : {}) }, () => [
        `node     ${url}: ${health.live ? 'live' : 'not live'}, ${health.ready ? 'ready' : 'not ready'}`,
        `pending  ${pending.pending} event(s) to consolidate, ${pending.failed} failed${pending.oldest_pending_ms === null ? '' : `, oldest ${Math.round(pending.oldest_pending_ms)} ms`}${pending.ready ? ' (ready)' : ''}`,
        ...(cluster ? clusterLines(cluster) : [`cluster  not shown: ${clusterError?.error}`]),
      ]);
    }));
}
