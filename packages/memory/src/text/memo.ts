/**
 * A pure function of a text, remembered for the texts seen lately. Consolidation reads the same
 * statements again and again: a stored unit is a candidate of every later event near it, and each
 * comparison (updates.ts `updatesTopic`) analysed both texts afresh (in a live trickle, a few hundred
 * microseconds a candidate on the leader). The answer is the function's own, so nothing planned changes;
 * it is shared between callers, so it must be a value nobody changes (the types say Readonly).
 *
 * Bounded like the stemmer's table (stem.ts): at most `maxEntries` texts of at most `maxLength`
 * characters, emptied when full; a longer text is analysed each time and not kept.
 */
export function memoByText<T>(fn: (text: string) => T, maxEntries = 4096, maxLength = 2000): (text: string) => T {
  const kept = new Map<string, T>();
  return (text: string): T => {
    if (text.length > maxLength) return fn(text);
    let value = kept.get(text);
    if (value === undefined && !kept.has(text)) {
      value = fn(text);
      if (kept.size >= maxEntries) kept.clear();
      kept.set(text, value);
    }
    return value as T;
  };
}
