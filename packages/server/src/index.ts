export * from './config';
export * from './node';
export * from './shards';
export { buildOpenApi } from './openapi';
