/** Runs the deterministic simulator over a bounded number of seeds (the CLI runs thousands). */
import { Simulation } from '../src/sim/simulation';

describe('deterministic simulation', () => {
  test('20 seeds of 2000 steps with faults keep every invariant and a linearizable history', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const r = new Simulation({ seed, steps: 2000 }).run();
      expect(r.ops.ok).toBeGreaterThan(0);
    }
  });

  test('the same seed gives the same run', () => {
    const a = new Simulation({ seed: 99, steps: 1500 }).run();
    const b = new Simulation({ seed: 99, steps: 1500 }).run();
    expect(a).toEqual(b);
  });

  test('without faults the group serves steadily', () => {
    const r = new Simulation({ seed: 5, steps: 1500, faults: false }).run();
    expect(r.crashes).toBe(0);
    expect(r.ops.unknown).toBeLessThan(r.ops.ok / 10);
  });
});
