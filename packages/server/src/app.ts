import { randomUUID } from 'node:crypto';
import { context, trace, SpanKind, SpanStatusCode, type Span } from '@opentelemetry/api';
import { ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_HTTP_ROUTE, ATTR_URL_PATH } from './telemetry/attributes';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Logger } from 'pino';
import { StrataError, notFound } from '@strata/store';
import type { AuthService } from './auth/service';
import { requireRole, type Principal } from './auth/principal';
import { precheckRoute } from './auth/scope';
import { checkRawBody, jsonBodyReader } from './http/body';
import { sendError } from './http/errors';
import { sendJson } from './http/json-reply';
import { runHandler, type RouteContext, type RouteSpec } from './http/route';
import { RouteTable } from './http/route-table';
import type { Metrics } from './metrics';
import { traceIds, type Tracing } from './telemetry/tracing';
import { checkIdentifier, checkQueryNames, checkUuid, type Validator } from './validation';

export interface AppDeps {
  routes: RouteSpec[];
  auth: AuthService;
  validator: Validator;
  metrics: Metrics;
  logger: Logger;
  bodyLimit: number;
  /** requests per second per client address on /v1 (0 = unlimited) */
  rateLimitPerSecond: number;
  /** endpoints outside the route table that speak another protocol (MCP at /mcp), mounted before the routes */
  mounts?: ((app: express.Express) => void)[];
  /** runs the handler here (`run`) or sends the request to the node that must serve it (cluster forwarding) */
  forward?: (route: RouteSpec, ctx: RouteContext, run: () => Promise<void>) => Promise<void>;
  /** a server span per request (continuing an incoming `traceparent`) and an operation span per handler run */
  tracing?: Tracing;
}

/** Routes of the older model that must not be served; each names what replaced it (asked only of requests no route matched). */
const RETIRED: [RegExp, string][] = [
  [/^\/api\/v1(\/|$)/, 'the /v1 routes (see GET /openapi.json)'],
  [/^\/v1\/memories(\/|$)/, 'POST /v1/users/:user_id/streams/:stream_id/retrieve and /v1/users/:user_id/memories/:id'],
  [/^\/v1\/search(\/|$)/, 'POST /v1/users/:user_id/streams/:stream_id/retrieve'],
  [/^\/health(\/|$)/, 'GET /livez and GET /readyz'],
];

/** A fixed one-second window per client address: enough to shed a runaway client without shared state. */
function rateLimiter(perSecond: number) {
  const windows = new Map<string, { second: number; count: number }>();
  return (req: Request, _res: Response, next: NextFunction) => {
    if (!req.path.startsWith('/v1/')) return next();
    const second = Math.floor(Date.now() / 1000);
    const key = req.ip ?? 'unknown';
    const w = windows.get(key);
    if (!w || w.second !== second) {
      if (windows.size > 100_000) windows.clear();
      windows.set(key, { second, count: 1 });
      return next();
    }
    if (++w.count > perSecond) return next(new StrataError('rate_limited', 'Too many requests from this address; slow down.', undefined, 1));
    next();
  };
}

export function createApp(deps: AppDeps): express.Express {
  const { logger, metrics } = deps;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', false);

  // What every request pays is kept to what it uses (issue 27: the front was half of a write's CPU):
  // ids from a counter, metric series looked up by a string key, no span or debug line unless enabled.
  const newRequestId = requestIds();
  const series = requestSeries(metrics);
  app.use((req, res, next) => {
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && given.length > 0 && given.length <= 200 ? given : newRequestId();
    req.headers['x-request-id'] = id;
    res.setHeader('x-request-id', id);
    // A JSON answer (an error quoting what the caller sent, say) is never to be sniffed into HTML by a browser.
    res.setHeader('x-content-type-options', 'nosniff');
    const started = process.hrtime.bigint();
    const span = serverSpan(deps.tracing, req, id);
    res.locals.span = span;
    res.on('finish', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = (res.locals.route as string | undefined) ?? 'unmatched';
      series.observe(req.method, route, res.statusCode, seconds);
      if (logger.isLevelEnabled('debug')) {
        logger.debug({ request_id: id, ...traceIds(span?.span), method: req.method, route, status: res.statusCode, ms: Math.round(seconds * 1e4) / 10 }, 'request');
      }
    });
    if (!span) return next();
    // 'close' comes after 'finish', and also when the client went away before the answer
    res.on('close', () => endServerSpan(span.span, req, res));
    // the rest of the pipeline (auth, body, handler, forwarding) runs inside the request's span
    context.with(trace.setSpan(span.parent, span.span), next);
  });

  if (deps.rateLimitPerSecond > 0) app.use(rateLimiter(deps.rateLimitPerSecond));

  // Read by a matched route once the caller is authenticated (handle): no unauthenticated client makes
  // the node inflate and parse a body, and credentials are judged before the body is.
  const readBody = jsonBodyReader(deps.bodyLimit);

  // The API's routes first, matched in one step (http/route-table.ts) rather than by walking one router
  // layer per route; the endpoints of other protocols (MCP, the dashboard's files) have paths of their
  // own, so no API request walks their layers.
  const table = new RouteTable(deps.routes);
  app.use((req: Request, res: Response, next: NextFunction) => {
    const match = table.match(req.method, req.path);
    if (!match) return next();
    res.locals.route = match.route.path;
    req.params = match.params;
    handle(match.route, req, res, deps, readBody).catch(next);
  });

  for (const mount of deps.mounts ?? []) mount(app);

  // A known path with another method: 405 naming the allowed ones; a retired one: 404 naming what replaced
  // it; anything else: 404.
  app.use((req, _res, next) => {
    const retired = RETIRED.find(([pattern]) => pattern.test(req.path));
    if (retired) return next(notFound(`${req.path} is a retired route; use ${retired[1]}.`, 'route_not_found'));
    const allowed = deps.routes.filter((r) => pathMatches(r.path, req.path)).map((r) => r.method.toUpperCase());
    if (allowed.length > 0) {
      return next(new StrataError('method_not_allowed', `${req.method} is not allowed on ${req.path}; use ${allowed.join(' or ')}.`, allowed.map((m) => ({ path: req.path, message: m }))));
    }
    next(notFound(`No route ${req.method} ${req.path}; GET /openapi.json lists the routes.`, 'route_not_found'));
  });

  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    if (res.headersSent) return;
    // One envelope for everything (http/errors.ts); a bug is logged in full with the request id.
    sendError(res, err, (bug) => logger.error({ err: bug, request_id: req.headers['x-request-id'], ...traceIds((res.locals.span as { span: Span } | undefined)?.span) }, 'unhandled error'));
  });
  return app;
}

/** The request's server span (a child of the caller's `traceparent`, if any); undefined with tracing off. */
function serverSpan(tracing: Tracing | undefined, req: Request, requestId: string) {
  if (!tracing?.enabled) return undefined;
  const parent = tracing.extract(req.headers);
  const span = tracing.tracer.startSpan(req.method, {
    kind: SpanKind.SERVER,
    attributes: { [ATTR_HTTP_REQUEST_METHOD]: req.method, [ATTR_URL_PATH]: req.path, 'strata.request_id': requestId },
  }, parent);
  return { span, parent };
}

function endServerSpan(span: Span, req: Request, res: Response): void {
  const route = res.locals.route as string | undefined;
  if (route) {
    span.updateName(`${req.method} ${route}`);
    span.setAttribute(ATTR_HTTP_ROUTE, route);
  }
  span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, res.statusCode);
  if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  if (!res.writableFinished) span.setAttribute('error.type', 'client_closed');
  span.end();
}

/**
 * Request ids shaped like a UUID (8-4-4-4-12 hex): a random prefix drawn once per app, then a counter
 * in the last group. Unique within the node's life and, by the prefix, across nodes and restarts.
 */
function requestIds(): () => string {
  const prefix = randomUUID().slice(0, 23);
  let n = 0;
  return () => `${prefix}-${(++n).toString(16).padStart(12, '0')}`;
}

/**
 * strata_http_requests_total and strata_http_request_duration_seconds by a string key per series:
 * prom-client hashes a label object (sorting its keys) on every inc/observe; the children it returns
 * for a set of labels are the same series, kept here. Routes, methods and statuses are few, so are keys.
 */
function requestSeries(metrics: Metrics) {
  const counts = new Map<string, { inc(): void }>();
  const durations = new Map<string, { observe(seconds: number): void }>();
  return {
    observe(method: string, route: string, status: number, seconds: number): void {
      const timed = `${method} ${route}`;
      const counted = `${timed} ${status}`;
      let count = counts.get(counted);
      if (!count) counts.set(counted, (count = metrics.httpRequests.labels({ method, route, status: String(status) })));
      let duration = durations.get(timed);
      if (!duration) durations.set(timed, (duration = metrics.httpDuration.labels({ method, route })));
      count.inc();
      duration.observe(seconds);
    },
  };
}

function pathMatches(pattern: string, path: string): boolean {
  const re = new RegExp('^' + pattern.replace(/:[a-z_]+/g, '[^/]+') + '/?$');
  return re.test(path);
}

async function handle(route: RouteSpec, req: Request, res: Response, deps: AppDeps, readBody: (req: Request, res: Response) => Promise<void>): Promise<void> {
  let principal: Principal | null = null;
  if (route.auth !== 'public') {
    const key = req.headers['x-api-key'];
    principal = await deps.auth.authenticate(req.headers.authorization, Array.isArray(key) ? key[0] : key);
    requireRole(principal, route.auth);
  }
  route.beforeBody?.(req, res);
  // express 5 parses the query string again at every read of req.query: once here
  const query = req.query as Record<string, unknown>;
  checkQueryNames(query, route.queryParams);
  if (route.rawBody) checkRawBody(req, route.rawBody);
  else await readBody(req, res);
  const params: Record<string, string> = { ...(req.params as Record<string, string>) };
  if (params.user_id !== undefined) checkIdentifier(params.user_id, '/user_id');
  if (params.org_id !== undefined) checkIdentifier(params.org_id, '/org_id');
  const scope = route.scope ?? 'service';
  if (principal) precheckRoute(principal, scope, params);
  if (params.stream_id !== undefined) params.stream_id = checkUuid(params.stream_id, '/stream_id');
  let body: unknown = req.body;
  if (route.body) {
    body = deps.validator.check(route.body, body ?? {});
  }
  const ctx: RouteContext = { req, res, principal, params, query, body };
  const run = async () => {
    const answer = deps.tracing?.enabled
      ? await deps.tracing.span(`operation ${route.method.toUpperCase()} ${route.path}`, { attributes: { 'strata.route': route.path } }, () => runHandler(route, ctx))
      : await runHandler(route, ctx);
    if (!res.headersSent) sendJson(res, 200, answer);
  };
  await (deps.forward ? deps.forward(route, ctx, run) : run());
}
