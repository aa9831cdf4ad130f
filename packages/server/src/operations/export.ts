/**
 * Export (CONTRACT §14, docs/export-format.md): one user's records, or every user's over all shards,
 * as the lines of an export file. Transport free: a principal and plain input in, an async iterable
 * of lines out, pulled by the caller (an HTTP response, a file) at its own pace. The scope check is
 * made before anything is read. Each shard is read from one LevelDB snapshot (store/export.ts), so
 * the lines of a shard are one applied state whatever is written meanwhile.
 */
import {
  EXPORT_FORMAT, EXPORT_VERSION, openExportSnapshot, shardRecords, userRecords, type ExportHeader, type ExportRecord,
} from '@strata/store';
import type { Principal } from '../auth/principal';
import { requireUnscoped } from '../auth/scope';
import type { Services } from '../services';
import type { Shard } from '../shards';

export interface ExportInput {
  /** one user; null: every user of every shard (unscoped credentials only) */
  user_id: string | null;
  /** wait until this replica has applied everything committed before the call (ReadIndex) */
  linearizable: boolean;
}

export type ExportLine = ExportHeader | ExportRecord;

export async function exportLines(services: Services, principal: Principal, input: ExportInput): Promise<AsyncIterable<ExportLine>> {
  const userId = input.user_id;
  if (userId === null) requireUnscoped(principal, 'Exporting every user');
  else await services.scope.authorizeUser(principal, { user_id: userId, write: false });
  const shards = userId === null ? services.shards.all() : [services.shards.forUser(userId)];
  if (input.linearizable) for (const shard of shards) await shard.log.readBarrier();
  const header: ExportHeader = {
    kind: 'header', format: EXPORT_FORMAT, version: EXPORT_VERSION, exported_at: new Date().toISOString(), node_id: services.config.cluster.node_id,
    embedder: { id: services.providers.embedder.id, dimensions: services.providers.embedder.dimensions },
  };
  return lines(header, shards, userId);
}

async function* lines(header: ExportHeader, shards: Shard[], userId: string | null): AsyncGenerator<ExportLine> {
  yield header;
  for (const shard of shards) {
    // one snapshot at a time, released however the consumer stops (end, error, client gone)
    const snapshot = openExportSnapshot(shard.db);
    try {
      yield* userId === null ? shardRecords(shard.db, snapshot) : userRecords(shard.db, userId, snapshot);
    } finally {
      await snapshot.close();
    }
  }
}
