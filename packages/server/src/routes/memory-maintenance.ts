/** HTTP adapters of the memory maintenance operations (operations/maintenance.ts). */
import { callerOf, type RouteSpec } from '../http/route';
import { deleteMemoryUnit, executeSemantic, previewSemantic } from '../operations/maintenance';
import type { Services } from '../services';

export function memoryMaintenanceRoutes(services: Services): RouteSpec[] {
  return [
    {
      method: 'post', path: '/v1/users/:user_id/memories/semantic/preview', tag: 'memory', auth: 'write', body: 'SemanticPreview', scope: 'operation',
      summary: 'Plan a forget or update instruction and show what it would change (stored 15 minutes; changes nothing else).',
      handler: (ctx) => previewSemantic(services, callerOf(ctx), ctx.params.user_id, ctx.body),
    },
    {
      method: 'post', path: '/v1/users/:user_id/memories/semantic/execute', tag: 'memory', auth: 'write', body: 'SemanticExecute', scope: 'operation',
      summary: 'Execute a previewed plan exactly as shown (confirm must be true).',
      handler: (ctx) => executeSemantic(services, callerOf(ctx), ctx.params.user_id, ctx.body),
    },
    {
      method: 'delete', path: '/v1/users/:user_id/memories/:id', tag: 'memory', auth: 'write', scope: 'operation',
      summary: 'Hard-delete a memory unit everywhere (record, vector, text index, edges) on every replica; ?cascade=events also deletes its source events.',
      queryParams: [{ name: 'cascade', schema: { type: 'string', enum: ['events'] }, description: 'also delete the source L0 events' }],
      handler: (ctx) => deleteMemoryUnit(services, callerOf(ctx), ctx.params.user_id, ctx.params.id, ctx.query.cascade),
    },
  ];
}
