import { kvModel, type KvInput } from '../src/sim/kv';
import { checkOperations, type Operation } from '../src/sim/porcupine';

type Op = Operation<KvInput, string>;
const put = (c: number, call: number, ret: number | undefined, value: string): Op => ({ clientId: c, input: { op: 'put', key: 'k', value }, call, ret });
const get = (c: number, call: number, ret: number, output: string): Op => ({ clientId: c, input: { op: 'get', key: 'k' }, call, ret, output });
const app = (c: number, call: number, ret: number | undefined, value: string): Op => ({ clientId: c, input: { op: 'append', key: 'k', value }, call, ret });

describe('linearizability checker (Wing-Gong / Porcupine)', () => {
  test('accepts a history with overlapping operations that has a linearization', () => {
    const h = [put(1, 1, 4, 'a'), get(2, 2, 3, 'a'), put(3, 5, 8, 'b'), get(1, 6, 7, ''.concat('a')), get(2, 9, 10, 'b')];
    expect(checkOperations(kvModel, h)).toEqual({ ok: true });
  });

  test('rejects a stale read after a completed write', () => {
    const h = [put(1, 1, 2, 'a'), put(1, 3, 4, 'b'), get(2, 5, 6, 'a')];
    expect(checkOperations(kvModel, h).ok).toBe(false);
  });

  test('rejects a lost append and a duplicated append', () => {
    expect(checkOperations(kvModel, [app(1, 1, 2, 'x'), app(1, 3, 4, 'y'), get(2, 5, 6, 'y')]).ok).toBe(false);
    expect(checkOperations(kvModel, [app(1, 1, 2, 'x'), get(2, 5, 6, 'xx')]).ok).toBe(false);
  });

  test('an operation with unknown outcome may or may not have happened, but only after its call', () => {
    expect(checkOperations(kvModel, [app(1, 1, undefined, 'x'), get(2, 5, 6, 'x')]).ok).toBe(true);
    expect(checkOperations(kvModel, [app(1, 1, undefined, 'x'), get(2, 5, 6, '')]).ok).toBe(true);
    expect(checkOperations(kvModel, [get(2, 1, 2, 'x'), app(1, 3, undefined, 'x')]).ok).toBe(false);
  });

  test('keys are checked independently', () => {
    const h: Op[] = [
      { clientId: 1, input: { op: 'put', key: 'a', value: '1' }, call: 1, ret: 2 },
      { clientId: 2, input: { op: 'put', key: 'b', value: '2' }, call: 3, ret: 4 },
      { clientId: 1, input: { op: 'get', key: 'a' }, call: 5, ret: 6, output: '1' },
      { clientId: 2, input: { op: 'get', key: 'b' }, call: 7, ret: 8, output: '' },
    ];
    expect(checkOperations(kvModel, h)).toMatchObject({ ok: false, partition: 1 });
  });
});
