/** Runs the deterministic simulator over a bounded number of seeds (the CLI runs thousands). */
import { FAULT_PROFILES, Simulation, mixedOptions } from '../src/sim/simulation';

describe('deterministic simulation', () => {
  test('20 seeds of 2000 steps with faults keep every invariant and a linearizable history', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const r = new Simulation({ seed, steps: 2000 }).run();
      expect(r.ops.ok).toBeGreaterThan(0);
    }
  });

  test('every fault profile with 3, 5 and 7 voters keeps every invariant', () => {
    for (const profile of FAULT_PROFILES) {
      for (const voters of [3, 5, 7]) {
        const r = new Simulation({ seed: 1000 + voters, steps: 2000, profile, voters }).run();
        expect(r.ops.ok).toBeGreaterThan(0);
      }
    }
  });

  test('a mixed hunt derives profile and voters from the seed alone', () => {
    expect(mixedOptions(42, 3000)).toEqual(mixedOptions(42, 3000));
    const seen = new Set<string>();
    for (let seed = 1; seed <= 200; seed++) {
      const o = mixedOptions(seed, 3000);
      seen.add(`${o.profile}/${o.voters}`);
    }
    expect(seen.size).toBe(FAULT_PROFILES.length * 3);
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
