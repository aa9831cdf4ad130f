import { loadConfig } from '../src/config';
import { Validator, checkIdentifier, jsonDeeperThan, queryInt } from '../src/validation';

/** The pure parts of input handling (validation.ts); the HTTP behaviour is in test/api/hardening.test.ts. */
describe('jsonDeeperThan', () => {
  const nest = (n: number) => '['.repeat(n) + ']'.repeat(n);

  it('measures nesting, the outermost container being level 1', () => {
    expect(jsonDeeperThan(nest(64), 64)).toBe(false);
    expect(jsonDeeperThan(nest(65), 64)).toBe(true);
    expect(jsonDeeperThan('{"a":[{"b":[]}]}', 3)).toBe(true);
    expect(jsonDeeperThan('{"a":[{"b":[]}]}', 4)).toBe(false);
    expect(jsonDeeperThan('1', 0)).toBe(false);
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    expect(jsonDeeperThan(JSON.stringify({ s: '[[[[[[[[[[' }), 2)).toBe(false);
    expect(jsonDeeperThan(JSON.stringify({ s: 'a"[[[[\\"[[[' }), 2)).toBe(false);
    expect(jsonDeeperThan(`{"s":"\\\\"}${''}`, 1)).toBe(false);
    expect(jsonDeeperThan(`["\\\\",[[]]]`, 2)).toBe(true);
  });

  it('reads UTF-8 bytes as it reads strings', () => {
    const text = JSON.stringify({ 'é😀': ['ü', { x: '[' }] });
    expect(jsonDeeperThan(Buffer.from(text), 2)).toBe(jsonDeeperThan(text, 2));
    expect(jsonDeeperThan(Buffer.from(nest(100_000)), 64)).toBe(true);
  });
});

describe('queryInt', () => {
  it('takes decimal integers only', () => {
    expect(queryInt(undefined, 'limit', 100, 1, 1000)).toBe(100);
    expect(queryInt('', 'limit', 100, 1, 1000)).toBe(100);
    expect(queryInt('010', 'limit', 100, 1, 1000)).toBe(10);
    for (const bad of ['0x10', '1e2', '+5', ' 5', '5 ', '10.0', '-1', '0', '1001', 'Infinity', ['1', '2'], '9'.repeat(30)]) {
      expect(() => queryInt(bad, 'limit', 100, 1, 1000)).toThrow(expect.objectContaining({ status: 400, code: 'validation_failed' }));
    }
  });
});

describe('identifiers', () => {
  const validator = new Validator();
  const event = (agent_id: string) => () => validator.check('Event', { content: 'x', agent_id });

  it('bounds identifiers at 256 bytes of UTF-8, in the schema and in path checks alike', () => {
    expect(event('é'.repeat(128))).not.toThrow();
    expect(event('é'.repeat(129))).toThrow(expect.objectContaining({ details: [{ path: '/agent_id', message: 'must be at most 256 bytes of UTF-8' }] }));
    expect(() => checkIdentifier('é'.repeat(128), '/user_id')).not.toThrow();
    expect(() => checkIdentifier('é'.repeat(129), '/user_id')).toThrow(expect.objectContaining({ code: 'invalid_id' }));
  });

  it('refuses C0, DEL and C1 control characters', () => {
    for (const bad of ['a\u0000', 'a\u001f', 'a\u007f', 'a\u0085', 'a\u009f']) {
      expect(event(bad)).toThrow(expect.objectContaining({ code: 'validation_failed' }));
      expect(() => checkIdentifier(bad, '/user_id')).toThrow(expect.objectContaining({ code: 'invalid_id' }));
    }
    expect(event('a\u00a0b')).not.toThrow();
  });

  it('refuses a lone surrogate (it would be stored as U+FFFD, sharing keys with that id) and keeps paired ones', () => {
    for (const bad of ['a\ud800', '\udc00b', 'x\udbff\u0041']) {
      expect(event(bad)).toThrow(expect.objectContaining({ code: 'validation_failed' }));
      expect(() => checkIdentifier(bad, '/user_id')).toThrow(expect.objectContaining({ code: 'invalid_id' }));
    }
    expect(event('emoji \ud83d\ude00')).not.toThrow();
    expect(() => checkIdentifier('\ud83d\ude00', '/user_id')).not.toThrow();
  });
});

describe('date-time', () => {
  const validator = new Validator();
  it('refuses a time a Date cannot hold (leap second), accepts RFC 3339 otherwise', () => {
    expect(() => validator.check('Event', { content: 'x', valid_time: '2024-06-30T23:59:60Z' })).toThrow(expect.objectContaining({ code: 'validation_failed' }));
    expect(() => validator.check('Event', { content: 'x', valid_time: '2024-06-30T23:59:59.999+02:00' })).not.toThrow();
  });
});

describe('server timeouts configuration', () => {
  it('has defaults and refuses a headers timeout longer than the request timeout', () => {
    const config = loadConfig({ env: {} });
    expect(config.server).toMatchObject({ headers_timeout_ms: 10_000, request_timeout_ms: 60_000 });
    expect(() => loadConfig({ env: { STRATA__SERVER__HEADERS_TIMEOUT_MS: '5000', STRATA__SERVER__REQUEST_TIMEOUT_MS: '1000' } })).toThrow(/server.headers_timeout_ms/);
  });
});
