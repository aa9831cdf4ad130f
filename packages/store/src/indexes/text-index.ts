/**
 * A BM25 (Okapi) inverted index over short texts, one per user (a derived index: rebuilt from the
 * records in LevelDB whenever it is stale, never the source of truth).
 *
 * score(d, q) = Σ_{t ∈ q} idf(t) · tf(t,d)·(k1+1) / (tf(t,d) + k1·(1 − b + b·|d|/avgdl))
 * idf(t)      = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))          (always > 0)
 *
 * Query terms count once each (a repeated query word is not more evidence).
 */
import { maxScoreTop, termBound, termScore, type Bm25Params, type Scratch, type TermPostings } from './max-score';
import { SIZE, stringBytes, typedArrayBytes } from './sizes';
import { TopK } from './topk';
import { tokenize, type TokenizerOptions } from './tokenizer';

export interface TextIndexOptions {
  /** Term-frequency saturation (default 0.9, as Anserini; 1.2 scored 0.618 vs 0.649 recall@10 on LoCoMo dev). */
  k1?: number;
  /** Length normalization, 0 = none, 1 = full (default 0.4: short chat turns need little). */
  b?: number;
  tokenizer?: TokenizerOptions;
}

export interface TextHit {
  id: string;
  /** Raw BM25 score (unbounded, > 0): comparable within one query only. */
  score: number;
}

export interface TextSearchOptions {
  /** Keep only ids for which this returns true (time, as_of, visibility filters). */
  filter?: (id: string) => boolean;
}

/** A term's postings: parallel growable arrays of doc numbers and term frequencies. */
interface Posting {
  docs: Int32Array;
  tfs: Int32Array;
  /** entries used in the arrays (dead ones included until compaction) */
  length: number;
  /** live documents containing the term (= df) */
  live: number;
  /** the term (its key in the postings map) */
  term: string;
  /** the term's number (`postingOf`), which the documents' term lists hold; reused once the term is gone */
  no: number;
  /**
   * The highest term frequency and the shortest document among the postings ever added (not lowered
   * or raised by removals: still bounds), for the term's score bound (max-score.ts).
   */
  maxTf: number;
  minLength: number;
}

/**
 * Layout, for speed at 100,000 documents: documents get integer numbers (never reused until a
 * compaction renumbers them), postings are typed arrays, scores accumulate in a reusable Float64Array.
 * Removal marks the number dead and leaves its postings in place; a posting list is compacted when half
 * of it is dead, and the whole index is renumbered when half the numbers are.
 */
export class TextIndex {
  readonly k1: number;
  readonly b: number;
  private readonly tokenizerOptions: TokenizerOptions;
  private docNo = new Map<string, number>();
  private ids: Array<string | undefined> = [];
  private lengths = new Int32Array(64);
  /**
   * Each document's distinct terms (to update their postings on removal), as term numbers in one
   * pool: document n's are `termPool[termStart[n] .. termStart[n] + termCount[n])`. A JS array of
   * postings per document was ~24 MiB per index at 100,000 documents (an array object and its
   * elements each); numbers in a pool are ~5 MiB. A removed document's run stays in the pool until
   * the next renumbering rewrites it (half the numbers dead at most, so the pool is at most twice
   * the live runs).
   */
  private termPool = new Int32Array(64);
  private poolUsed = 0;
  private termStart = new Int32Array(64);
  private termCount = new Int32Array(64);
  /** term number → its posting (undefined once the term has no live document) */
  private postingOf: Array<Posting | undefined> = [];
  /** term numbers free for reuse */
  private freeTermNos: number[] = [];
  private postings = new Map<string, Posting>();
  /**
   * `estimatedBytes`' walk of the vocabulary, kept until a document is added or removed (-1: to walk): the
   * cache measures a user's indexes after every refresh, and a reinforcement's refresh replaces records only
   * (2.5% of the main thread under a query storm at 20 users × 1,000 events).
   */
  private postingBytes = -1;
  private totalLength = 0;
  private scratch = new Float64Array(64);
  /** doc numbers touched by the current search (reused: no per-query garbage on large indexes) */
  private touchedScratch = new Int32Array(64);

  constructor(options: TextIndexOptions = {}) {
    this.k1 = options.k1 ?? 0.9;
    this.b = options.b ?? 0.4;
    if (!(this.k1 >= 0) || !(this.b >= 0 && this.b <= 1)) throw new RangeError('BM25 needs k1 ≥ 0 and b in [0, 1]');
    this.tokenizerOptions = options.tokenizer ?? {};
  }

  get size(): number {
    return this.docNo.size;
  }

  has(id: string): boolean {
    return this.docNo.has(id);
  }

  tokenize(text: string): string[] {
    return tokenize(text, this.tokenizerOptions);
  }

  /** Index a document; adding an id again replaces its text. */
  add(id: string, text: string): void {
    this.postingBytes = -1;
    if (this.docNo.has(id)) this.remove(id);
    const tokens = this.tokenize(text);
    const counts = new Map<string, number>();
    for (const t of tokens) counts.set(t, (counts.get(t) ?? 0) + 1);
    const n = this.ids.length;
    if (n >= this.lengths.length) {
      const size = this.lengths.length * 2;
      this.lengths = grown(this.lengths, size);
      this.termStart = grown(this.termStart, size);
      this.termCount = grown(this.termCount, size);
    }
    if (this.poolUsed + counts.size > this.termPool.length) this.termPool = grown(this.termPool, Math.max(this.termPool.length * 2, this.poolUsed + counts.size));
    this.ids.push(id);
    this.termStart[n] = this.poolUsed;
    this.termCount[n] = counts.size;
    this.lengths[n] = tokens.length;
    this.docNo.set(id, n);
    this.totalLength += tokens.length;
    for (const [t, tf] of counts) {
      let p = this.postings.get(t);
      if (!p) {
        const no = this.freeTermNos.pop() ?? this.postingOf.length;
        this.postings.set(t, (p = { docs: new Int32Array(4), tfs: new Int32Array(4), length: 0, live: 0, term: t, no, maxTf: 0, minLength: 2147483647 }));
        this.postingOf[no] = p;
      }
      this.termPool[this.poolUsed++] = p.no;
      if (p.length === p.docs.length) {
        const docs = new Int32Array(p.docs.length * 2);
        docs.set(p.docs);
        const tfs = new Int32Array(p.tfs.length * 2);
        tfs.set(p.tfs);
        p.docs = docs;
        p.tfs = tfs;
      }
      p.docs[p.length] = n;
      p.tfs[p.length] = tf;
      p.length++;
      p.live++;
      if (tf > p.maxTf) p.maxTf = tf;
      if (tokens.length < p.minLength) p.minLength = tokens.length;
    }
  }

  /** Remove a document; returns whether it was there. */
  remove(id: string): boolean {
    const n = this.docNo.get(id);
    if (n === undefined) return false;
    this.postingBytes = -1;
    this.docNo.delete(id);
    const start = this.termStart[n];
    for (let i = start; i < start + this.termCount[n]; i++) {
      const p = this.postingOf[this.termPool[i]]!;
      p.live--;
      if (p.live === 0) {
        this.postings.delete(p.term);
        this.postingOf[p.no] = undefined;
        this.freeTermNos.push(p.no);
      } else if (p.live * 2 < p.length) this.compactPosting(p);
    }
    this.totalLength -= this.lengths[n];
    this.ids[n] = undefined;
    this.termCount[n] = 0;
    if (this.docNo.size * 2 < this.ids.length && this.ids.length > 64) this.renumber();
    return true;
  }

  clear(): void {
    this.postingBytes = -1;
    this.docNo.clear();
    this.ids = [];
    this.lengths = new Int32Array(64);
    this.termPool = new Int32Array(64);
    this.poolUsed = 0;
    this.termStart = new Int32Array(64);
    this.termCount = new Int32Array(64);
    this.postingOf = [];
    this.freeTermNos = [];
    this.postings = new Map();
    this.totalLength = 0;
  }

  /**
   * Estimated bytes held (sizes.ts): the postings (typed arrays and term strings), the documents' term
   * numbers and lengths, the id maps' slots. The id strings themselves are not counted: the records they name
   * hold them and are counted by their owner. Costs a walk of the vocabulary, not of the documents.
   */
  estimatedBytes(): number {
    let n = SIZE.object * 2 + SIZE.map + SIZE.mapEntry * this.docNo.size + SIZE.array + SIZE.slot * this.ids.length;
    n += typedArrayBytes(this.lengths) + typedArrayBytes(this.scratch) + typedArrayBytes(this.touchedScratch);
    n += typedArrayBytes(this.termPool) + typedArrayBytes(this.termStart) + typedArrayBytes(this.termCount);
    n += 2 * SIZE.array + SIZE.slot * (this.postingOf.length + this.freeTermNos.length);
    if (this.postingBytes < 0) {
      let p = SIZE.map;
      for (const posting of this.postings.values()) {
        p += SIZE.mapEntry + SIZE.object + 8 * SIZE.property + typedArrayBytes(posting.docs) + typedArrayBytes(posting.tfs) + stringBytes(posting.term);
      }
      this.postingBytes = p;
    }
    return n + this.postingBytes;
  }

  /** Replace the whole content from a source (the records), e.g. after a snapshot install. */
  rebuild(source: Iterable<{ id: string; text: string }>): void {
    this.clear();
    for (const { id, text } of source) this.add(id, text);
    this.trim();
  }

  /**
   * The same as `rebuild`, for large sources: reads into a fresh index, yielding to the event loop every
   * `chunk` documents (tokenizing costs ~20-50 µs a document), then swaps the content in at once, so
   * searches meanwhile see the old content, never a half-built one.
   */
  async rebuildAsync(source: Iterable<{ id: string; text: string }> | AsyncIterable<{ id: string; text: string }>, chunk = 200): Promise<void> {
    const fresh = new TextIndex({ k1: this.k1, b: this.b, tokenizer: this.tokenizerOptions });
    let n = 0;
    for await (const { id, text } of source as AsyncIterable<{ id: string; text: string }>) {
      fresh.add(id, text);
      if (++n % chunk === 0) await new Promise((r) => setImmediate(r));
    }
    fresh.trim();
    this.docNo = fresh.docNo;
    this.ids = fresh.ids;
    this.lengths = fresh.lengths;
    this.termPool = fresh.termPool;
    this.poolUsed = fresh.poolUsed;
    this.termStart = fresh.termStart;
    this.termCount = fresh.termCount;
    this.postingOf = fresh.postingOf;
    this.freeTermNos = fresh.freeTermNos;
    this.postings = fresh.postings;
    this.postingBytes = -1;
    this.totalLength = fresh.totalLength;
  }

  /**
   * After a build: the arrays grown by doubling while it read (up to half of each unused: ~7 MiB of an
   * index of 100,000 documents) keep an eighth more than they hold, room for the updates that follow.
   */
  private trim(): void {
    this.postingBytes = -1;
    const room = (n: number) => Math.max(4, n + (n >> 3));
    if (room(this.poolUsed) < this.termPool.length) this.termPool = grown(this.termPool, room(this.poolUsed));
    for (const p of this.postings.values()) {
      if (room(p.length) >= p.docs.length) continue;
      p.docs = grown(p.docs, room(p.length));
      p.tfs = grown(p.tfs, room(p.length));
    }
  }

  /** Inverse document frequency of an (already tokenized) term. */
  idf(term: string): number {
    const n = this.docNo.size;
    const df = this.postings.get(term)?.live ?? 0;
    return Math.log(1 + (n - df + 0.5) / (df + 0.5));
  }

  /** Best `k` documents for the query, best first; documents matching no query term are never returned. */
  search(query: string, k: number, options: TextSearchOptions = {}): TextHit[] {
    if (k <= 0 || this.docNo.size === 0) return [];
    const terms = [...new Set(this.tokenize(query))];
    if (terms.length === 0) return [];
    const params: Bm25Params = { k1: this.k1, b: this.b, avgdl: this.totalLength / this.docNo.size || 1, lengths: this.lengths, ids: this.ids };
    const lists: TermPostings[] = [];
    for (const term of terms) {
      const p = this.postings.get(term);
      if (!p) continue;
      const idf = this.idf(term);
      lists.push({ docs: p.docs, tfs: p.tfs, length: p.length, idf, bound: termBound(params, idf, p.maxTf, p.minLength) });
    }
    const filter = options.filter;
    const hit = ({ key, score }: { key: string; score: number }): TextHit => ({ id: key, score });
    const scratch = this.scratchFor();
    if (!filter) return maxScoreTop(params, lists, k, scratch).map(hit);
    // The filter (a unit lookup and the visibility and time checks) is the costly part: it is asked
    // first only about the best 2k documents in order, which gives the answer whenever k of them pass
    // (any document further down ranks below all of them); else every document is scored and selected
    // through it.
    const best = maxScoreTop(params, lists, 2 * k, scratch);
    const hits: TextHit[] = [];
    for (const h of best) {
      if (!filter(h.key)) continue;
      hits.push(hit(h));
      if (hits.length === k) return hits;
    }
    if (best.length < 2 * k) return hits; // every matching document was among them
    return this.searchAll(params, lists, k, filter).map(hit);
  }

  /** Every posting of the terms scored, then the best k through the filter (what few documents pass). */
  private searchAll(params: Bm25Params, lists: TermPostings[], k: number, filter: (id: string) => boolean): Array<{ key: string; score: number }> {
    const { scores, touched } = this.scratchFor();
    let touchedCount = 0;
    const ids = this.ids;
    for (const { docs, tfs, length, idf } of lists) {
      for (let i = 0; i < length; i++) {
        const d = docs[i];
        if (ids[d] === undefined) continue; // removed, not yet compacted away
        const s = termScore(params, idf, tfs[i], d);
        if (scores[d] === 0) touched[touchedCount++] = d;
        scores[d] += s;
      }
    }
    try {
      return this.select(touched, touchedCount, k, filter);
    } finally {
      for (let t = 0; t < touchedCount; t++) scores[touched[t]] = 0; // leave the scratch clean for the next search
    }
  }

  /** Partial scores by document number (zero between searches) and the documents a search touched, sized to the index. */
  private scratchFor(): Scratch {
    if (this.scratch.length < this.ids.length) {
      const size = Math.max(this.ids.length, this.scratch.length * 2);
      this.scratch = new Float64Array(size);
      this.touchedScratch = new Int32Array(size);
    }
    return { scores: this.scratch, touched: this.touchedScratch };
  }

  /** The best k of the touched documents (by score, then id), through the filter when one is given. */
  private select(touched: Int32Array, touchedCount: number, k: number, filter?: (id: string) => boolean): Array<{ key: string; score: number }> {
    const top = new TopK<string>(k);
    const scores = this.scratch;
    const ids = this.ids;
    for (let t = 0; t < touchedCount; t++) {
      const d = touched[t];
      const s = scores[d];
      if (s < top.threshold()) continue; // cheap reject before the (possibly costly) filter
      const id = ids[d]!;
      // ties with the lowest kept score are common (short documents, few query terms): decided by id
      // before the filter, not after it
      if (!top.admits(id, s)) continue;
      if (filter && !filter(id)) continue;
      top.push(id, s);
    }
    return top.sorted();
  }

  private compactPosting(p: Posting): void {
    let w = 0;
    for (let r = 0; r < p.length; r++) {
      if (this.ids[p.docs[r]] === undefined) continue;
      p.docs[w] = p.docs[r];
      p.tfs[w] = p.tfs[r];
      w++;
    }
    p.length = w;
  }

  /** Give live documents consecutive numbers again (after many removals). */
  private renumber(): void {
    const map = new Int32Array(this.ids.length).fill(-1);
    const ids: Array<string | undefined> = [];
    const size = Math.max(64, this.docNo.size * 2);
    const lengths = new Int32Array(size);
    const termStart = new Int32Array(size);
    const termCount = new Int32Array(size);
    let live = 0;
    for (let old = 0; old < this.ids.length; old++) if (this.ids[old] !== undefined) live += this.termCount[old];
    const pool = new Int32Array(Math.max(256, live * 2));
    let used = 0;
    for (let old = 0; old < this.ids.length; old++) {
      const id = this.ids[old];
      if (id === undefined) continue;
      const n = ids.length;
      map[old] = n;
      lengths[n] = this.lengths[old];
      termStart[n] = used;
      termCount[n] = this.termCount[old];
      pool.set(this.termPool.subarray(this.termStart[old], this.termStart[old] + this.termCount[old]), used);
      used += this.termCount[old];
      ids.push(id);
      this.docNo.set(id, n);
    }
    for (const p of this.postings.values()) {
      let w = 0;
      for (let r = 0; r < p.length; r++) {
        const nd = map[p.docs[r]];
        if (nd < 0) continue;
        p.docs[w] = nd;
        p.tfs[w] = p.tfs[r];
        w++;
      }
      p.length = w;
    }
    this.ids = ids;
    this.lengths = lengths;
    this.termStart = termStart;
    this.termCount = termCount;
    this.termPool = pool;
    this.poolUsed = used;
  }
}

/** A copy of `a` in a new array of `size` elements. */
function grown(a: Int32Array, size: number): Int32Array<ArrayBuffer> {
  const b = new Int32Array(size);
  b.set(a.subarray(0, Math.min(a.length, size)));
  return b;
}
