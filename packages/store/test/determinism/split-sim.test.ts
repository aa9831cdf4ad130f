/**
 * The store simulator's split and merge (sim/split-run.ts), a few seeds: an old and a new group of three
 * replicas with crashes, restarts and whole and torn snapshot installs, a command stream, and a split or
 * merge (fence, receive, chunked copy with retried chunks, commit, chunked drop; or an abort mid-copy) in
 * the middle. Every invariant must hold:
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

// merges (the receiving group has users of its own, numbered alike), and aborts of each kind mid-copy
test.each([
  [7, 'merge', false], [10, 'merge', false], [9, 'merge', true], [9, 'split', true],
] as const)('seed %i, a %s (aborted: %s): every invariant holds', async (seed, kind, aborted) => {
  const r = await runSplitSim({ seed, steps: 200, dir: join(dir, `${kind}-${seed}`), kind });
  expect(r.violations).toEqual([]);
  expect(r.aborted).toBe(aborted);
  expect(aborted ? r.chunks_seeded : r.drops).toBeGreaterThan(0);
});
