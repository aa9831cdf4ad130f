import { buildUnitFilter, inTimeRange, isAccessible, isVisibleAt } from '../../src/retrieval/filters';
import { unit } from './helpers';

describe('isVisibleAt (as_of)', () => {
  const created = '2024-03-01T00:00:00.000Z';
  const retired = '2024-06-01T00:00:00.000Z';
  const u = unit({ transaction_time: created, retired_at: retired, retired_reason: 'superseded' });
  const ms = (s: string) => Date.parse(s);

  it('hides retired units without as_of', () => {
    expect(isVisibleAt(u)).toBe(false);
    expect(isVisibleAt(unit())).toBe(true);
  });
  it('is a point-in-time view', () => {
    expect(isVisibleAt(u, ms('2024-02-01T00:00:00Z'))).toBe(false); // not yet created
    expect(isVisibleAt(u, ms(created))).toBe(true); // created at that instant
    expect(isVisibleAt(u, ms('2024-04-01T00:00:00Z'))).toBe(true); // retired later: shown
    expect(isVisibleAt(u, ms(retired))).toBe(false); // retired at or before: hidden
    expect(isVisibleAt(u, ms('2024-07-01T00:00:00Z'))).toBe(false);
  });
});

describe('inTimeRange', () => {
  it('uses valid time, falling back to transaction time', () => {
    const u = unit({ valid_time: '2023-05-08T13:56:00.000Z', transaction_time: '2024-01-01T00:00:00.000Z' });
    expect(inTimeRange(u, Date.parse('2023-05-01T00:00:00Z'), Date.parse('2023-05-31T00:00:00Z'))).toBe(true);
    expect(inTimeRange(u, Date.parse('2023-12-01T00:00:00Z'))).toBe(false);
    const noValid = unit({ valid_time: '', transaction_time: '2024-01-01T00:00:00.000Z' });
    expect(inTimeRange(noValid, Date.parse('2023-12-01T00:00:00Z'), Date.parse('2024-02-01T00:00:00Z'))).toBe(true);
    expect(inTimeRange(noValid, undefined, Date.parse('2023-12-01T00:00:00Z'))).toBe(false);
  });
  it('includes both bounds', () => {
    const u = unit({ valid_time: '2024-01-01T00:00:00.000Z' });
    const t = Date.parse(u.valid_time);
    expect(inTimeRange(u, t, t)).toBe(true);
  });
});

describe('isAccessible', () => {
  it('allows own units and the requested org, never other users private units', () => {
    expect(isAccessible(unit({ user_id: 'alice' }), 'alice')).toBe(true);
    expect(isAccessible(unit({ user_id: 'alice', org_id: 'acme' }), 'alice')).toBe(true);
    expect(isAccessible(unit({ user_id: 'bob' }), 'alice', 'acme')).toBe(false);
    expect(isAccessible(unit({ user_id: 'bob', org_id: 'acme' }), 'alice', 'acme')).toBe(true);
    expect(isAccessible(unit({ user_id: 'bob', org_id: 'acme' }), 'alice')).toBe(false);
    expect(isAccessible(unit({ user_id: 'bob', org_id: 'other' }), 'alice', 'acme')).toBe(false);
  });
});

describe('buildUnitFilter', () => {
  it('combines scope, visibility, time and as_of', () => {
    const f = buildUnitFilter({ user_id: 'alice', stream_id: 's1', scope: 'stream', start_time: '2024-01-01T00:00:00Z' });
    expect(f(unit())).toBe(true);
    expect(f(unit({ stream_id: 's2' }))).toBe(false);
    expect(f(unit({ valid_time: '2023-01-01T00:00:00.000Z' }))).toBe(false);
    expect(f(unit({ retired_at: '2024-02-01T00:00:00.000Z' }))).toBe(false);
    const userScope = buildUnitFilter({ user_id: 'alice', stream_id: 's1' });
    expect(userScope(unit({ stream_id: 's2' }))).toBe(true);
  });
  it('agrees with the plain predicates on random units, canonical times or not', () => {
    let seed = 99;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    const base = Date.parse('2024-01-01T00:00:00.000Z');
    const time = () => {
      const ms = base + Math.floor(rnd() * 10) * 86_400_000;
      const r = rnd();
      if (r < 0.6) return new Date(ms).toISOString(); // canonical
      if (r < 0.8) return new Date(ms).toISOString().replace('.000Z', '+00:00');
      return new Date(ms + 7_200_000).toISOString().replace('.000Z', '+02:00'); // same instant, other zone
    };
    for (let i = 0; i < 300; i++) {
      const u = unit({ valid_time: rnd() < 0.2 ? '' : time(), transaction_time: time(), retired_at: rnd() < 0.4 ? time() : null });
      const scope = { user_id: 'alice', start_time: rnd() < 0.5 ? time() : null, end_time: rnd() < 0.5 ? time() : null, as_of: rnd() < 0.5 ? time() : null };
      const ms = (s: string | null) => (s ? Date.parse(s) : undefined);
      const expected = isVisibleAt(u, ms(scope.as_of)) && inTimeRange(u, ms(scope.start_time), ms(scope.end_time));
      expect(buildUnitFilter(scope)(u)).toBe(expected);
    }
  });

  it('rejects malformed bounds and stream scope without a stream', () => {
    expect(() => buildUnitFilter({ user_id: 'a', as_of: 'yesterday' })).toThrow(RangeError);
    expect(() => buildUnitFilter({ user_id: 'a', scope: 'stream' })).toThrow(RangeError);
  });
});
