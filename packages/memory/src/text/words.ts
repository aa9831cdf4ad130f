/**
 * Words: memory's tokenizer for statements and instructions (lowercase word tokens, locale-free so every
 * replica gets the same output), and small helpers over words. Part of the text toolkit (text/index.ts).
 */
import { stem } from './stem';
import { FUNCTION_WORDS, STOPWORDS } from './stopwords';

const WORD = /[\p{L}\p{N}]+(?:['’][\p{L}]+)*/gu;

/** Lowercase word tokens (letters, digits, inner apostrophes), in order. */
export function words(text: string): string[] {
  // every match as a string (no match object per word), the typographic apostrophe made plain where there is one
  const out = text.toLowerCase().match(WORD) ?? [];
  for (let i = 0; i < out.length; i++) if (out[i].includes('’')) out[i] = out[i].replace(/’/g, '\'');
  return out;
}

/** Stemmed content words (stop words removed), in order, duplicates kept. */
export function contentStems(text: string): string[] {
  return words(text).filter((w) => !FUNCTION_WORDS.has(w)).map(stem).filter((w) => w.length > 0);
}

/** Fraction of `needles` found in `haystack` (both stem lists); 0 when there are no needles. */
export function overlap(needles: string[], haystack: Iterable<string>): number {
  if (needles.length === 0) return 0;
  const set = new Set(haystack);
  let hit = 0;
  for (const n of needles) if (set.has(n)) hit += 1;
  return hit / needles.length;
}

/** Collapse whitespace and trim. */
export function squash(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** Uppercase the first letter (ASCII-safe, locale-free). */
export function capitalize(text: string): string {
  return text.length === 0 ? text : text[0].toUpperCase() + text.slice(1);
}

/** Cut at a word boundary so the result has at most `max` characters (an ellipsis marks the cut). */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  return (space > max / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:.-]+$/, '') + '…';
}

/** A unit's "Name: " attribution (one or two capitalized words and a colon), the way consolidation writes it. */
const SPEAKER_PREFIX = /^[\p{Lu}][\p{L}'.-]*(?:\s[\p{Lu}][\p{L}'.-]*)?:\s+/u;

/** The statement without its speaker's "Name: " prefix. */
export function withoutSpeakerPrefix(text: string): string {
  return text.replace(SPEAKER_PREFIX, '');
}

/**
 * Capitalized words past the first ("I" and `ignore` aside): the names a statement gives of people,
 * places, things. `acronyms` counts all-capital words too ("PM", "DHL").
 */
export function capitalizedWords(text: string, ignore: ReadonlySet<string> = new Set(), acronyms = false): string[] {
  const named = acronyms ? /^\p{Lu}/u : /^\p{Lu}\p{Ll}/u;
  return text.split(/\s+/).slice(1).map((t) => t.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, ''))
    .filter((t) => named.test(t) && t !== 'I' && !ignore.has(t));
}

/**
 * The specific values a statement gives, lowercased: numbers, dates and codes ("march 31",
 * "thistle-kettle-88", "12") and names past its first word ("Oak", "Fibre"), its speaker prefix aside.
 * What tells one value of a fact from another.
 */
export function specificValues(text: string): Set<string> {
  const body = withoutSpeakerPrefix(text);
  const out = new Set<string>();
  for (const m of body.matchAll(/[\p{L}\p{N}]*\d[\p{L}\p{N}:.,/-]*/gu)) out.add(m[0].toLowerCase().replace(/[.,]+$/, ''));
  // "May" is a month when written as a name ("next May"), though "may" is a stop word
  for (const w of capitalizedWords(body)) if (/^\p{Lu}\p{Ll}+$/u.test(w) && (!STOPWORDS.has(w.toLowerCase()) || w === 'May')) out.add(w.toLowerCase());
  return out;
}
