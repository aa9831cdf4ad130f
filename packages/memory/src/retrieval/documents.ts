/**
 * What a unit is searched by: its retrieval document (content, keywords, the turn it came from and the
 * turns before it) and the document's fields, each searched as a list of its own.
 */
import type { MemoryUnit, UnitStats } from '@strata/store';

/** Text of the events around a unit's source, appended to its document (not to its content). */
export interface SourceContext {
  source: string | null;
  /** the events before the source, oldest first, joined by newlines */
  previous: string | null;
}

/**
 * What the text index sees of a unit: its content and its keywords (consolidation's keywords carry the
 * entities and topics of the source turn, which a split-out statement may no longer name).
 */
export function documentText(unit: Pick<MemoryUnit, 'content' | 'keywords'>, context?: SourceContext | null): string {
  const parts = [unit.content];
  if (unit.keywords.length > 0) parts.push(unit.keywords.join(' '));
  // The source turn holds what a split-out statement lost (its topic, the names in the rest of the
  // turn); the turns before it are often the question it answers. Both only steer matching: the unit's
  // content is what is returned.
  if (context?.source && context.source !== unit.content) parts.push(context.source);
  if (context?.previous) parts.push(context.previous);
  return parts.join('\n');
}

/**
 * The fields of a unit's document, each searched as a ranked list of its own beside the whole document
 * (retrieval pipeline `fieldTextIndexes`): `own` is what the unit and its source turn say, `context` the
 * turns before it. A match in the turns before an answer (the question it replies to) and a match in
 * the answer itself are separate evidence; in one document either can drown the other. LoCoMo dev,
 * L1-evidence recall@10 0.761 → 0.779 (docs/retrieval-tuning.md).
 */
export function fieldTexts(unit: Pick<MemoryUnit, 'content' | 'keywords'>, context?: SourceContext | null): { own: string; context: string } {
  const own = [unit.content];
  if (unit.keywords.length > 0) own.push(unit.keywords.join(' '));
  if (context?.source && context.source !== unit.content) own.push(context.source);
  return { own: own.join('\n'), context: context?.previous ?? '' };
}

/** The names of the field indexes, as the retrieval weights know them. */
export const TEXT_FIELDS = ['own', 'context'] as const;
export type TextField = (typeof TEXT_FIELDS)[number];

/** A unit as the indexes hold it: the record plus when retrieval last returned it (decay of importance, fusion.ts). */
export type IndexedUnit = MemoryUnit & { last_retrieved_at?: string | null };

export function withStats(unit: MemoryUnit, stats: UnitStats | undefined): IndexedUnit {
  return stats ? { ...unit, last_retrieved_at: stats.last_retrieved_at } : unit;
}
