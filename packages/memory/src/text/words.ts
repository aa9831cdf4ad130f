/**
 * Words: memory's tokenizer for statements and instructions (lowercase word tokens, locale-free so every
 * replica gets the same output), and small helpers over words. Part of the text toolkit (text/index.ts).
 */
import { stem } from './stem';
import { FUNCTION_WORDS } from './stopwords';

/** Lowercase word tokens (letters, digits, inner apostrophes), in order. */
export function words(text: string): string[] {
  const out: string[] = [];
  const re = /[\p{L}\p{N}]+(?:['’][\p{L}]+)*/gu;
  for (const m of text.toLowerCase().matchAll(re)) out.push(m[0].replace(/’/g, '\''));
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
