import { backoffDelay, errorMessageOf, isRetryableStatus, parseRetryAfter } from '../../src/embedding/openai-protocol';

describe('retry policy', () => {
  it('retries 408, 429 and 5xx only', () => {
    expect([408, 429, 500, 502, 503, 504].every(isRetryableStatus)).toBe(true);
    expect([400, 401, 403, 404, 422].some(isRetryableStatus)).toBe(false);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(parseRetryAfter('2', now)).toBe(2000);
    expect(parseRetryAfter('0.5', now)).toBe(500);
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:10 GMT', now)).toBe(10_000);
    expect(parseRetryAfter('Tue, 31 Dec 2024 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
  });

  it('backs off exponentially with jitter, capped', () => {
    expect([0, 1, 2, 3].map((a) => backoffDelay(a, 100, 1000, () => 1))).toEqual([100, 200, 400, 800]);
    expect(backoffDelay(10, 100, 1000, () => 1)).toBe(1000);
    expect(backoffDelay(3, 100, 1000, () => 0)).toBe(0);
  });

  it('extracts the server message from common error shapes', () => {
    expect(errorMessageOf('{"error":{"message":"quota"}}')).toBe('quota');
    expect(errorMessageOf('{"error":"nope"}')).toBe('nope');
    expect(errorMessageOf('plain text')).toBe('plain text');
  });
});
