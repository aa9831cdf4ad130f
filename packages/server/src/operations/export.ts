/**
 * Export (CONTRACT §14, docs/export-format.md): one user's records, or every user's over all shards,
 * as the lines of an export file. Transport free: a principal and plain input in, an async iterable
 * of lines out, pulled by the caller (an HTTP response, a file) at its own pace. The scope check is
 * made before anything is read. Each shard is read from one LevelDB snapshot (store/export.ts), so
 * the lines of a shard are one applied state whatever is written meanwhile. Every user's export reads a
 * group this node does not hold (placement) from a node that holds it, from one snapshot there
 * (cluster/remote-groups.ts); one user's export is served by a holder of the user's group already
 * (the HTTP layer forwards the request there).
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
  // every live group, open here or not (a replica moved away is not open: read from a holder)
  const ids = userId === null ? services.shards.groupIds() : [services.shards.forUser(userId).id];
  // A group this node does not hold (placement) is read on a node that does, which makes its own barrier.
  const remote = (id: number) => userId === null && services.groups !== undefined && !services.groups.holds(id) ? services.groups : null;
  const here = (id: number): Shard => services.shards.here(id);
  if (input.linearizable) for (const id of ids) if (!remote(id)) await here(id).log.readBarrier();
  const header: ExportHeader = {
    kind: 'header', format: EXPORT_FORMAT, version: EXPORT_VERSION, exported_at: new Date().toISOString(), node_id: services.config.cluster.node_id,
    embedder: { id: services.providers.embedder.id, dimensions: services.providers.embedder.dimensions },
  };
  return lines(header, ids.map((id) => {
    const from = remote(id);
    // every user's: of each group, the users the key-range directory assigns to it (a user handed over
    // meanwhile is in both groups between the copy and the drop); the holder asked filters by its own
    return from ? () => from.groupRecords(id, input.linearizable) : () => localRecords(here(id), userId, (user) => services.shards.groups.groupOf(user) === id);
  }));
}

/** The records of one shard (or of one user in it) from one snapshot of this replica, released however the consumer stops. */
async function* localRecords(shard: Shard, userId: string | null, keep: (userId: string) => boolean): AsyncGenerator<ExportRecord> {
  const snapshot = openExportSnapshot(shard.db);
  try {
    yield* userId === null ? shardRecords(shard.db, snapshot, keep) : userRecords(shard.db, userId, snapshot);
  } finally {
    await snapshot.close();
  }
}

async function* lines(header: ExportHeader, sources: (() => AsyncIterable<ExportRecord>)[]): AsyncGenerator<ExportLine> {
  yield header;
  // one shard at a time: each is one applied state (a snapshot here, or one on a node holding the group)
  for (const source of sources) yield* source();
}
