/**
 * The best k documents of a BM25 query without reading every posting: MaxScore (Turtle and Flood,
 * 1995), term at a time. Each query term has a bound on what it can add to a document's score (its idf
 * at its highest term frequency in its shortest document). Terms are read whole, highest bound first
 * (rare words, short lists), into partial scores; as soon as the bounds of the terms left sum to less
 * than the k-th best partial score, no document they alone hold can reach the k best, so their lists
 * (the common words: thousands of postings each at 100,000 documents) are never walked. The documents
 * that can still reach the k-th score are then scored exactly, each term's frequency looked up in its
 * list.
 *
 * Same answer as scoring every posting: each term's contribution is the same expression, summed in the
 * query's term order (the floating-point value a full scoring gives), every document whose score can reach
 * the k-th is scored (ties kept: decided by id, as TopK does), and bounds are compared with a margin far
 * above rounding error (1e-9 relative). packages/store/test/indexes/max-score.test.ts compares both on
 * random indexes, queries, k and filters.
 *
 * Why: scoring and selecting the postings of common query words in a user's three text indexes was the
 * largest part of a query's CPU at 100,000 units (docs/performance.md, issue 28).
 */
import { TopK } from './topk';

/** One query term's postings (doc numbers ascending; removed documents are skipped by `ids`) and its bound. */
export interface TermPostings {
  docs: Int32Array;
  tfs: Int32Array;
  length: number;
  idf: number;
  /** ≥ what this term adds to any document's score */
  bound: number;
}

export interface Bm25Params {
  k1: number;
  b: number;
  avgdl: number;
  /** document number → its length in terms */
  lengths: Int32Array;
  /** document number → its id (undefined: removed) */
  ids: ReadonlyArray<string | undefined>;
}

/** Partial scores by document number (zero between searches) and the documents touched: the caller's, reused. */
export interface Scratch {
  scores: Float64Array;
  touched: Int32Array;
}

/** A margin on bounds, far above the rounding of a few additions (relative 1e-16 each). */
const SLACK = 1 + 1e-9;

/** What a term adds to document d's score (the expression every BM25 score here is made of). */
export function termScore(p: Bm25Params, idf: number, tf: number, d: number): number {
  return (idf * tf * (p.k1 + 1)) / (tf + p.k1 * (1 - p.b + (p.b * p.lengths[d]) / p.avgdl));
}

/** The bound of a term whose highest frequency is `maxTf` and whose shortest document has `minLength` terms. */
export function termBound(p: Pick<Bm25Params, 'k1' | 'b' | 'avgdl'>, idf: number, maxTf: number, minLength: number): number {
  return (idf * maxTf * (p.k1 + 1)) / (maxTf + p.k1 * (1 - p.b + (p.b * minLength) / p.avgdl));
}

/**
 * The k best documents (score, then id) for the terms (in the query's order), as { key: id, score },
 * best first. `scratch.scores` must be zero where it is read (it is left so).
 */
export function maxScoreTop(p: Bm25Params, terms: TermPostings[], k: number, scratch: Scratch): Array<{ key: string; score: number }> {
  const n = terms.length;
  if (n === 0 || k <= 0) return [];
  const { scores, touched } = scratch;
  const { ids } = p;
  // highest bound first; left[i]: the bounds of order[i..] summed
  const order = Array.from({ length: n }, (_, i) => i).sort((x, y) => terms[y].bound - terms[x].bound || x - y);
  const left = new Float64Array(n + 1);
  for (let i = n - 1; i >= 0; i--) left[i] = left[i + 1] + terms[order[i]].bound;
  let touchedCount = 0;
  let best = 0;
  let read = n; // the terms order[0 .. read) are read into the partial scores
  let theta = -Infinity; // a lower bound of the k-th best score, once known
  try {
    for (let r = 0; r < n; r++) {
      const { docs, tfs, length, idf } = terms[order[r]];
      for (let i = 0; i < length; i++) {
        const d = docs[i];
        if (ids[d] === undefined) continue; // removed, not yet compacted away
        if (scores[d] === 0) touched[touchedCount++] = d;
        const s = (scores[d] += termScore(p, idf, tfs[i], d));
        if (s > best) best = s;
      }
      // can the terms left bring in a document not read yet? Only checked when they might not (the
      // best partial score is above their bounds), as finding the k-th partial score costs a pass.
      if (r + 1 < n && touchedCount >= k && left[r + 1] * SLACK < best) {
        theta = kthLargest(touched, touchedCount, k, scores);
        if (left[r + 1] * SLACK < theta) {
          read = r + 1;
          break;
        }
      }
    }
    if (theta === -Infinity && touchedCount >= k) theta = kthLargest(touched, touchedCount, k, scores);
    // The documents that can still reach the k-th score, by number (the lists are read in order), each
    // scored exactly: partial scores were summed in another order and lack the terms not read.
    const rest = left[read];
    let candidates = 0;
    for (let t = 0; t < touchedCount; t++) {
      const d = touched[t];
      if ((scores[d] + rest) * SLACK * SLACK >= theta) touched[candidates++] = d;
      else scores[d] = 0;
    }
    touchedCount = candidates;
    let chosen = touched.subarray(0, candidates).sort();
    const cursor = new Int32Array(n);
    if (read < n && candidates > k) {
      // the terms not read, looked up for the candidates only: their partial scores complete, the k-th of
      // them is a closer bound, and fewer are left to score exactly
      for (let r = read; r < n; r++) {
        const i = order[r];
        const t = terms[i];
        for (const d of chosen) {
          const at = seek(t.docs, cursor[i], t.length, d);
          cursor[i] = at;
          if (at < t.length && t.docs[at] === d) scores[d] += termScore(p, t.idf, t.tfs[at], d);
        }
        cursor[i] = 0;
      }
      theta = kthLargest(touched, candidates, k, scores);
      let kept = 0;
      for (let t = 0; t < candidates; t++) {
        const d = touched[t];
        if (scores[d] * SLACK * SLACK >= theta) touched[kept++] = d;
        else scores[d] = 0;
      }
      touchedCount = kept;
      chosen = touched.subarray(0, kept).sort();
    }
    const top = new TopK<string>(k);
    for (const d of chosen) {
      let score = 0;
      for (let i = 0; i < n; i++) {
        const t = terms[i];
        const at = seek(t.docs, cursor[i], t.length, d);
        cursor[i] = at;
        if (at < t.length && t.docs[at] === d) score += termScore(p, t.idf, t.tfs[at], d);
      }
      const id = ids[d]!;
      if (top.admits(id, score)) top.push(id, score);
    }
    for (const d of chosen) scores[d] = 0;
    touchedCount = 0;
    return top.sorted();
  } finally {
    for (let t = 0; t < touchedCount; t++) scores[touched[t]] = 0; // an early exit leaves the scratch clean too
  }
}

/**
 * The k-th largest of `values` at the first `count` documents of `docs` (which it reorders):
 * quickselect, O(count).
 */
function kthLargest(docs: Int32Array, count: number, k: number, values: Float64Array): number {
  let lo = 0;
  let hi = count - 1;
  const want = k - 1; // position in descending order
  while (lo < hi) {
    const pivot = values[docs[(lo + hi) >>> 1]];
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (values[docs[i]] > pivot) i++;
      while (values[docs[j]] < pivot) j--;
      if (i <= j) {
        const x = docs[i];
        docs[i] = docs[j];
        docs[j] = x;
        i++;
        j--;
      }
    }
    if (want <= j) hi = j;
    else if (want >= i) lo = i;
    else break;
  }
  return values[docs[want]];
}

/** The first position at or after `from` whose document is ≥ d (galloping, then binary search). */
function seek(docs: Int32Array, from: number, length: number, d: number): number {
  if (from >= length || docs[from] >= d) return from;
  let step = 1;
  let lo = from;
  let hi = from + 1;
  while (hi < length && docs[hi] < d) {
    lo = hi;
    step *= 2;
    hi = from + step;
  }
  if (hi > length) hi = length;
  // docs[lo] < d, and docs[hi] ≥ d or hi = length
  while (lo + 1 < hi) {
    const mid = (lo + hi) >>> 1;
    if (docs[mid] < d) lo = mid;
    else hi = mid;
  }
  return hi;
}
