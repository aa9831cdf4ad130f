/**
 * Importance over time (forgetting). A unit's stored importance comes from its content (consolidation,
 * importance.ts) and grows when consolidation sees it repeated or retrieval returns it; what retrieval
 * and pruning use is its *effective* importance:
 *
 *     effective = stored × 0.5^((now − anchor) / half-life),   anchor = max(transaction_time, last_retrieved_at)
 *
 * so an untouched memory halves in weight every half-life (config `memory.importance_half_life_days`,
 * default 30), and being retrieved restarts its clock (spaced repetition: what is used stays). Times in
 * the future count as now. Pure functions over plain data; callers pass the clock.
 */

const DAY_MS = 86_400_000;

/** 0.5^(ageMs / half-life); 1 for age ≤ 0, and for a non-finite or non-positive half-life (decay off). */
export function decayFactor(ageMs: number, halfLifeDays: number): number {
  if (!(halfLifeDays > 0) || !Number.isFinite(halfLifeDays)) return 1;
  if (!(ageMs > 0)) return 1;
  return Math.pow(0.5, ageMs / (halfLifeDays * DAY_MS));
}

export interface ImportanceSubject {
  importance: number;
  transaction_time: string;
  /** when retrieval last returned it (unit stats), if ever */
  last_retrieved_at?: string | null;
}

/** When the unit's importance was last renewed: stored, or returned by retrieval, whichever is later (ms; NaN if neither parses). */
export function importanceAnchorMs(unit: ImportanceSubject): number {
  const stored = Date.parse(unit.transaction_time);
  const used = unit.last_retrieved_at ? Date.parse(unit.last_retrieved_at) : NaN;
  if (Number.isNaN(used)) return stored;
  if (Number.isNaN(stored)) return used;
  return Math.max(stored, used);
}

/** Stored importance clamped to [0, 1] (a missing or broken value counts as 0). */
export function storedImportance(unit: Pick<ImportanceSubject, 'importance'>): number {
  return Number.isFinite(unit.importance) ? Math.min(1, Math.max(0, unit.importance)) : 0;
}

/** The importance retrieval ranks by and pruning judges: stored × decay since the anchor. */
export function effectiveImportance(unit: ImportanceSubject, now: number, halfLifeDays: number): number {
  return importanceAt(storedImportance(unit), importanceAnchorMs(unit), now, halfLifeDays);
}

/** `effectiveImportance` from the stored importance (clamped) and the anchor (ms), when the caller keeps the anchor. */
export function importanceAt(stored: number, anchorMs: number, now: number, halfLifeDays: number): number {
  // no usable time: no decay rather than a guess
  if (Number.isNaN(anchorMs)) return stored;
  return stored * decayFactor(now - anchorMs, halfLifeDays);
}

/**
 * The importance bump of being returned `retrievals` times: each retrieval closes `gain` of the gap to 1
 * (diminishing returns, never above 1). Returned as the amount to add, rounded to 3 decimals, so that a
 * concurrent change of the stored value (consolidation reinforcing the same unit) is added to, not lost.
 */
export function retrievalDelta(importance: number, retrievals: number, gain: number): number {
  const current = Number.isFinite(importance) ? Math.min(1, Math.max(0, importance)) : 0;
  const n = Math.max(0, Math.floor(retrievals));
  const g = Math.min(1, Math.max(0, gain));
  const next = 1 - (1 - current) * Math.pow(1 - g, n);
  return Math.max(0, Math.round((next - current) * 1000) / 1000);
}

export interface ForgettingSettings {
  /** effective importance below which a unit is forgettable */
  below: number;
  /** days since the unit was stored or last retrieved before it may be forgotten */
  minAgeDays: number;
  halfLifeDays: number;
}

export interface ForgettableUnit extends ImportanceSubject {
  level: number;
  org_id: string | null;
  retired_at: string | null;
}

/**
 * Whether pruning may consider a unit (the graph check, "no insight derives from it", is the caller's):
 * a current L1 unit, not organization knowledge (shared with the org's other users), untouched for at
 * least the minimum age, whose effective importance is below the threshold. Returns the effective
 * importance when forgettable, else null.
 */
export function forgettableImportance(unit: ForgettableUnit, now: number, s: ForgettingSettings): number | null {
  if (unit.level !== 1 || unit.retired_at !== null || unit.org_id !== null) return null;
  const anchor = importanceAnchorMs(unit);
  if (Number.isNaN(anchor) || now - anchor < s.minAgeDays * DAY_MS) return null;
  const effective = effectiveImportance(unit, now, s.halfLifeDays);
  return effective < s.below ? effective : null;
}
