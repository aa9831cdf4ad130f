/**
 * Step 11: importance in [0, 1] from content signals. Specific, personal, dated facts matter more than
 * vague remarks: named entities, numbers, dates, first-person preferences and plans, facts with a
 * subject/attribute, and some length (up to a point) each add to a base.
 */

export interface ImportanceSignals {
  text: string;
  entityCount: number;
  hasDate: boolean;
  hasSubjectAttribute: boolean;
  procedural: boolean;
}

const PREFERENCE_OR_PLAN = /\b(?:I|we)\s+(?:really\s+|also\s+|just\s+)?(?:love|like|prefer|hate|dislike|enjoy|want|wanna|need|plan|planning|intend|hope|hoping|am going to|'m going to|will|'ll|'m gonna|am gonna|decided|can't stand|adore)\b|\bmy\s+(?:favou?rite|goal|plan|dream)\b|\b(?:allergic|vegetarian|vegan)\b/i;

export function scoreImportance(s: ImportanceSignals): number {
  let score = 0.2;
  score += 0.08 * Math.min(s.entityCount, 3);
  if (/\d/.test(s.text)) score += 0.1;
  if (s.hasDate) score += 0.1;
  if (PREFERENCE_OR_PLAN.test(s.text)) score += 0.15;
  if (s.hasSubjectAttribute) score += 0.1;
  if (s.procedural) score += 0.05;
  const words = s.text.split(/\s+/).filter(Boolean).length;
  score += 0.12 * Math.min(words, 24) / 24;
  return round3(Math.min(1, Math.max(0, score)));
}

/** A repeat makes a memory more important, with diminishing returns: closes 15% of the gap to 1. */
export function reinforceImportance(current: number, repeats = 1): number {
  let v = current;
  for (let i = 0; i < repeats; i++) v = 1 - (1 - v) * 0.85;
  return round3(Math.min(1, v));
}

export function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
