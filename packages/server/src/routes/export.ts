/** Export and import (CONTRACT §14): the HTTP adapters of operations/export.ts and operations/import.ts. */
import { badRequest } from '@strata/store';
import { rawBodyChunks } from '../http/body';
import { sendNdjson } from '../http/ndjson';
import { callerOf, type RouteContext, type RouteSpec } from '../http/route';
import { exportLines } from '../operations/export';
import { importFile } from '../operations/import';
import type { Services } from '../services';
import { queryBool } from '../validation';

const CONSISTENCY = {
  name: 'consistency', schema: { type: 'string', enum: ['local', 'linearizable'], default: 'local' },
  description: "linearizable: wait for the leader's commit index first (ReadIndex)",
};

function linearizable(ctx: RouteContext): boolean {
  const value = ctx.query.consistency;
  if (value === undefined || value === '' || value === 'local') return false;
  if (value === 'linearizable') return true;
  throw badRequest('validation_failed', 'consistency must be local or linearizable.', [{ path: '/consistency', message: 'must be one of "local", "linearizable"' }]);
}

export function exportRoutes(services: Services): RouteSpec[] {
  return [
    {
      method: 'get', path: '/v1/users/:user_id/export', tag: 'export', auth: 'read', scope: 'operation',
      summary: "Stream the user's records as NDJSON (application/x-ndjson): a header, then events, assets, units (every version, with vectors), edges, goals, tasks and the user with its org.",
      queryParams: [CONSISTENCY],
      handler: async (ctx) => {
        const lines = await exportLines(services, callerOf(ctx), { user_id: ctx.params.user_id, linearizable: linearizable(ctx) });
        await sendNdjson(ctx.res, lines, services.logger);
      },
    },
    {
      method: 'get', path: '/v1/export', tag: 'export', auth: 'admin', scope: 'operation',
      summary: 'Stream every user of every shard as NDJSON, user after user (unscoped admin credentials).',
      queryParams: [CONSISTENCY],
      handler: async (ctx) => {
        const lines = await exportLines(services, callerOf(ctx), { user_id: null, linearizable: linearizable(ctx) });
        await sendNdjson(ctx.res, lines, services.logger);
      },
    },
    {
      method: 'post', path: '/v1/import', tag: 'export', auth: 'write', scope: 'operation', rawBody: 'ndjson',
      summary: 'Import an export file (NDJSON body, up to import.max_bytes) through the log, idempotently: records whose id exists are skipped and counted.',
      queryParams: [{ name: 'reembed', schema: { type: 'boolean', default: false }, description: "embed the units again when the file's embedder is not this node's (else 409)" }],
      handler: (ctx) => importFile(services, callerOf(ctx), {
        reembed: queryBool(ctx.query.reembed, 'reembed'),
        body: rawBodyChunks(ctx.req, services.config.import.max_bytes, 'import.max_bytes'),
      }),
    },
  ];
}
