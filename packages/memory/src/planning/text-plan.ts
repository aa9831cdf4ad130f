/**
 * Offline plan extraction from free text (pure, deterministic).
 *
 * Recognized, in this order of precedence for the steps:
 *   1. numbered steps: "1. …", "2) …", "Step 1: …" (inline or one per line; the numbers must run
 *      1, 2, 3, … so "12 Oak St." or a stray "5)" do not start a list; at least two steps);
 *   2. a bulleted list ("- …", "* …", "• …"; at least two items);
 *   3. ordered prose: "first …, then …, after that …, finally …" (a "first" and at least one more).
 * Goal statements: "My goal is (to) …", "Our goal is …", "Goal: …", "Objective: …" (explicit), and
 * "I want to …", "I'm planning to …", "I plan to …" (weak: `planFromEvent` only makes a goal of a
 * weak statement when steps follow, so ordinary chat does not turn into goals). A goal statement must
 * begin a sentence or a line.
 * Dependencies: step n depends on step n-1, unless the text says the steps are independent ("in any
 * order", "in parallel", "independently", "at the same time"). A step that says "after X" / "once X
 * is done" depends on the step X names instead of its predecessor; "before Y" makes step Y depend on
 * it. X and Y are matched to steps by shared content words; a clause naming no step is left in the
 * title as ordinary text. Edges that would close a cycle are dropped (explicit ones win).
 */
import { capitalize, clip, contentStems, squash } from '../text';

export interface PlanStep {
  title: string;
  /** The step's text as written (numbering removed). */
  description: string;
  /** Indices (0-based) of the steps this one waits for. */
  depends_on: number[];
}

export interface TextPlan {
  goal: string | null;
  /** True for "my goal is" / "goal:" statements; false for "I want to" / "I'm planning to" ones. */
  goal_explicit: boolean;
  steps: PlanStep[];
}

export const MAX_TITLE = 120;
export const MAX_STEPS = 50;
/** Only the head of a very long text is searched for a plan (bounds the cost on 2 MiB events). */
export const MAX_PLAN_TEXT = 50_000;

const SENTENCE_START = String.raw`(?:^|[.!?]\s+|\n\s*)(?:(?:so|and|but|now|well|ok|okay)\s*,?\s+)?`;
const EXPLICIT_GOAL = new RegExp(SENTENCE_START +
  String.raw`(?:(?:my|our)\s+(?:(?:main|big|new|next|ultimate|primary|current)\s+)?(?:goal|objective|aim)\s+(?:for\s+[^.!?\n,:]{1,40}\s+)?(?:is|was)\s*:?\s*(?:to\s+)?|(?:goal|objective)\s*:\s*)`, 'i');
const WEAK_GOAL = new RegExp(SENTENCE_START +
  String.raw`(?:i\s+(?:really\s+)?want\s+to|i(?:'m|’m|\s+am)\s+planning\s+(?:to|on)|i\s+plan\s+to)\s+`, 'i');
const GOAL_END = /[.!?]\s|[.!?]$|\n|:|[,;]?\s*(?:so\s+)?\b(?:first(?:ly)?|to begin with|to start with)\b|(?:^|\s)(?:step\s*)?1\s*[.)]\s/i;

const INDEPENDENT = /\b(?:in any order|in no particular order|in parallel|independent(?:ly)?|order doesn'?t matter|at the same time|simultaneously)\b/i;

const LEADING_NOISE = /^(?:(?:and|then|next|so|also|finally|lastly|first(?:ly)?|second(?:ly)?|third(?:ly)?|after that|afterwards?|to begin with|to start with)\b[,:]?\s*)+/i;
const LEADING_MODAL = /^(?:(?:i|we)(?:'ll|’ll|'d|’d)?\s+(?:will\s+|would\s+|need\s+to|have\s+to|must|should|want\s+to|am\s+going\s+to|are\s+going\s+to|plan\s+to|can|could|shall)?\s*|(?:i'm|i’m|we're|we’re)\s+going\s+to\s+|need\s+to\s+|have\s+to\s+|to\s+)/i;

/** A short, clean title: first sentence, no numbering, connectors or trailing punctuation. */
export function cleanTitle(raw: string, max = MAX_TITLE): string {
  let t = raw.trim().split('\n')[0].replace(/^(?:[-*•‣▪–]\s*|(?:step\s*)?\d{1,2}\s*[.):-]\s*)/i, '');
  const end = t.search(/[.!?](?:\s|$)/);
  if (end > 0) t = t.slice(0, end);
  t = squash(t);
  for (let i = 0; i < 3; i += 1) {
    const before = t;
    t = t.replace(LEADING_NOISE, '');
    const modal = t.replace(LEADING_MODAL, '');
    if (modal.length > 0) t = modal;
    if (t === before) break;
  }
  t = t.replace(/[\s.,;:!?…-]+$/, '').replace(/^["'“‘(]+|["'”’)]+$/g, '');
  return clip(capitalize(squash(t)), max);
}

/** The goal statement of the text, if any. */
export function findGoal(text: string): { goal: string; explicit: boolean; end: number } | null {
  for (const [re, explicit] of [[EXPLICIT_GOAL, true], [WEAK_GOAL, false]] as const) {
    const m = re.exec(text);
    if (!m) continue;
    const start = m.index + m[0].length;
    const rest = text.slice(start);
    const stop = rest.search(GOAL_END);
    const raw = stop >= 0 ? rest.slice(0, stop) : rest;
    const goal = cleanTitle(raw, 200);
    if (goal.length > 0) return { goal, explicit, end: start + (stop >= 0 ? stop : rest.length) };
  }
  return null;
}

interface RawStep {
  text: string;
}

function numberedSteps(text: string): RawStep[] {
  const re = /(?:^|(?<=[\s(:;,.!?]))(?:step\s*(\d{1,2})\s*[:.)-]?|(\d{1,2})\s*[.)])\s+/gi;
  const accepted: { start: number; end: number }[] = [];
  let expected = 1;
  for (const m of text.matchAll(re)) {
    const n = Number(m[1] ?? m[2]);
    if (n !== expected) continue;
    accepted.push({ start: m.index ?? 0, end: (m.index ?? 0) + m[0].length });
    expected += 1;
  }
  if (accepted.length < 2) return [];
  return accepted.map((a, i) => {
    const next = accepted[i + 1];
    let body = text.slice(a.end, next ? next.start : undefined);
    if (!next) body = body.split(/\n/)[0];
    return { text: squash(body) };
  }).filter((s) => s.text.length > 0);
}

function bulletSteps(text: string): RawStep[] {
  const lines = text.split('\n');
  let best: RawStep[] = [];
  let run: RawStep[] = [];
  for (const line of lines) {
    const m = /^\s*[-*•‣▪–]\s+(.+)$/.exec(line);
    if (m) {
      run.push({ text: squash(m[1]) });
      continue;
    }
    if (line.trim() === '' && run.length === 0) continue;
    if (run.length > best.length) best = run;
    run = [];
  }
  if (run.length > best.length) best = run;
  return best.length >= 2 ? best : [];
}

function proseSteps(text: string): RawStep[] {
  const first = /\b(?:first(?:ly)?|to begin with|to start with)\b[,:]?\s*/i.exec(text);
  if (!first) return [];
  let rest = text.slice((first.index ?? 0) + first[0].length);
  // The prose plan ends with the sentence that holds its last connector.
  const connector = /(?:[,;.]\s*|\s+)(?:and\s+)?(?:then|next|after that|afterwards?|later|finally|lastly|in the end)\b[,:]?\s*/gi;
  const cuts: { start: number; end: number }[] = [];
  for (const m of rest.matchAll(connector)) cuts.push({ start: m.index ?? 0, end: (m.index ?? 0) + m[0].length });
  if (cuts.length === 0) return [];
  const tail = rest.slice(cuts[cuts.length - 1].end);
  const tailEnd = tail.search(/[.!?](?:\s|$)|\n/);
  if (tailEnd >= 0) rest = rest.slice(0, cuts[cuts.length - 1].end + tailEnd);
  const parts: string[] = [];
  let from = 0;
  for (const c of cuts) {
    parts.push(rest.slice(from, c.start));
    from = c.end;
  }
  parts.push(rest.slice(from));
  const steps = parts.map((p) => ({ text: squash(p.replace(/^[\s,;]+|[\s,;]+$/g, '').replace(/\s+and$/i, '')) })).filter((s) => s.text.length > 0);
  return steps.length >= 2 ? steps : [];
}

interface Clause {
  kind: 'after' | 'before';
  ref: string;
  /** The step text without the clause. */
  rest: string;
}

/** "after X" / "once X is done" / "before Y", leading ("After X, do Y") or trailing ("do Y after X"). */
function dependencyClause(text: string): Clause | null {
  const done = String.raw`(?:\s+(?:is|are|has been|have been|gets|get)\s+(?:done|finished|complete|completed|ready|over|sorted|settled))?`;
  const lead = new RegExp(String.raw`^(?:only\s+)?(after|once|before)\s+(.+?)${done}\s*,\s*(.+)$`, 'i').exec(text);
  if (lead && !/^that\b/i.test(lead[2])) {
    return { kind: lead[1].toLowerCase() === 'before' ? 'before' : 'after', ref: lead[2], rest: lead[3] };
  }
  const trail = new RegExp(String.raw`^(.+?),?\s+(?:only\s+)?(after|once|before)\s+(.+?)${done}[.!?]?$`, 'i').exec(text);
  if (trail && !/^that\b/i.test(trail[3])) {
    return { kind: trail[2].toLowerCase() === 'before' ? 'before' : 'after', ref: trail[3], rest: trail[1] };
  }
  return null;
}

/** Index of the step (other than `self`) that `ref` names best, or -1. */
function matchStep(ref: string, stepStems: string[][], self: number): number {
  const refStems = contentStems(ref);
  if (refStems.length === 0) return -1;
  let best = -1;
  let bestScore = 0;
  stepStems.forEach((stems, i) => {
    if (i === self) return;
    const set = new Set(stems);
    const hits = refStems.filter((s) => set.has(s)).length;
    const score = hits / Math.max(refStems.length, set.size);
    // ties go to the nearest step before `self` (the usual reading of "after X")
    if (hits > 0 && (score > bestScore || (score === bestScore && best > self && i < self))) {
      best = i;
      bestScore = score;
    }
  });
  return best;
}

/** Whether step `to` is reachable from `from` through dependencies (adding to → from would close a loop). */
export function reaches(deps: Iterable<number>[], from: number, to: number): boolean {
  const stack = [from];
  const seen = new Set<number>();
  while (stack.length > 0) {
    const n = stack.pop() as number;
    if (n === to) return true;
    if (seen.has(n)) continue;
    seen.add(n);
    for (const d of deps[n]) stack.push(d);
  }
  return false;
}

/** Adds "a depends on b" unless it would close a cycle. */
function addEdge(deps: Set<number>[], a: number, b: number): void {
  if (a === b || reaches(deps, b, a)) return;
  deps[a].add(b);
}

/** Turn raw step texts into steps with titles and dependencies. */
export function buildSteps(raw: readonly string[], independent: boolean): PlanStep[] {
  const limited = raw.slice(0, MAX_STEPS);
  const clauses = limited.map(dependencyClause);
  const bodies = limited.map((t, i) => clauses[i]?.rest ?? t);
  const stems = bodies.map((b) => contentStems(b));
  const deps = limited.map(() => new Set<number>());
  const explicitAfter = new Set<number>();
  const titles = limited.map((t) => t);
  clauses.forEach((c, i) => {
    if (!c) return;
    const j = matchStep(c.ref, stems, i);
    if (j < 0) return; // names no step: keep the clause as ordinary text
    titles[i] = c.rest;
    if (c.kind === 'after') {
      addEdge(deps, i, j);
      explicitAfter.add(i);
    } else addEdge(deps, j, i);
  });
  if (!independent) {
    for (let i = 1; i < limited.length; i += 1) if (!explicitAfter.has(i)) addEdge(deps, i, i - 1);
  }
  // A step whose title cleans to nothing is dropped; its dependents wait for what it waited for.
  const cleaned = titles.map((t) => cleanTitle(t));
  const kept = cleaned.map((t) => t.length > 0);
  const newIndex = new Map<number, number>();
  kept.forEach((k, i) => {
    if (k) newIndex.set(i, newIndex.size);
  });
  const resolve = (i: number, seen: Set<number>): number[] => {
    if (kept[i]) return [newIndex.get(i) as number];
    if (seen.has(i)) return [];
    seen.add(i);
    return [...deps[i]].flatMap((d) => resolve(d, seen));
  };
  const steps: PlanStep[] = [];
  limited.forEach((t, i) => {
    if (!kept[i]) return;
    const on = new Set([...deps[i]].flatMap((d) => resolve(d, new Set())));
    steps.push({ title: cleaned[i], description: squash(t), depends_on: [...on].sort((a, b) => a - b) });
  });
  return steps;
}

/** Extract a goal statement and steps from text; null when neither is present. */
export function extractTextPlan(text: string): TextPlan | null {
  const normalized = text.slice(0, MAX_PLAN_TEXT).replace(/\r\n?/g, '\n');
  const goal = findGoal(normalized);
  let raw = numberedSteps(normalized).map((s) => s.text);
  if (raw.length === 0) raw = bulletSteps(normalized).map((s) => s.text);
  if (raw.length === 0) raw = proseSteps(goal ? normalized.slice(goal.end) : normalized).map((s) => s.text);
  const steps = buildSteps(raw, INDEPENDENT.test(normalized));
  if (!goal && steps.length === 0) return null;
  return { goal: goal?.goal ?? null, goal_explicit: goal?.explicit ?? false, steps };
}

/** Cheap test: could this text hold a plan (so an LLM planner is worth a call)? */
export function mayContainPlan(text: string): boolean {
  return EXPLICIT_GOAL.test(text) || WEAK_GOAL.test(text) || numberedSteps(text).length > 0 ||
    (/\bfirst\b/i.test(text) && /\b(?:then|finally|after that)\b/i.test(text));
}
