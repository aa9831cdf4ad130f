import { StrataError } from '@strata/store';
import { HashGate } from '../src/auth/hash-gate';
import { LoginThrottle } from '../src/auth/throttle';

describe('LoginThrottle', () => {
  it('counts an attempt when it starts, so simultaneous attempts cannot pass the limit', () => {
    const now = 1_000_000;
    const t = new LoginThrottle(5, 60_000, () => now);
    const answers = Array.from({ length: 20 }, () => t.attempt('a'));
    expect(answers.filter((w) => w === 0)).toHaveLength(5);
    expect(answers.filter((w) => w > 0).every((w) => w === 60)).toBe(true);
    expect(t.attempt('b')).toBe(0); // another address is not affected
  });

  it('forgives the attempts of an address on success and takes back a cancelled one', () => {
    let now = 0;
    const t = new LoginThrottle(2, 10_000, () => now);
    t.attempt('a');
    t.cancel('a');
    t.attempt('a');
    expect(t.attempt('a')).toBe(0); // the cancelled attempt did not count
    expect(t.attempt('a')).toBeGreaterThan(0);
    t.recordSuccess('a');
    expect(t.attempt('a')).toBe(0);
    t.attempt('a');
    now = 10_001;
    expect(t.attempt('a')).toBe(0); // the window has passed
  });
});

describe('HashGate', () => {
  function deferred() {
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    return { promise, resolve };
  }

  it('runs at most `concurrency` at once, queues up to the limit in order, and refuses beyond with 503', async () => {
    const gate = new HashGate(1, 2);
    const started: number[] = [];
    const jobs = [0, 1, 2].map(() => deferred());
    const runs = jobs.map((d, i) => gate.run(async () => {
      started.push(i);
      await d.promise;
      return i;
    }));
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([0]);
    const refused = await gate.run(async () => 'never').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(StrataError);
    expect((refused as StrataError).status).toBe(503);
    expect((refused as StrataError).retryAfter).toBeGreaterThan(0);
    jobs[0].resolve();
    await runs[0];
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([0, 1]);
    jobs[1].resolve();
    jobs[2].resolve();
    expect(await Promise.all(runs)).toEqual([0, 1, 2]);
    expect(started).toEqual([0, 1, 2]);
    // all slots are free again
    expect(await gate.run(async () => 'after')).toBe('after');
  });

  it('frees the slot when the work fails', async () => {
    const gate = new HashGate(1, 0);
    await expect(gate.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await gate.run(async () => 'ok')).toBe('ok');
  });
});
