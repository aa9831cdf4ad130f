import type { ParentRef } from '../../src/planning';
import { extractTextPlan, MAX_TITLE, planFromEvent } from '../../src/planning';
import { event, goal, idCounter, NOW } from './fixtures';

/** Seeded generator (LCG) so a failure is reproducible from the printed seed. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const VOCAB = ['I', 'my', 'goal', 'is', 'to', 'Goal:', 'first', 'then', 'after that', 'finally', 'after', 'once', 'before',
  'is done', '1.', '2.', '3)', '4.', 'Step 1:', 'Step 2:', '-', '*', '\n', '.', ',', ';', 'want', "I'm planning to",
  'find', 'the', 'apartment', 'address', 'register', 'bank', 'in any order', 'a', '', '   ', '!?', '(', ')', 'é', '日本'];

function reachesSelf(deps: number[][], start: number): boolean {
  const stack = [...deps[start]];
  const seen = new Set<number>();
  while (stack.length > 0) {
    const n = stack.pop() as number;
    if (n === start) return true;
    if (seen.has(n)) continue;
    seen.add(n);
    stack.push(...deps[n]);
  }
  return false;
}

describe('plan extraction invariants on random text', () => {
  it('never throws; steps have clean titles and acyclic in-range dependencies', () => {
    for (let seed = 1; seed <= 400; seed += 1) {
      const r = rng(seed);
      const text = Array.from({ length: 5 + Math.floor(r() * 60) }, () => VOCAB[Math.floor(r() * VOCAB.length)]).join(r() < 0.5 ? ' ' : '');
      const plan = extractTextPlan(text);
      if (!plan) continue;
      const deps = plan.steps.map((s) => s.depends_on);
      plan.steps.forEach((s, i) => {
        expect(s.title.length).toBeGreaterThan(0);
        expect(s.title.length).toBeLessThanOrEqual(MAX_TITLE);
        for (const d of s.depends_on) {
          expect(d).toBeGreaterThanOrEqual(0);
          expect(d).toBeLessThan(plan.steps.length);
          expect(d).not.toBe(i);
        }
        if (reachesSelf(deps, i)) throw new Error(`cycle for seed ${seed}: ${JSON.stringify(text)}`);
      });
      const out = planFromEvent(event({ content: text, level: seed % 3 === 0 ? 3 : null }), {
        newId: idCounter(), now: NOW, resolveParent: (): ParentRef => ({ kind: 'goal', goal: goal() }),
      });
      const ids = new Set(out.tasks.map((t) => t.task_id));
      for (const t of out.tasks) for (const d of t.dependencies) expect(ids.has(d)).toBe(true);
    }
  });
});
