/**
 * The store simulator's split (sim/split-run.ts), a few seeds: an old and a new group of three replicas
 * with crashes, restarts and whole and torn snapshot installs, a command stream, and a split (fence,
 * chunked copy with retried chunks, commit, chunked drop) in the middle. Every invariant must hold:
 * replicas agree, states consistent, the copy is the fenced records, nothing about a moved user applied
 * by the old group after the fence, and afterwards every record in exactly one group.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runSplitSim } from '../../src/sim/split-run';

jest.setTimeout(300_000);

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'strata-split-sim-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test.each([1, 10, 51, 52])('seed %i: every invariant holds through the split', async (seed) => {
  const r = await runSplitSim({ seed, steps: 200, dir: join(dir, String(seed)) });
  expect(r.violations).toEqual([]);
  expect(r.chunks_seeded + r.drops).toBeGreaterThan(0);
});
