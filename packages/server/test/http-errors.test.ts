import { readFileSync, readdirSync, statSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { ERROR_CODES, ERROR_STATUS, StrataError, isErrorCode } from '@strata/store';
import { planning } from '@strata/memory';
import { createApp, type AppDeps } from '../src/app';
import { INTERNAL_MESSAGE, errorReply } from '../src/http/errors';
import type { RouteSpec } from '../src/http/route';
import { Metrics } from '../src/metrics';

/** CONTRACT.md §0: the status of every code the contract names. */
const CONTRACT: Record<string, number> = {
  invalid_json: 400, validation_failed: 400, invalid_id: 400, invalid_body_encoding: 400,
  unauthenticated: 401, forbidden: 403, not_found: 404, route_not_found: 404, conflict: 409, invalid_transition: 409,
  payload_too_large: 413, unsupported_media_type: 415, rate_limited: 429, no_leader: 503, unavailable: 503, internal: 500,
};

const PACKAGES = join(__dirname, '..', '..');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/**
 * Every code literal handed to an error constructor or helper anywhere in packages/*\/src. The types
 * already refuse an unknown code; this also catches one that reaches a thrower through a cast or a string.
 */
function thrownCodes(): Map<string, string> {
  const found = new Map<string, string>();
  const patterns = [
    /\b(?:StrataError|badRequest|PlanningError|SemanticError)\(\s*'([a-z0-9_]+)'/g,
    /\b(?:notFound|conflict|unavailable)\([^;]*?,\s*'([a-z0-9_]+)'\s*[,)]/g,
  ];
  for (const pkg of readdirSync(PACKAGES)) {
    let files: string[];
    try {
      files = sources(join(PACKAGES, pkg, 'src'));
    } catch {
      continue;
    }
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      for (const re of patterns) for (const m of text.matchAll(re)) found.set(m[1], file);
    }
  }
  return found;
}

describe('error codes and statuses (one table)', () => {
  it('gives every code of the contract its status', () => {
    for (const [code, status] of Object.entries(CONTRACT)) {
      expect({ code, status: isErrorCode(code) ? ERROR_STATUS[code] : 'missing' }).toEqual({ code, status });
    }
  });

  it('covers every code thrown in the sources, and each maps to an error status', () => {
    const thrown = thrownCodes();
    expect(thrown.size).toBeGreaterThan(15); // the scan sees the throw sites
    for (const [code, file] of thrown) expect({ code, file, known: isErrorCode(code) }).toEqual({ code, file, known: true });
    for (const code of ERROR_CODES) {
      const reply = errorReply(new StrataError(code, 'x'));
      expect(reply.status).toBe(ERROR_STATUS[code]);
      expect(reply.status >= 400 && reply.status <= 599).toBe(true);
      expect(reply.body).toEqual({ error: 'x', code });
    }
  });

  it('is what domain errors of memory carry (no mapping by class name)', () => {
    const err = new planning.PlanningError('invalid_transition', 'done tasks stay done');
    expect(err).toBeInstanceOf(StrataError);
    expect(errorReply(err)).toEqual({ status: 409, headers: {}, body: { error: 'done tasks stay done', code: 'invalid_transition' } });
  });
});

describe('the error handler of the app', () => {
  const lines: string[] = [];
  let base = '';
  let close: () => Promise<void>;

  const route = (path: string, fail: () => unknown): RouteSpec => ({
    method: 'get', path, summary: 'fails', tag: 'test', auth: 'public',
    handler: async () => {
      throw fail();
    },
  });

  beforeAll(async () => {
    const logger = pino({ level: 'error' }, new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    }));
    // Public routes only: authentication, scopes and body validation are never reached.
    const unused = undefined as never;
    const deps: AppDeps = {
      routes: [
        route('/bug', () => new Error('secret detail /srv/strata/store.ts:12')),
        route('/thrown-string', () => 'not even an Error'),
        route('/busy', () => new StrataError('no_leader', 'No leader; retry.', undefined, 1)),
        route('/planning', () => new planning.PlanningError('validation_failed', 'status is unknown', [{ path: '/status', message: 'is unknown' }])),
      ],
      auth: unused, validator: unused,
      metrics: new Metrics(), logger, bodyLimit: 1024, rateLimitPerSecond: 0,
    };
    const server = createApp(deps).listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => new Promise((resolve) => server.close(() => resolve()));
  });

  afterAll(() => close());

  it('answers an unknown error 500 internal with no stack or message in the body, and logs it with the request id', async () => {
    for (const path of ['/bug', '/thrown-string']) {
      const res = await fetch(base + path, { headers: { 'x-request-id': `req-${path.slice(1)}` } });
      const text = await res.text();
      expect(res.status).toBe(500);
      expect(JSON.parse(text)).toEqual({ error: INTERNAL_MESSAGE, code: 'internal' });
      expect(text).not.toMatch(/secret|\.ts:|\n\s+at /);
    }
    const logged = lines.map((l) => JSON.parse(l) as { request_id: string; err: { stack?: string } | string });
    const bug = logged.find((l) => l.request_id === 'req-bug');
    expect(typeof bug?.err === 'object' && bug.err.stack).toMatch(/secret detail[\s\S]*\n\s+at /);
    expect(logged.some((l) => l.request_id === 'req-thrown-string')).toBe(true);
  });

  it('writes a domain error as its code with details, and a 503 with Retry-After', async () => {
    const planned = await fetch(`${base}/planning`);
    expect(planned.status).toBe(400);
    expect(await planned.json()).toEqual({ error: 'status is unknown', code: 'validation_failed', details: [{ path: '/status', message: 'is unknown' }] });
    const busy = await fetch(`${base}/busy`);
    expect(busy.status).toBe(503);
    expect(busy.headers.get('retry-after')).toBe('1');
    expect(await busy.json()).toEqual({ error: 'No leader; retry.', code: 'no_leader' });
  });

  it('answers a known path with another method 405 with Allow and no details, an unknown one 404', async () => {
    const wrong = await fetch(`${base}/bug`, { method: 'DELETE' });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET');
    expect(await wrong.json()).toEqual({ error: 'DELETE is not allowed on /bug; use GET.', code: 'method_not_allowed' });
    const missing = await fetch(`${base}/nowhere`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { code: string }).code).toBe('route_not_found');
  });
});
