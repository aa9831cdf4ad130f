/**
 * Which memory units and events a forget instruction means (pure; the embedder path is async only
 * because embedding is).
 *
 * A unit matches by the strongest of:
 *   1.00  it states a fact the target states ("forget that I like pizza": likes = pizza);
 *   0.95  it holds a fact about an attribute the target names, for the same subject ("my old address":
 *         every residence fact of the user: "I live at 12 Oak Street", "My address is …");
 *   0.5 + 0.4 × share  it mentions at least half of the target's content words ("everything about my
 *         ex"), all of them when the target is a statement; skipped when the target names an attribute and the unit is a fact about another one
 *         (so "my address" does not take "my email address is …");
 *   cos   with an embedder, cosine similarity of the target and the unit at or above the threshold
 *         (default 0.75).
 * Decisions:
 * - A qualifier chooses the version. "old/previous/former" takes the superseded units (and statements
 *   that call themselves old: "My old phone number is 555-0199"), and current ones
 *   (an insight, a summary) only where they quote a value of those that the current value does not
 *   have ("Forget my old address" must never strike the address the user lives at now);
 *   "current/new" takes the current ones. Each reason says "older value" or "current value". Without
 *   a qualifier every version of the attribute is listed.
 * - Units already logically forgotten are skipped in logical mode (nothing to do) and included in
 *   hard mode (hard-deleting what was hidden is a fair request).
 * - `limit` caps the units; matched events are the source events (`references`) of the listed units,
 *   plus up to `limit` other events whose text matches by rules 1-3, oldest first.
 */
import type { EventRecord, MemoryUnit } from '@strata/store';
import type { Embedder } from '../providers/types';
import { extractFacts, sameValue, type Fact } from './facts';
import { extractForgetTarget, type ForgetTarget } from './instruction';
import { cosine } from '../embedding/vector-math';
import { canonicalAttribute, canonicalSubject, contentStems, specificValues, stem } from '../text';

export type ForgetMode = 'logical' | 'hard';
export type CandidateEvent = Pick<EventRecord, 'event_id' | 'content' | 'content_type' | 'transaction_time'>;

export interface MatchedEvent {
  id: string;
  content: string;
  transaction_time: string;
}

export interface ForgetMatch {
  id: string;
  score: number;
  reason: string;
}

export interface ForgetPreviewData {
  memory_units: MemoryUnit[];
  matched_events: MatchedEvent[];
  /** Why each unit was matched, in the order of `memory_units` (an extension of the preview). */
  matches: ForgetMatch[];
}

export interface ForgetInput {
  instruction: string;
  /** The user's units, current and retired. */
  units: readonly MemoryUnit[];
  /** The user's events to search (and to find the units' source events in). */
  events?: readonly CandidateEvent[];
  forget_mode?: ForgetMode;
  limit?: number;
  embedder?: Embedder | null;
  /** A stored vector of a unit (same embedder), to avoid embedding it again. */
  vectorOf?: (unit: MemoryUnit) => Float32Array | null | undefined;
  similarity_threshold?: number;
}

export const DEFAULT_SIMILARITY_THRESHOLD = 0.75;

/** Facts of a unit: read from its content, else from its stored subject/attribute (value unknown). */
export function unitFacts(unit: Pick<MemoryUnit, 'content' | 'subject' | 'attribute'>): Fact[] {
  const read = extractFacts(unit.content);
  if (read.length > 0 || !unit.attribute) return read;
  const attribute = canonicalAttribute(unit.attribute);
  return [{ subject: canonicalSubject(unit.subject), attribute, value: '', polarity: 'positive', single_valued: attribute !== 'likes', text: unit.content }];
}

function subjectLabel(subject: string): string {
  return subject === 'user' ? 'your' : `${subject}'s`;
}

/** Score and reason of `text` (with its facts and keywords) against the target, by rules 1-3. */
function textMatch(target: ForgetTarget, text: string, facts: Fact[], keywords: readonly string[]): ForgetMatch | null {
  const subjectOk = (f: Fact): boolean => target.subject === null || canonicalSubject(f.subject) === target.subject;
  for (const tf of target.facts) {
    for (const f of facts) {
      if (canonicalSubject(f.subject) === canonicalSubject(tf.subject) && f.attribute === tf.attribute &&
          f.polarity === tf.polarity && (f.value === '' || sameValue(f.value, tf.value))) {
        return { id: '', score: 1, reason: `states "${tf.text}"` };
      }
    }
  }
  const about = facts.find((f) => target.attributes.includes(f.attribute) && subjectOk(f));
  if (about) return { id: '', score: 0.95, reason: `is about ${subjectLabel(canonicalSubject(about.subject))} ${about.attribute}` };
  if (target.attributes.length > 0 && facts.length > 0) return null;
  if (target.stems.length === 0) return null;
  const have = new Set([...contentStems(text), ...keywords.map((k) => stem(k.toLowerCase()))]);
  const hits = target.words.filter((_, i) => have.has(target.stems[i]));
  const share = hits.length / target.stems.length;
  // A target that states a fact ("that I like pizza") needs all its words, else "I like sushi" would do.
  if (hits.length === 0 || share < (target.facts.length > 0 ? 1 : 0.5)) return null;
  return { id: '', score: Math.round((0.5 + 0.4 * share) * 1000) / 1000, reason: `mentions ${hits.join(', ')}` };
}

/** The matches of the version the qualifier asks for (see the header); all of them without one. */
function versionsAsked<T extends { unit: MemoryUnit }>(scored: T[], qualifier: 'old' | 'current' | null): T[] {
  if (qualifier === 'current') return scored.filter((c) => c.unit.retired_at === null);
  if (qualifier !== 'old') return scored;
  // superseded, or saying so itself ("My old phone number is 555-0199")
  const saysOld = (u: MemoryUnit) => /\b(?:old|previous|former|ex)\b/i.test(u.content);
  const old = scored.filter((c) => c.unit.retired_at !== null || (c.unit.level === 1 && saysOld(c.unit)));
  const current = scored.filter((c) => !old.includes(c));
  const now = new Set(current.filter((c) => c.unit.level === 1).flatMap((c) => [...specificValues(c.unit.content)]));
  const oldValues = new Set(old.flatMap((c) => [...specificValues(c.unit.content)]).filter((v) => !now.has(v) && !/^(?:i|my)$/.test(v)));
  return [...old, ...current.filter((c) => c.unit.level !== 1 && [...specificValues(c.unit.content)].some((v) => oldValues.has(v)))];
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The forget preview from precomputed similarities (unit id -> cosine); pure and synchronous.
 * `planForget` computes the similarities when an embedder is given.
 */
export function matchForget(input: ForgetInput, similarities: ReadonlyMap<string, number> = new Map()): ForgetPreviewData {
  const target = extractForgetTarget(input.instruction);
  const mode = input.forget_mode ?? 'logical';
  const limit = input.limit ?? 10;
  const threshold = input.similarity_threshold ?? DEFAULT_SIMILARITY_THRESHOLD;

  const scored: { unit: MemoryUnit; match: ForgetMatch }[] = [];
  for (const unit of input.units) {
    if (mode === 'logical' && unit.retired_reason === 'forgotten') continue;
    let match = textMatch(target, unit.content, unitFacts(unit), unit.keywords);
    const sim = similarities.get(unit.id);
    if (sim !== undefined && sim >= threshold && (!match || sim > match.score)) {
      match = { id: '', score: Math.round(sim * 1000) / 1000, reason: `similar in meaning (${sim.toFixed(2)})` };
    }
    if (match) scored.push({ unit, match: { ...match, id: unit.id } });
  }

  const retiredFirst = (a: MemoryUnit, b: MemoryUnit): number => Number(a.retired_at === null) - Number(b.retired_at === null);
  scored.sort((x, y) => {
    const a = x.unit;
    const b = y.unit;
    if (target.qualifier === 'old') return retiredFirst(a, b) || cmp(a.transaction_time, b.transaction_time) || cmp(a.id, b.id);
    if (target.qualifier === 'current') return -retiredFirst(a, b) || cmp(b.transaction_time, a.transaction_time) || cmp(a.id, b.id);
    return y.match.score - x.match.score || cmp(b.transaction_time, a.transaction_time) || cmp(a.id, b.id);
  });
  const asked = versionsAsked(scored, target.qualifier);
  const chosen = asked.slice(0, Math.max(0, limit));
  // The source events of the versions not asked for stay out, even where their words match.
  const spared = new Set(scored.filter((c) => !asked.includes(c)).flatMap((c) => c.unit.references));
  if (target.qualifier !== null) {
    for (const c of chosen) {
      c.match.reason += c.unit.retired_at !== null ? '; older value (superseded)' : '; current value';
    }
  }

  const events = input.events ?? [];
  const byId = new Map(events.map((e) => [e.event_id, e]));
  const picked = new Map<string, CandidateEvent>();
  for (const c of chosen) for (const ref of c.unit.references) {
    const e = byId.get(ref);
    if (e) picked.set(e.event_id, e);
  }
  let extra = 0;
  for (const e of [...events].sort((a, b) => cmp(a.transaction_time, b.transaction_time) || cmp(a.event_id, b.event_id))) {
    if (extra >= limit) break;
    if (picked.has(e.event_id) || spared.has(e.event_id) || e.content_type !== 'text') continue;
    if (textMatch(target, e.content, extractFacts(e.content), [])) {
      picked.set(e.event_id, e);
      extra += 1;
    }
  }
  const matchedEvents = [...picked.values()]
    .sort((a, b) => cmp(a.transaction_time, b.transaction_time) || cmp(a.event_id, b.event_id))
    .map((e) => ({ id: e.event_id, content: e.content, transaction_time: e.transaction_time }));

  return { memory_units: chosen.map((c) => c.unit), matched_events: matchedEvents, matches: chosen.map((c) => c.match) };
}

/** Similarity of the target phrase to each unit, embedding only what has no stored vector. */
export async function forgetSimilarities(input: ForgetInput): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (!input.embedder) return out;
  const target = extractForgetTarget(input.instruction);
  const query = target.phrase || input.instruction;
  const missing = input.units.filter((u) => !input.vectorOf?.(u));
  const vectors = await input.embedder.embed([query, ...missing.map((u) => u.content)]);
  const [q] = vectors;
  const fresh = new Map(missing.map((u, i) => [u.id, vectors[i + 1]]));
  for (const u of input.units) {
    const v = input.vectorOf?.(u) ?? fresh.get(u.id);
    // A vector of another length was made by another embedder: no similarity, rather than a prefix's.
    if (v && v.length === q.length) out.set(u.id, cosine(q, v));
  }
  return out;
}

/** The forget preview: matching units (keywords, facts and, with an embedder, similarity) and events. */
export async function planForget(input: ForgetInput): Promise<ForgetPreviewData> {
  return matchForget(input, await forgetSimilarities(input));
}
