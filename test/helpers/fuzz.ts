/**
 * Property-based fuzzing of the HTTP API (fast-check), shared by test/api/fuzz.test.ts (a bounded,
 * seeded run in `npm test`) and scripts/fuzz.ts (longer runs). Requests are generated from the route
 * table as the node publishes it (`GET /openapi.json`: every route, its path and query parameters,
 * and the JSON schema of its body): values that fit the schema, values just outside it, and junk, in
 * the body, the query and the headers. The property: every answer is a 2xx, or a 4xx carrying the
 * envelope `{error, code}`; never a 5xx, never a hang (a bounded wait per request).
 */
import { request as httpRequest, Agent } from 'node:http';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';

type Schema = Record<string, unknown>;

export interface FuzzRoute {
  method: string;
  /** OpenAPI path, `{name}` for parameters */
  path: string;
  role: 'public' | 'read' | 'write' | 'admin';
  query: { name: string; schema: Schema }[];
  body: Schema | null;
}

export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer | null;
}

export interface FuzzAnswer {
  status: number;
  body: string;
  contentType: string;
}

/**
 * Cluster operations change the membership (an admin `join` of a made-up address adds a member that
 * never catches up, and waits for it): with valid credentials they are an operator's act, not input to
 * fuzz. They are still fuzzed without credentials and with a read key (401/403 whatever the input).
 */
const MEMBERSHIP = /^\/v1\/cluster\/(join|initialize|nodes\/)/;

/** The routes of an OpenAPI document, with `$ref`s to component schemas resolved. */
export function routesFromOpenApi(doc: { paths: Record<string, Record<string, Record<string, unknown>>>; components: { schemas: Record<string, Schema> } }): FuzzRoute[] {
  const resolve = (s: Schema | undefined): Schema | null => {
    if (!s) return null;
    const ref = s.$ref as string | undefined;
    return ref ? doc.components.schemas[ref.split('/').pop()!] : s;
  };
  const routes: FuzzRoute[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const params = (op.parameters ?? []) as { name: string; in: string; schema: Schema }[];
      const body = (op.requestBody as { content?: Record<string, { schema: Schema }> } | undefined)?.content?.['application/json']?.schema;
      const role = (Array.isArray(op.security) && op.security.length === 0 ? 'public' : (op['x-strata-role'] as FuzzRoute['role'] | undefined) ?? 'admin');
      routes.push({ method: method.toUpperCase(), path, role, query: params.filter((p) => p.in === 'query'), body: resolve(body) });
    }
  }
  return routes;
}

const UUIDISH = fc.oneof(fc.uuid(), fc.uuid().map((u) => u.toUpperCase()), fc.constantFrom('not-a-uuid', '00000000-0000-0000-0000-00000000000g', ''));
/** Strings a careless or hostile client sends: unicode, control characters, lone surrogates, markup, long runs. */
const NASTY_STRING = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom('', ' ', '\u0000', '\t\n', '\ud800', '\u0085', '2024-06-30T23:59:60Z', '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]', '../../etc/passwd', '<script>', '%00', '%E0%A4%A', 'é'.repeat(200), '😀'.repeat(70)),
  fc.integer({ min: 257, max: 70_000 }).map((n) => 'x'.repeat(n)),
);
const RFC3339ISH = fc.oneof(
  fc.date({ min: new Date(0), max: new Date(4102444800000), noInvalidDate: true }).map((d) => d.toISOString()),
  fc.constantFrom('2024-06-30T23:59:60Z', '2024-02-30T00:00:00Z', '2024-06-30t23:59:59z', '2024-06-30T23:59:59+24:00', '0000-01-01T00:00:00Z', '9999-12-31T23:59:59.999999999Z', 'yesterday'),
);
const JUNK: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom(null, true, 0, -1, 1.01, 1e308, -0, 2 ** 31, 2 ** 53 + 1, 0.5, [], {}, '', 'null', 'InProgress', 'UNKNOWN', 'related_to'),
  fc.integer({ min: 60, max: 3000 }).map((d) => JSON.parse('['.repeat(d) + ']'.repeat(d)) as unknown),
);

/**
 * A value for a JSON schema: one that fits it entirely (so requests get past validation to the code
 * behind it), one that fits but for one place (a value replaced by junk, or a required key missing),
 * or junk. Deciding per value rather than per field keeps whole valid bodies frequent.
 */
function valueOf(schema: Schema | null): fc.Arbitrary<unknown> {
  if (!schema) return JUNK;
  const fits = fitting(schema, 0);
  return fc.oneof(
    { weight: 3, arbitrary: fits },
    { weight: 2, arbitrary: fc.tuple(fits, fc.array(fc.nat(), { minLength: 4, maxLength: 4 }), fc.oneof(JUNK, NASTY_STRING)).map(([v, path, bad]) => mutateOne(v, path, bad)) },
    { weight: 1, arbitrary: fc.oneof(JUNK, NASTY_STRING) },
  );
}

/** `value` with one place changed: walking `path` (indices of keys or items), the place reached is replaced by `bad` or, in an object, deleted. */
function mutateOne(value: unknown, path: number[], bad: unknown): unknown {
  const [step, ...rest] = path;
  if (Array.isArray(value) && value.length > 0) {
    const i = step % value.length;
    return value.map((v, j) => (j === i ? (rest.length > 0 && step % 3 !== 0 ? mutateOne(v, rest, bad) : bad) : v));
  }
  if (typeof value === 'object' && value !== null && Object.keys(value).length > 0) {
    const keys = Object.keys(value);
    const key = keys[step % keys.length];
    const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    if (step % 5 === 0) delete out[key];
    else out[key] = rest.length > 0 && step % 3 !== 0 ? mutateOne(out[key], rest, bad) : bad;
    return out;
  }
  return bad;
}

/** A value that fits the schema (nested values too). */
function fitting(schema: Schema, depth: number): fc.Arbitrary<unknown> {
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  const types = (Array.isArray(schema.type) ? schema.type : [schema.type ?? 'any']) as string[];
  return fc.oneof(...types.map((type) => fittingOfType(type, schema, depth)));
}

function fittingOfType(type: string, schema: Schema, depth: number): fc.Arbitrary<unknown> {
  const min = schema.minimum as number | undefined;
  const max = schema.maximum as number | undefined;
  switch (type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return fc.integer({ min: min ?? -5, max: max ?? 50 });
    case 'number':
      return fc.double({ min: min ?? -10, max: max ?? 10, noNaN: true });
    case 'string': {
      if (schema.format === 'date-time') return RFC3339ISH;
      if (typeof schema.pattern === 'string' && schema.pattern.includes('[0-9a-fA-F]{8}')) return UUIDISH;
      const maxLength = Math.min((schema.maxLength as number | undefined) ?? 64, 64);
      return fc.oneof(fc.constantFrom('I moved to Lisbon last week', 'alice', 'acme', 'planner', '{"a":[1,2]}', '[[[]]]'), fc.string({ minLength: 1, maxLength }), fc.string({ unit: 'grapheme', minLength: 1, maxLength }));
    }
    case 'array':
      return fc.array(fitting(schema.items as Schema, depth + 1), { maxLength: 4 });
    case 'object': {
      const props = (schema.properties ?? {}) as Record<string, Schema>;
      const required = (schema.required ?? []) as string[];
      // free JSON (metadata) when the schema names no properties
      if (Object.keys(props).length === 0 || depth > 4) return fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 });
      const record = fc.record(Object.fromEntries(Object.entries(props).map(([k, s]) => [k, fitting(s, depth + 1)])), { requiredKeys: required.filter((k) => k in props) });
      // unknown keys are ignored (CONTRACT.md §0): sometimes some come along
      return fc.tuple(record, fc.option(fc.dictionary(fc.string({ maxLength: 10 }), JUNK, { maxKeys: 2 }))).map(([r, extra]) => ({ ...(extra ?? {}), ...r }));
    }
    default:
      return JUNK;
  }
}

/** Percent-encoding that survives lone surrogates (they become U+FFFD, as a browser would send them). */
function encode(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return encodeURIComponent(value.replace(/[\ud800-\udfff]/g, '\ufffd'));
  }
}

/** A path parameter: mostly plausible, sometimes not, always sendable (percent-encoded). */
function paramOf(name: string): fc.Arbitrary<string> {
  const plausible = name === 'stream_id' ? fc.uuid()
    : name === 'user_id' ? fc.constantFrom('fuzz-a', 'fuzz-b', 'ivo')
      : name === 'org_id' ? fc.constantFrom('acme', 'globex')
        : name === 'node_id' ? fc.constantFrom('1', '2', '0', '-1', '0x2')
          : fc.uuid();
  return fc.oneof(
    { weight: 8, arbitrary: plausible.map(encode) },
    { weight: 1, arbitrary: NASTY_STRING.map((v) => encode(v.slice(0, 300)) || 'x') },
    { weight: 1, arbitrary: fc.constantFrom('%E0%A4%A', '%', '%00', '..', '%2F') },
  );
}

const QUERY_JUNK = fc.oneof(fc.constantFrom('0x10', '1e2', '-1', '0', '', ' 5', '10.5', 'true', 'linearizable', 'NaN', '99999999999999999999'), fc.string({ maxLength: 20 }));

type Pair = [string, string];

function queryOf(route: FuzzRoute): fc.Arbitrary<string> {
  const pairs = route.query.map((q) => fc.option(fc.oneof(valueOf(q.schema).map((v) => (typeof v === 'string' ? v : JSON.stringify(v) ?? '')), QUERY_JUNK)
    // sometimes repeated: ?limit=5&limit=2
    .chain((v): fc.Arbitrary<Pair[]> => fc.constantFrom<Pair[]>([[q.name, v]], [[q.name, v], [q.name, '2']]))));
  const extra = fc.option(fc.tuple(fc.constantFrom('limit', 'after', 'org_id', 'cascade', 'x', 'level'), QUERY_JUNK).map((p): Pair[] => [p]));
  return fc.tuple(...pairs, extra).map((all) => {
    const flat = (all as (Pair[] | null)[]).filter((p): p is Pair[] => p !== null).flat();
    return flat.length === 0 ? '' : '?' + flat.map(([k, v]) => `${encode(k)}=${encode(v)}`).join('&');
  });
}

/** Header values Node will send (visible ASCII and spaces). */
const HEADER_VALUE = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 300 });

export interface Credentials {
  admin: string;
  read: string;
}

function credentialsOf(route: FuzzRoute, creds: Credentials): fc.Arbitrary<Record<string, string>> {
  const valid = MEMBERSHIP.test(route.path) ? [] : [{ weight: 12, arbitrary: fc.constant({ 'x-api-key': creds.admin }) }];
  return fc.oneof(
    ...valid,
    { weight: 1, arbitrary: fc.constant({ 'x-api-key': creds.read }) },
    { weight: 1, arbitrary: fc.constant({}) },
    { weight: 1, arbitrary: HEADER_VALUE.map((v) => ({ authorization: `Bearer ${v}` })) },
    { weight: 1, arbitrary: HEADER_VALUE.map((v) => ({ 'x-api-key': v })) },
  );
}

const CONTENT_TYPE = fc.oneof(
  { weight: 8, arbitrary: fc.constant('application/json') },
  { weight: 1, arbitrary: fc.constantFrom('application/json; charset=utf-8', 'application/json; charset=utf-16', 'text/plain', 'application/merge-patch+json', 'multipart/form-data; boundary=x', 'application/json; =', '') },
);

function bodyOf(route: FuzzRoute): fc.Arbitrary<{ bytes: Buffer | null; encoding: string | null }> {
  const json = valueOf(route.body ?? { type: 'object' }).map((v) => Buffer.from(JSON.stringify(v) ?? 'null'));
  return fc.oneof(
    { weight: 8, arbitrary: json.map((bytes) => ({ bytes, encoding: null })) },
    { weight: 1, arbitrary: json.map((bytes) => ({ bytes: gzipSync(bytes), encoding: 'gzip' })) },
    { weight: 1, arbitrary: json.chain((bytes) => fc.constantFrom('gzip', 'deflate', 'br', 'compress').map((encoding) => ({ bytes, encoding }))) },
    { weight: 1, arbitrary: fc.oneof(fc.string({ maxLength: 60 }), fc.constantFrom('{', '{"content":', '[]', 'null', '"x"', '\ufeff{}', '{"a":1}garbage')).map((s) => ({ bytes: Buffer.from(s), encoding: null })) },
    { weight: 1, arbitrary: fc.constant({ bytes: null, encoding: null }) },
  );
}

/** One request to one route: path, query, credentials, headers and body generated together. */
export function requestArbitrary(routes: FuzzRoute[], creds: Credentials): fc.Arbitrary<FuzzRequest> {
  return fc.constantFrom(...routes).chain((route) => {
    const names = [...route.path.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1]);
    return fc.record({
      params: fc.tuple(...names.map(paramOf)),
      query: queryOf(route),
      auth: credentialsOf(route, creds),
      contentType: CONTENT_TYPE,
      body: route.method === 'GET' ? fc.constant({ bytes: null, encoding: null }) : bodyOf(route),
      extra: fc.record({
        'idempotency-key': HEADER_VALUE, 'x-memory-budget': fc.oneof(HEADER_VALUE, fc.integer().map(String)), 'x-request-id': HEADER_VALUE,
      }, { requiredKeys: [] }),
    }).map(({ params, query, auth, contentType, body, extra }) => {
      let i = 0;
      const path = route.path.replace(/\{[a-z_]+\}/g, () => params[i++]) + query;
      const headers: Record<string, string> = { ...extra, ...auth };
      if (body.bytes !== null && contentType !== '') headers['content-type'] = contentType;
      if (body.encoding) headers['content-encoding'] = body.encoding;
      return { method: route.method, path, headers, body: body.bytes };
    });
  });
}

const agent = new Agent({ keepAlive: true, maxSockets: 4 });

/** Sends one request; rejects when no answer comes within `timeoutMs` (a hang is a failure). */
export function send(baseUrl: string, req: FuzzRequest, timeoutMs: number): Promise<FuzzAnswer> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    // Node's client sends a DELETE body without Content-Length (and closes after it): say it explicitly.
    const headers = req.body ? { ...req.headers, 'content-length': String(req.body.length) } : req.headers;
    const r = httpRequest({ host: url.hostname, port: url.port, method: req.method, path: req.path, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), contentType: String(res.headers['content-type'] ?? '') }));
      res.on('error', reject);
    });
    r.setTimeout(timeoutMs, () => r.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    r.on('error', reject);
    r.end(req.body ?? undefined);
  });
}

/** Why an answer breaks the property, or null when it keeps it. */
export function violation(answer: FuzzAnswer): string | null {
  if (answer.status >= 200 && answer.status < 300) return null;
  if (answer.status < 400 || answer.status >= 500) return `status ${answer.status}: ${answer.body.slice(0, 300)}`;
  if (!answer.contentType.includes('application/json')) return `status ${answer.status} without a JSON envelope (content-type ${answer.contentType || 'none'})`;
  try {
    const body = JSON.parse(answer.body) as { error?: unknown; code?: unknown };
    if (typeof body.error !== 'string' || typeof body.code !== 'string' || !/^[a-z][a-z0-9_]*$/.test(body.code)) return `status ${answer.status} with a body that is not the envelope: ${answer.body.slice(0, 300)}`;
  } catch {
    return `status ${answer.status} with a body that is not JSON: ${answer.body.slice(0, 300)}`;
  }
  return null;
}

export interface FuzzStats {
  requests: number;
  statuses: Map<number, number>;
  /** each failing request, readable (the body as text, cut at 300 bytes) */
  failures: { problem: string; method: string; path: string; headers: Record<string, string>; body: string | null }[];
}

/**
 * Runs the property `runs` times from `seed` against a node. Statuses are counted over every request
 * sent, shrinking included. Returns fast-check's verdict with the figures.
 */
export async function fuzzNode(options: { url: string; routes: FuzzRoute[]; creds: Credentials; runs: number; seed: number; timeoutMs: number }) {
  const stats: FuzzStats = { requests: 0, statuses: new Map(), failures: [] };
  const property = fc.asyncProperty(requestArbitrary(options.routes, options.creds), async (req) => {
    let problem: string | null;
    try {
      const answer = await send(options.url, req, options.timeoutMs);
      stats.requests++;
      stats.statuses.set(answer.status, (stats.statuses.get(answer.status) ?? 0) + 1);
      problem = violation(answer);
    } catch (err) {
      stats.requests++;
      problem = `no answer: ${(err as Error).message}`;
    }
    if (problem) {
      stats.failures.push({ problem, method: req.method, path: req.path.slice(0, 300), headers: req.headers, body: req.body && req.body.subarray(0, 300).toString('utf8') });
      throw new Error(problem);
    }
  });
  const result = await fc.check(property, { numRuns: options.runs, seed: options.seed, endOnFailure: true });
  return { result, stats };
}

export function closeFuzzAgent(): void {
  agent.destroy();
}
