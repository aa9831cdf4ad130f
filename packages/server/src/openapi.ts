import type { RouteSpec } from './http/route';
import { SCHEMAS } from './schemas';

const ERROR_SCHEMA = {
  type: 'object',
  required: ['error', 'code'],
  properties: {
    error: { type: 'string', description: 'one sentence a person can act on' },
    code: { type: 'string', description: 'snake_case cause' },
    details: { type: 'array', items: { type: 'object', properties: { path: { type: 'string' }, message: { type: 'string' } } } },
  },
};

const ERROR_STATUSES: Record<string, string> = {
  '400': 'Malformed input (invalid_json, validation_failed, invalid_id)',
  '401': 'No or bad credentials',
  '403': 'Credentials do not cover this user, org or route',
  '404': 'Unknown record or route',
  '405': 'Method not allowed on this path (Allow)',
  '408': 'The request (headers or body) did not arrive in time',
  '409': 'Conflict (invalid_transition, a record changed meanwhile, another embedder)',
  '413': 'Body or batch too large',
  '415': 'Body is not JSON',
  '429': 'Rate limited (Retry-After)',
  '431': 'Request headers too large',
  '503': 'No leader or quorum, or too many writes waiting to commit (overloaded) (Retry-After)',
};

/** The OpenAPI 3.1 document, made from the route table and the same schemas that validate requests. */
export function buildOpenApi(routes: RouteSpec[]) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = route.path.replace(/:([a-z_]+)/g, '{$1}');
    const pathParams = [...route.path.matchAll(/:([a-z_]+)/g)].map((m) => ({
      name: m[1], in: 'path', required: true,
      schema: m[1] === 'stream_id' ? { type: 'string', format: 'uuid' } : { type: 'string' },
    }));
    const errors = Object.fromEntries(
      Object.entries(ERROR_STATUSES)
        .filter(([status]) => route.auth !== 'public' || !['401', '403'].includes(status))
        .map(([status, description]) => [status, { description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } }]),
    );
    paths[path] = paths[path] ?? {};
    paths[path][route.method] = {
      summary: route.summary,
      tags: [route.tag],
      ...(route.auth === 'public' ? { security: [] } : { 'x-strata-role': route.auth }),
      parameters: [...pathParams, ...(route.queryParams ?? []).map((q) => ({ name: q.name, in: 'query', required: false, schema: q.schema, description: q.description }))],
      ...(route.body ? { requestBody: { required: true, content: { 'application/json': { schema: { $ref: `#/components/schemas/${route.body}` } } } } } : {}),
      ...(route.rawBody ? { requestBody: { required: true, content: { 'application/x-ndjson': { schema: { type: 'string', description: 'NDJSON: one JSON document a line (docs/export-format.md)' } } } } } : {}),
      responses: { '200': { description: 'Success' }, ...errors },
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Strata', version: '1', description: 'Memory runtime for AI agents: ingest, memory, retrieval, context.' },
    paths,
    components: {
      schemas: { ...SCHEMAS, Error: ERROR_SCHEMA },
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT or API key' },
        apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
      },
    },
    security: [{ bearer: [] }, { apiKey: [] }],
  };
}
