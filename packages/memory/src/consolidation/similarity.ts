/**
 * Similarity thresholds and their calibration against the embedder actually in use.
 *
 * Defaults (for normalized sentence-embedding models of the MiniLM/BGE family, where a light paraphrase of
 * the same fact scores about 0.9 and above, another fact on the same topic 0.45-0.8, unrelated text below
 * 0.3): `duplicate` 0.9 (a repeat must be near-verbatim, because merging two different facts loses one of
 * them, while keeping a repeat only costs a little space); `related` 0.5 (auto-links are cheap and only steer
 * graph expansion, so they may be generous). Every model has its own scale, so `calibrateThresholds`
 * measures the embedder on fixed probe pairs and places both thresholds between the observed groups.
 */
import type { Embedder } from '../providers/types';
import { cosine } from '../embedding/vector-math';
import { memoByText, stemPlural as stem, STOPWORDS } from '../text';

export interface SimilarityThresholds {
  /** At or above: the same statement said again (when the texts are compatible). */
  duplicate: number;
  /** At or above (and below duplicate, or incompatible): a RelatedTo auto-link. */
  related: number;
}

export const DEFAULT_THRESHOLDS: SimilarityThresholds = { duplicate: 0.9, related: 0.5 };

export { cosine };

/** Probe pairs: the same fact said again with trivial changes. */
export const NEAR_DUPLICATE_PAIRS: [string, string][] = [
  ['I love hiking in the mountains.', 'I really love hiking in the mountains!'],
  ['My sister lives in Boston.', 'my sister lives in boston'],
  ['We adopted a dog named Max last year.', 'We adopted a dog named Max last year!'],
  ['The meeting with the design team is on Tuesday.', 'The meeting with the design team is on Tuesday, right.'],
  ['I started learning to play the guitar.', 'I have started learning to play the guitar.'],
];
/** Probe pairs: another fact on the same topic (must not be merged, should be linked). */
export const RELATED_PAIRS: [string, string][] = [
  ['I love hiking in the mountains.', 'I went hiking in the Alps with my brother.'],
  ['My sister lives in Boston.', 'My sister works as a nurse in a hospital.'],
  ['We adopted a dog named Max last year.', 'Our dog Max loves playing fetch in the park.'],
  ['The meeting with the design team is on Tuesday.', 'The design team presented the new logo.'],
  ['I started learning to play the guitar.', 'My guitar teacher says I should practice chords daily.'],
];
/** Probe pairs: unrelated statements. */
export const UNRELATED_PAIRS: [string, string][] = [
  ['I love hiking in the mountains.', 'The quarterly tax report is due soon.'],
  ['My sister lives in Boston.', 'Preheat the oven before baking bread.'],
  ['We adopted a dog named Max last year.', 'The database migration failed twice.'],
  ['The meeting with the design team is on Tuesday.', 'Bananas are rich in potassium.'],
  ['I started learning to play the guitar.', 'The train to Lyon was delayed.'],
];

export interface Calibration extends SimilarityThresholds {
  /** Observed similarities, for the report/log: min of near-duplicates, max and mean of related, mean of unrelated. */
  observed: { nearDuplicateMin: number; relatedMax: number; relatedMean: number; unrelatedMean: number };
}

const round4 = (x: number): number => Math.round(x * 10000) / 10000;

/**
 * Places `duplicate` halfway between the weakest near-duplicate and the strongest related pair, and
 * `related` halfway between the related and unrelated means (clamped to sane ranges). If the embedder
 * cannot separate near-duplicates from related facts, `duplicate` goes just above the related pairs:
 * missing a merge is the safe failure.
 */
export async function calibrateThresholds(embedder: Embedder): Promise<Calibration> {
  const sims = async (pairs: [string, string][]): Promise<number[]> => {
    const vecs = await embedder.embed(pairs.flat());
    return pairs.map((_, i) => cosine(vecs[2 * i], vecs[2 * i + 1]));
  };
  const [dup, rel, unrel] = [await sims(NEAR_DUPLICATE_PAIRS), await sims(RELATED_PAIRS), await sims(UNRELATED_PAIRS)];
  const mean = (xs: number[]): number => xs.reduce((s, x) => s + x, 0) / xs.length;
  const nearDuplicateMin = Math.min(...dup);
  const relatedMax = Math.max(...rel);
  const duplicate = nearDuplicateMin > relatedMax
    ? Math.min(0.98, Math.max(0.75, (nearDuplicateMin + relatedMax) / 2))
    : Math.min(0.99, relatedMax + 0.02);
  const related = Math.min(duplicate - 0.05, Math.max(0.15, (mean(rel) + mean(unrel)) / 2));
  return {
    duplicate: round4(duplicate),
    related: round4(related),
    observed: { nearDuplicateMin: round4(nearDuplicateMin), relatedMax: round4(relatedMax), relatedMean: round4(mean(rel)), unrelatedMean: round4(mean(unrel)) },
  };
}

const NEGATION = /\b(?:not|no|never|n't|don't|doesn't|didn't|isn't|wasn't|aren't|won't|can't|cannot|nobody|nothing)\b/i;
const numbersOf = (s: string): string => [...s.matchAll(/\d+(?:[.,:]\d+)*/g)].map((m) => m[0]).sort().join(',');

/**
 * Whether `b` can be a repeat of `a` rather than a different or opposite fact: same numbers (a flight at 9
 * versus at 10 is a change, not a repeat) and same polarity ("I like X" versus "I don't like X").
 */
export function compatibleText(a: string, b: string): boolean {
  return numbersOf(a) === numbersOf(b) && NEGATION.test(a) === NEGATION.test(b);
}

/**
 * Content words of a statement: lowercased words and numbers, light-stemmed, stopwords left out (so
 * "I really love hiking" and "I love hiking!" have the same words). Remembered per text (text/memo.ts): a
 * statement is compared with each of its candidates, and a stored statement is a candidate of many
 * later ones; shared between callers, so read only.
 */
export const contentWords: (text: string) => ReadonlySet<string> = memoByText(contentWordsOf);

function contentWordsOf(text: string): ReadonlySet<string> {
  const out = new Set<string>();
  for (const m of text.normalize('NFKC').toLowerCase().replace(/[’‘]/g, "'").matchAll(/[\p{L}\p{N}]+(?:'[\p{L}]+)?/gu)) {
    if (STOPWORDS.has(m[0])) continue;
    out.add(stem(m[0]));
  }
  return out;
}

/** Jaccard overlap of the content words of two statements; 1 when neither has any (both are small talk). */
export function wordOverlap(a: string, b: string): number {
  const wa = contentWords(a);
  const wb = contentWords(b);
  if (wa.size === 0 && wb.size === 0) return 1;
  let common = 0;
  for (const w of wa) if (wb.has(w)) common++;
  return common / (wa.size + wb.size - common);
}

/**
 * The least word overlap of a repeat (ConsolidationOptions.minWordOverlap). Embedding similarity alone
 * cannot tell a repeat from another statement on the same topic when the embedder is weak: with the
 * offline SIF vectors, "My kids and I just finished another painting" scored 0.905 against "I'm carving
 * out some me-time each day - running, reading, or playing my violin", and 1,917 of ~3,700 LoCoMo
 * statements were merged away (their words gone from memory, only their event ids kept). The probe
 * near-duplicates above overlap 0.75-1; "Can't wait." and "Can't wait for the trip!" 0.5.
 */
export const DEFAULT_MIN_WORD_OVERLAP = 0.6;
