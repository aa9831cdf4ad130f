/**
 * Memory's stemmer, in two depths of one algorithm:
 * - `stemPlural`: plural and possessive endings only ("stories" → "story", "Anna's" → "anna"). Keywords
 *   are shown to people and must stay readable words ("painting" stays), so keyword extraction and the
 *   duplicate check of consolidation use this depth.
 * - `stem`: the plural depth, then verb endings and a final "e" ("moving", "moved", "move" → "mov"), so
 *   that an instruction's words meet the stored statement's whatever their form (semantic update/forget).
 * Neither is Porter: predictable beats clever here, and both are locale-free so every replica agrees.
 * The store's text index has its own tokenizer (`@strata/store` indexes/tokenizer.ts): it sits below
 * memory and its tokens are the index's keys, so it is not this one.
 */

/** Plural and possessive endings only. */
export function stemPlural(word: string): string {
  let w = word.toLowerCase().replace(/'s$/, '').replace(/s'$/, 's');
  if (w.length > 4 && w.endsWith('ies')) return `${w.slice(0, -3)}y`;
  if (w.length > 4 && /(?:ches|shes|sses|xes|zes)$/.test(w)) return w.slice(0, -2);
  if (w.length > 3 && w.endsWith('s') && !/(?:ss|us|is|ous)$/.test(w)) w = w.slice(0, -1);
  return w;
}

/** Removes -ing/-ed (undoubling "runn" → "run") and a final "e"; words of 3 letters or less stay. */
function stemVerb(word: string): string {
  let w = word;
  if (w.length <= 3 || w.endsWith('ss') || w.endsWith('us') || w.endsWith('is')) return w;
  for (const [suffix, min] of [['ing', 5], ['ed', 4]] as const) {
    if (w.endsWith(suffix) && w.length > min) {
      w = w.slice(0, -suffix.length);
      if (/([^aeiouls])\1$/.test(w)) w = w.slice(0, -1); // running -> run
      break;
    }
  }
  return w.endsWith('e') ? w.slice(0, -1) : w;
}

/**
 * The stems of the words seen lately: a word's stem is a function of the word, and the same few thousand
 * words come back in every text (the facets and own words of a query's candidates, consolidation's
 * statements): five regular expressions and three string copies each time otherwise. Emptied when full,
 * so it holds at most STEMS_MAX words of at most STEM_KEPT_LENGTH characters (~2 MiB).
 */
const STEMS = new Map<string, string>();
const STEMS_MAX = 32_768;
const STEM_KEPT_LENGTH = 12;

/** The full depth: plural endings, then verb endings ("addresses" → "address", "moving" → "mov"). */
export function stem(word: string): string {
  // a longer word may be a slice of a whole text (V8 keeps a substring of 13 characters or more as a
  // view of its parent): kept as a key, it would keep the text
  if (word.length > STEM_KEPT_LENGTH) return stemVerb(stemPlural(word.replace(/’/g, '\'')));
  let s = STEMS.get(word);
  if (s === undefined) {
    s = stemVerb(stemPlural(word.replace(/’/g, '\'')));
    if (STEMS.size >= STEMS_MAX) STEMS.clear();
    STEMS.set(word, s);
  }
  return s;
}
