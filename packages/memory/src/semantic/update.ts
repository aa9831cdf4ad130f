/**
 * What an update instruction does to stored memory (pure).
 *
 * Each current unit (not retired) is compared fact by fact with the instruction:
 * - same subject and attribute, single-valued, a different value, both affirmative -> `obsolete`
 *   (0.85; 0.6 when the stored unit names the attribute but its value could not be read);
 * - same subject, attribute and value, opposite polarity ("I no longer live in Berlin" vs "I live in
 *   Berlin", "I hate pizza" vs "I like pizza") -> `contradicts` (0.9);
 * - same subject, attribute, value and polarity -> `reaffirm` (0.9);
 * - a unit that shares content words with the instruction but none of the above -> `ignore`, listed
 *   so the reviewer sees what was considered and left alone; units sharing nothing are omitted.
 * Effects (what execute does): obsolete -> the unit is retired (superseded by the new unit) and an
 * `EvolvedTo` edge goes old -> new; contradicts -> retired the same way and a `Contradicts` edge goes
 * new -> old; reaffirm and ignore change nothing.
 * A new unit (the instruction's statement) is created unless every fact it states is reaffirmed by a
 * stored unit (nothing new to remember). Its stream is that of the first unit it replaces, else the
 * caller's default stream.
 * Actions are ordered obsolete/contradicts, reaffirm, ignore; then confidence, newest first; `limit`
 * caps them.
 */
import type { MemoryUnit } from '@strata/store';
import { extractFacts, sameValue, type Fact } from './facts';
import { unitFacts } from './forget';
import { canonicalSubject, capitalize, contentStems, FUNCTION_WORDS, squash, stem, words } from '../text';

export type UpdateActionKind = 'obsolete' | 'contradicts' | 'reaffirm' | 'ignore';

export interface UpdateAction {
  target_unit_id: string;
  action: UpdateActionKind;
  confidence: number;
  reason: string;
  effect: string;
  target_unit: MemoryUnit;
}

/** The unit execute will create (id and times are given at execution). */
export interface NewUnitDraft {
  content: string;
  keywords: string[];
  subject: string | null;
  attribute: string | null;
  stream_id: string;
  org_id: string | null;
  importance: number;
  memory_type: 'factual';
}

export interface UpdatePreviewData {
  source_content: string;
  extracted_facts: Fact[];
  actions: UpdateAction[];
  /** Null when the instruction only repeats what is stored. */
  new_unit: NewUnitDraft | null;
}

export interface UpdateInput {
  instruction: string;
  units: readonly MemoryUnit[];
  limit?: number;
  /** Stream of the new unit when it replaces nothing. */
  default_stream_id: string;
  org_id?: string | null;
}

export const EFFECTS: Record<UpdateActionKind, string> = {
  obsolete: 'retire it (superseded by the new memory) and link it to the new memory with EvolvedTo',
  contradicts: 'retire it (superseded by the new memory) and link the new memory to it with Contradicts',
  reaffirm: 'keep it unchanged: it already says this',
  ignore: 'no change',
};

/** Verbs that frame a fact; sharing only one of them ("like", "live") does not make units related. */
const FACT_VERBS = new Set(['liv', 'mov', 'work', 'lik', 'lov', 'enjoy', 'prefer', 'hat', 'dislik', 'relocat', 'resid', 'stay', 'bas', 'call', 'now', 'longer']);

const RANK: Record<UpdateActionKind, number> = { obsolete: 0, contradicts: 0, reaffirm: 1, ignore: 2 };

/** The statement to remember, without the directive around it ("Please remember that …"). */
export function sourceContent(instruction: string): string {
  const s = squash(instruction.replace(/[’‘]/g, '\''))
    .replace(/^(?:please\s+)?(?:(?:do not|don't|never)\s+forget|update(?:\s+(?:my\s+)?memory)?|remember|note|correction|fyi)\b\s*(?:that\s+|:\s*|,\s*)?/i, '')
    .replace(/^(?:actually|so|well)\s*,?\s+/i, '');
  return capitalize(s);
}

function keywordsOf(text: string): string[] {
  const out: string[] = [];
  for (const w of words(text)) {
    if (FUNCTION_WORDS.has(w) || w.length < 3 || out.includes(w)) continue;
    out.push(w);
    if (out.length === 8) break;
  }
  return out;
}

interface Judgement {
  action: Exclude<UpdateActionKind, 'ignore'>;
  confidence: number;
  reason: string;
  fact: Fact;
}

function judge(source: Fact, stored: Fact, storedContent: string): Judgement | null {
  if (canonicalSubject(source.subject) !== canonicalSubject(stored.subject) || source.attribute !== stored.attribute) return null;
  const who = source.subject === 'user' ? 'your' : `${source.subject}'s`;
  if (stored.value === '') {
    // The unit is tagged with the attribute but its value could not be read: look for the new value in it.
    const has = contentStems(source.value).every((s) => new Set(contentStems(storedContent)).has(s));
    if (has) return { action: 'reaffirm', confidence: 0.7, reason: `already mentions ${source.value} for ${who} ${source.attribute}`, fact: source };
    if (source.single_valued && source.polarity === 'positive') {
      return { action: 'obsolete', confidence: 0.6, reason: `states another ${source.attribute} than the new "${source.value}"`, fact: source };
    }
    return null;
  }
  if (sameValue(stored.value, source.value)) {
    if (stored.polarity === source.polarity) return { action: 'reaffirm', confidence: 0.9, reason: `already says ${who} ${source.attribute} is "${stored.value}"`, fact: source };
    return { action: 'contradicts', confidence: 0.9, reason: `"${source.text}" negates "${stored.text}"`, fact: source };
  }
  if (source.single_valued && source.polarity === 'positive' && stored.polarity === 'positive') {
    return { action: 'obsolete', confidence: 0.85, reason: `new value for ${who} ${source.attribute}: "${stored.value}" -> "${source.value}"`, fact: source };
  }
  return null;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The update preview: facts of the instruction, the action on each related unit, the unit to create. */
export function planUpdate(input: UpdateInput): UpdatePreviewData {
  const source = sourceContent(input.instruction);
  const facts = extractFacts(source);
  const sourceStems = new Set(contentStems(source));
  const reaffirmed = new Set<Fact>();
  const actions: UpdateAction[] = [];

  for (const unit of input.units) {
    if (unit.retired_at !== null) continue;
    let best: Judgement | null = null;
    for (const sf of facts) {
      for (const uf of unitFacts(unit)) {
        const j = judge(sf, uf, unit.content);
        if (j && (!best || RANK[j.action] < RANK[best.action] || (RANK[j.action] === RANK[best.action] && j.confidence > best.confidence))) best = j;
      }
    }
    if (best) {
      if (best.action === 'reaffirm') reaffirmed.add(best.fact);
      actions.push({ target_unit_id: unit.id, action: best.action, confidence: best.confidence, reason: best.reason, effect: EFFECTS[best.action], target_unit: unit });
      continue;
    }
    const shared: string[] = [];
    for (const w of words(unit.content)) {
      const s = stem(w);
      if (!FUNCTION_WORDS.has(w) && sourceStems.has(s) && !FACT_VERBS.has(s) && !shared.includes(w)) shared.push(w);
    }
    if (shared.length > 0) {
      const share = shared.length / Math.max(1, sourceStems.size);
      actions.push({
        target_unit_id: unit.id, action: 'ignore', confidence: Math.round((1 - share / 2) * 100) / 100,
        reason: `shares words (${shared.join(', ')}) but states a different fact`, effect: EFFECTS.ignore, target_unit: unit,
      });
    }
  }
  actions.sort((a, b) => RANK[a.action] - RANK[b.action] || b.confidence - a.confidence ||
    cmp(b.target_unit.transaction_time, a.target_unit.transaction_time) || cmp(a.target_unit_id, b.target_unit_id));
  const listed = actions.slice(0, Math.max(0, input.limit ?? 10));

  const replaced = listed.filter((a) => a.action === 'obsolete' || a.action === 'contradicts');
  const allReaffirmed = facts.length > 0 && replaced.length === 0 && facts.every((f) => reaffirmed.has(f)) &&
    listed.some((a) => a.action === 'reaffirm');
  const first = facts[0];
  const newUnit: NewUnitDraft | null = allReaffirmed || source === '' ? null : {
    content: source,
    keywords: keywordsOf(source),
    subject: first ? first.subject : null,
    attribute: first ? first.attribute : null,
    stream_id: replaced[0]?.target_unit.stream_id ?? input.default_stream_id,
    org_id: input.org_id ?? replaced[0]?.target_unit.org_id ?? null,
    importance: Math.max(0.5, ...replaced.map((a) => a.target_unit.importance)),
    memory_type: 'factual',
  };
  return { source_content: source, extracted_facts: facts, actions: listed, new_unit: newUnit };
}
