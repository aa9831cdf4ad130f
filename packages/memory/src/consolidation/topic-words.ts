/**
 * A user's current statements by their topic words (updates.ts `objectStems`), for the one question
 * vectors answer badly: which earlier statement shares this one's topic? "I'm home Mondays and Wednesdays
 * now, nursery changed its pickup days" is far, as the local embedder's vectors go, from "WFH Tue/Thu from
 * now on, nursery pickup", and `updatesTopic` never saw the pair. Held beside `SimilarUnits` by the
 * worker's memory view (and the planning bench), kept current the same way: put on every change, remove
 * on deletion.
 */
import type { MemoryUnit } from '@strata/store';
import { objectStems } from './updates';

/**
 * A word more of the user's statements hold than this names no topic of its own ("work", "time" in a
 * long memory): it is skipped, so a lookup costs the same at 100 units and at 100,000.
 */
export const COMMON_WORD_UNITS = 200;

export class TopicWords {
  /** word → the held units whose words hold it */
  private readonly byWord = new Map<string, Set<MemoryUnit>>();
  /** unit id → the record held and its words */
  private readonly held = new Map<string, { unit: MemoryUnit; words: string[] }>();

  /**
   * Holds a unit's latest record: current statements (level 1) only, the only ones a topic update retires
   * (a tool's output is a record, replaced by a later state of itself: plan.ts).
   */
  put(unit: MemoryUnit): void {
    const current = unit.level === 1 && unit.retired_at === null && unit.speaker !== 'tool';
    const held = this.held.get(unit.id);
    if (held && current && held.unit.content === unit.content) {
      // The same text (a reinforcement changed its references or importance): the same words, the new record.
      for (const w of held.words) {
        const set = this.byWord.get(w)!;
        set.delete(held.unit);
        set.add(unit);
      }
      held.unit = unit;
      return;
    }
    this.remove(unit.id);
    if (!current) return;
    const words = [...objectStems(unit.content)];
    for (const w of words) {
      let set = this.byWord.get(w);
      if (!set) this.byWord.set(w, (set = new Set()));
      set.add(unit);
    }
    this.held.set(unit.id, { unit, words });
  }

  remove(unitId: string): void {
    const h = this.held.get(unitId);
    if (!h) return;
    for (const w of h.words) {
      const set = this.byWord.get(w);
      set?.delete(h.unit);
      if (set?.size === 0) this.byWord.delete(w);
    }
    this.held.delete(unitId);
  }

  /** The held units sharing at least `min` topic words with `text`, most shared first, ties by id (deterministic). */
  sharing(text: string, k: number, min = 2): MemoryUnit[] {
    if (k <= 0) return [];
    const counts = new Map<MemoryUnit, number>();
    for (const w of objectStems(text)) {
      const units = this.byWord.get(w);
      if (!units || units.size > COMMON_WORD_UNITS) continue;
      for (const u of units) counts.set(u, (counts.get(u) ?? 0) + 1);
    }
    return [...counts].filter(([, n]) => n >= min)
      .sort((a, b) => b[1] - a[1] || (a[0].id < b[0].id ? -1 : a[0].id > b[0].id ? 1 : 0))
      .slice(0, k).map(([u]) => u);
  }
}
