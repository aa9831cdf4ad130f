import type { Request, Response } from 'express';
import type { ApiKeyRole } from '@strata/store';
import type { Principal } from '../auth/principal';
import type { RouteScope } from '../auth/scope';
import type { Body, SchemaName } from '../schemas';

/** What a handler gets; `B` is the body's type (Body<N> on a route with schema N, unknown otherwise). */
export interface RouteContext<B = unknown> {
  req: Request;
  res: Response;
  /** null on public routes */
  principal: Principal | null;
  params: Record<string, string>;
  query: Record<string, unknown>;
  /** the validated body (when the route has a schema) */
  body: B;
}

/**
 * One row of the route table: the express registration, the authorization and validation, and the
 * OpenAPI entry all come from it. `RouteSpec` (no argument) is any row: a union discriminated by
 * `body`, so a row written with `body: 'Event'` has its handler typed with `ctx.body: Body<'Event'>`,
 * and a row without a schema gets `unknown`.
 */
export type RouteSpec<N extends SchemaName | undefined = SchemaName | undefined> = N extends SchemaName
  ? RouteRow & { /** the body's schema (schemas.ts), checked before the handler runs */ body: N; handler: (ctx: RouteContext<Body<N>>) => Promise<unknown> }
  : RouteRow & { body?: undefined; handler: (ctx: RouteContext) => Promise<unknown> };

/** The fields of a row that do not depend on its body schema. */
interface RouteRow {
  method: 'get' | 'post' | 'put' | 'delete';
  /** express path, e.g. /v1/users/:user_id/streams/:stream_id/events */
  path: string;
  summary: string;
  tag: string;
  /** `public`, or the least role that may call it */
  auth: 'public' | ApiKeyRole;
  /** who authorizes the caller's scope (auth/scope.ts RouteScope; default: service) */
  scope?: RouteScope;
  /** query parameters, for the OpenAPI document */
  queryParams?: { name: string; schema: Record<string, unknown>; description?: string }[];
  /**
   * Whether the route changes state (default: every method but GET). Writes reaching a node that does
   * not lead the target shard (:user_id, else body.user_id, else shard 0) are forwarded to its leader;
   * read-only POST routes (retrieve, context, login) set false and are served from the local replica.
   */
  writes?: boolean;
  /**
   * The route stores a request once per `Idempotency-Key` header (a retry with the key answers the
   * first answer): a node whose forwarded copy was cut off by the leader's death, outcome unknown, may
   * then send it again to the new leader itself (cluster/forward.ts), as the client would.
   */
  idempotencyKey?: boolean;
  /**
   * The route reads its body itself, as a stream of this format (`POST /v1/import`): no JSON body is
   * read or validated for it; app.ts checks the media type, the handler pulls the bytes with
   * http/body.ts `rawBodyChunks` and its own size limit.
   */
  rawBody?: 'ndjson';
  /**
   * Judges a public route's request from its headers alone, before a byte of its body is read (the
   * cluster's internal routes: the peer signature, cluster/peer-auth.ts); throws to refuse, so an
   * unsigned request is answered 401 whatever its body. What it found goes in `res.locals`.
   */
  beforeBody?: (req: Request, res: Response) => void;
}

/**
 * Runs a row's handler (its answer is sent as JSON with status 200). The caller (app.ts) has validated
 * `ctx.body` against the row's schema, which is what makes the body's type true: the one place where
 * the validated `unknown` becomes `Body<N>`.
 */
export function runHandler(route: RouteSpec, ctx: RouteContext): Promise<unknown> {
  return (route.handler as (ctx: RouteContext) => Promise<unknown>)(ctx);
}

/** The principal of an authenticated route (the auth step has set it; a public route has none). */
export function callerOf(ctx: { principal: Principal | null }): Principal {
  if (!ctx.principal) throw new Error('an authenticated route ran without a principal');
  return ctx.principal;
}

/** The query parameters of a paged listing (`after` cursor, `limit`), for the OpenAPI document. */
export function pageParams(defaultLimit: number, maxLimit: number): NonNullable<RouteRow['queryParams']> {
  return [
    { name: 'after', schema: { type: 'string' }, description: 'next_cursor of the previous page' },
    { name: 'limit', schema: { type: 'integer', minimum: 1, maximum: maxLimit, default: defaultLimit } },
  ];
}
