/**
 * Small, deterministic text helpers shared by the planning, semantic and org modules: tokenizing,
 * a light stemmer, and stop words. Deliberately simple (no locale-dependent APIs) so that every
 * replica computing the same input gets the same output.
 */

/** Words that carry no topic in instructions and plans. */
export const STOP_WORDS: ReadonlySet<string> = new Set([
  'a', 'an', 'the', 'and', 'or', 'but', 'of', 'to', 'in', 'on', 'at', 'for', 'from', 'with', 'by', 'as',
  'is', 'am', 'are', 'was', 'were', 'be', 'been', 'being', 'do', 'does', 'did', 'have', 'has', 'had',
  'i', 'me', 'my', 'mine', 'myself', 'we', 'us', 'our', 'you', 'your', 'he', 'she', 'it', 'they', 'them',
  'his', 'her', 'its', 'their', 'this', 'that', 'these', 'those', 'there', 'here', 'what', 'which',
  'who', 'whom', 'when', 'where', 'why', 'how', 'all', 'any', 'some', 'so', 'just', 'please', 'also',
  'about', 'into', 'up', 'out', 'then', 'than', 'too', 'very', 'can', 'could', 'would', 'should', 'will',
  'shall', 'may', 'might', 'must', 'not', 'no', 'yes', 'if', 'it\'s', 'i\'m', 'im', 'i\'ve', 'ive',
]);

/** Lowercase word tokens (letters, digits, inner apostrophes), in order. */
export function words(text: string): string[] {
  const out: string[] = [];
  const re = /[\p{L}\p{N}]+(?:['’][\p{L}]+)*/gu;
  for (const m of text.toLowerCase().matchAll(re)) out.push(m[0].replace(/’/g, '\''));
  return out;
}

/**
 * A light suffix stemmer (plural and common verb endings), enough to match "addresses" with
 * "address" and "moving" with "move". Not Porter: predictable beats clever here.
 */
export function stem(word: string): string {
  let w = word.toLowerCase().replace(/['’]s$/, '');
  if (w.length <= 3) return w;
  if (w.endsWith('ies') && w.length > 4) return w.slice(0, -3) + 'y';
  if (w.endsWith('sses')) return w.slice(0, -2);
  if (w.endsWith('ss') || w.endsWith('us') || w.endsWith('is')) return w;
  if (w.endsWith('ing') && w.length > 5) {
    w = w.slice(0, -3);
    if (/([^aeiouls])\1$/.test(w)) w = w.slice(0, -1); // running -> run
    return w.endsWith('e') ? w.slice(0, -1) : w;
  }
  if (w.endsWith('ed') && w.length > 4) {
    w = w.slice(0, -2);
    if (/([^aeiouls])\1$/.test(w)) w = w.slice(0, -1);
    return w.endsWith('e') ? w.slice(0, -1) : w;
  }
  if (w.endsWith('es') && /(ch|sh|x|z)es$/.test(w)) return w.slice(0, -2);
  if (w.endsWith('s')) w = w.slice(0, -1);
  return w.endsWith('e') ? w.slice(0, -1) : w;
}

/** Stemmed content words (stop words removed), in order, duplicates kept. */
export function contentStems(text: string): string[] {
  return words(text).filter((w) => !STOP_WORDS.has(w)).map(stem).filter((w) => w.length > 0);
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

/** Cosine similarity of two vectors (the embedder returns unit vectors, but do not rely on it). */
export function cosine(a: Float32Array, b: Float32Array): number {
  const n = Math.min(a.length, b.length);
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < n; i += 1) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  if (na === 0 || nb === 0) return 0;
  return dot / Math.sqrt(na * nb);
}
