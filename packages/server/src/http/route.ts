import type { Request, Response } from 'express';
import type { ApiKeyRole } from '@strata/store';
import type { Principal } from '../auth/principal';
import type { RouteScope } from '../auth/scope';
import type { SchemaName } from '../schemas';

export interface RouteContext {
  req: Request;
  res: Response;
  /** null on public routes */
  principal: Principal | null;
  params: Record<string, string>;
  query: Record<string, unknown>;
  /** the validated body (when the route has a schema) */
  body: unknown;
}

/**
 * One row of the route table: the express registration, the authorization and validation, and the
 * OpenAPI entry all come from it.
 */
export interface RouteSpec {
  method: 'get' | 'post' | 'put' | 'delete';
  /** express path, e.g. /v1/users/:user_id/streams/:stream_id/events */
  path: string;
  summary: string;
  tag: string;
  /** `public`, or the least role that may call it */
  auth: 'public' | ApiKeyRole;
  body?: SchemaName;
  /** what the route acts on, for the scope checks of auth/scope.ts (default: defaultScope(path)) */
  scope?: RouteScope;
  /** query parameters, for the OpenAPI document */
  queryParams?: { name: string; schema: Record<string, unknown>; description?: string }[];
  /**
   * Whether the route changes state (default: every method but GET). Writes reaching a node that does
   * not lead the target shard (:user_id, else body.user_id, else shard 0) are forwarded to its leader;
   * read-only POST routes (retrieve, context, login) set false and are served from the local replica.
   */
  writes?: boolean;
  /** the handler's answer is sent as JSON with status 200 */
  handler: (ctx: RouteContext) => Promise<unknown>;
}
