/**
 * The LLM planner: asks a chat model for `{goal, steps: [{title, depends_on}]}` and falls back to the
 * offline extractor when the model fails or replies with something that is not such a plan. Runs on
 * the proposing node before the command is built (LLM output is non-deterministic; the plan travels
 * inside the command).
 *
 * Reply rules (anything else is "malformed" and the offline plan is used):
 * - a JSON object, possibly inside a ```json fence or surrounded by prose (the first {...} is taken);
 * - `goal`: string or null; `steps`: array (may be empty) of objects with a non-empty string `title`;
 * - `depends_on`: array of 1-based step numbers; out-of-range numbers and self references are dropped,
 *   edges closing a cycle are dropped; a step without the key depends on the previous step (plan order).
 * - An empty plan (no goal, no steps) is a valid "no plan here" answer and is returned as null.
 */
import type { ChatMessage, Llm } from '../providers/types';
import { cleanTitle, extractTextPlan, MAX_STEPS, type PlanStep, type TextPlan } from './text-plan';
import { reaches } from './text-plan';

export const PLANNER_SYSTEM_PROMPT = [
  'You extract plans from a message written by a user or an agent.',
  'Reply with one JSON object and nothing else:',
  '{"goal": string or null, "steps": [{"title": string, "depends_on": [step numbers]}]}',
  'goal: what the author wants to achieve, as a short imperative phrase ("Move to Berlin"), or null.',
  'steps: the concrete steps in order, titles short (under 10 words), imperative, no numbering.',
  'depends_on: 1-based numbers of the steps that must be done first; [] when a step can start at once.',
  'When the message holds no goal and no plan, reply {"goal": null, "steps": []}.',
].join('\n');

export function plannerMessages(text: string): ChatMessage[] {
  return [
    { role: 'system', content: PLANNER_SYSTEM_PROMPT },
    { role: 'user', content: text },
  ];
}

function firstJsonObject(reply: string): unknown {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(reply);
  const body = fenced ? fenced[1] : reply;
  const start = body.indexOf('{');
  const end = body.lastIndexOf('}');
  if (start < 0 || end <= start) return undefined;
  try {
    return JSON.parse(body.slice(start, end + 1));
  } catch {
    return undefined;
  }
}

/**
 * Parse a planner reply. `undefined` = malformed (fall back offline); `null` = a valid "no plan".
 */
export function parseLlmPlan(reply: string): TextPlan | null | undefined {
  const data = firstJsonObject(reply);
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return undefined;
  const { goal, steps } = data as { goal?: unknown; steps?: unknown };
  if (goal !== undefined && goal !== null && typeof goal !== 'string') return undefined;
  if (steps !== undefined && !Array.isArray(steps)) return undefined;
  const list = (steps ?? []) as unknown[];
  const raw: { title: string; depends_on: number[] | null }[] = [];
  for (const s of list.slice(0, MAX_STEPS)) {
    if (s === null || typeof s !== 'object' || Array.isArray(s)) return undefined;
    const { title, depends_on: dependsOn } = s as { title?: unknown; depends_on?: unknown };
    if (typeof title !== 'string' || cleanTitle(title) === '') return undefined;
    if (dependsOn !== undefined && dependsOn !== null && !Array.isArray(dependsOn)) return undefined;
    const nums = Array.isArray(dependsOn) ? dependsOn.filter((d): d is number => Number.isInteger(d)) : null;
    raw.push({ title, depends_on: nums });
  }
  const deps: number[][] = raw.map(() => []);
  raw.forEach((s, i) => {
    const wanted = s.depends_on === null ? (i > 0 ? [i] : []) : s.depends_on;
    for (const n of wanted) {
      const j = n - 1;
      if (j < 0 || j >= raw.length || j === i || deps[i].includes(j) || reaches(deps, j, i)) continue;
      deps[i].push(j);
    }
  });
  const planSteps: PlanStep[] = raw.map((s, i) => ({
    title: cleanTitle(s.title),
    description: s.title.trim(),
    depends_on: deps[i].sort((a, b) => a - b),
  }));
  const goalText = typeof goal === 'string' ? cleanTitle(goal, 200) : '';
  if (goalText === '' && planSteps.length === 0) return null;
  // The model has no notion of "weak" statements: a goal it names is taken as explicit.
  return { goal: goalText === '' ? null : goalText, goal_explicit: goalText !== '', steps: planSteps };
}

export interface LlmPlanResult {
  plan: TextPlan | null;
  source: 'llm' | 'offline';
}

/** Ask the LLM for a plan of `text`; on rejection or a malformed reply use the offline extractor. */
export async function extractTextPlanWithLlm(llm: Llm, text: string): Promise<LlmPlanResult> {
  let reply: string;
  try {
    reply = await llm.complete(plannerMessages(text), { json: true, temperature: 0, maxTokens: 800 });
  } catch {
    return { plan: extractTextPlan(text), source: 'offline' };
  }
  const plan = parseLlmPlan(reply);
  if (plan === undefined) return { plan: extractTextPlan(text), source: 'offline' };
  return { plan, source: 'llm' };
}
