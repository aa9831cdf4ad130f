/**
 * BM25 search by MaxScore (max-score.ts) against every document scored: the same documents, the same
 * scores to the last bit, in the same order, over random indexes (words of skewed frequencies, documents
 * removed and replaced), random queries, k and filters.
 */
import { TextIndex } from '../../src/indexes/text-index';
import { maxScoreTop, type Bm25Params } from '../../src/indexes/max-score';

function random(seed: number): () => number {
  return () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
}

/** What a search returns when every document is scored: the reference the pruned search must equal. */
function everyDocument(ix: TextIndex, texts: Map<string, string>, query: string, k: number, filter?: (id: string) => boolean) {
  const terms = [...new Set(ix.tokenize(query))];
  const counts = new Map<string, Map<string, number>>();
  let total = 0;
  for (const [id, text] of texts) {
    const tokens = ix.tokenize(text);
    total += tokens.length;
    const c = new Map<string, number>();
    for (const t of tokens) c.set(t, (c.get(t) ?? 0) + 1);
    c.set('\u0000length', tokens.length);
    counts.set(id, c);
  }
  const avgdl = total / texts.size || 1;
  const scored: { id: string; score: number }[] = [];
  for (const [id, c] of counts) {
    let score = 0;
    let hit = false;
    for (const t of terms) {
      const tf = c.get(t);
      if (!tf) continue;
      hit = true;
      score += (ix.idf(t) * tf * (ix.k1 + 1)) / (tf + ix.k1 * (1 - ix.b + (ix.b * c.get('\u0000length')!) / avgdl));
    }
    if (hit && (!filter || filter(id))) scored.push({ id, score });
  }
  scored.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
  return scored.slice(0, k);
}

describe('BM25 search by MaxScore', () => {
  it('answers as scoring every document, whatever the index, query, k and filter', () => {
    const rnd = random(11);
    const vocabulary = Array.from({ length: 400 }, (_, i) => `w${i}x`);
    // skewed: a few words in most documents, most words rare
    const word = () => vocabulary[Math.floor(vocabulary.length * rnd() ** 3)];
    for (let round = 0; round < 6; round++) {
      const ix = new TextIndex(round % 2 === 0 ? {} : { k1: 1.2, b: 0.75 });
      const texts = new Map<string, string>();
      const docs = 1500 + round * 500;
      for (let i = 0; i < docs; i++) {
        const text = Array.from({ length: 1 + Math.floor(rnd() * 14) }, word).join(' ');
        texts.set(`d${i}`, text);
        ix.add(`d${i}`, text);
      }
      // churn: removals (dead postings, compaction, renumbering) and replacements
      for (let i = 0; i < docs; i += 3) {
        ix.remove(`d${i}`);
        texts.delete(`d${i}`);
      }
      for (let i = 1; i < docs; i += 7) {
        const text = Array.from({ length: 1 + Math.floor(rnd() * 14) }, word).join(' ');
        texts.set(`d${i}`, text);
        ix.add(`d${i}`, text);
      }
      for (let q = 0; q < 60; q++) {
        const query = Array.from({ length: 1 + Math.floor(rnd() * 6) }, word).join(' ');
        const k = [1, 3, 10, 50, 300][q % 5];
        expect(ix.search(query, k)).toEqual(everyDocument(ix, texts, query, k));
        const mod = 2 + (q % 9);
        const filter = (id: string) => Number(id.slice(1)) % mod !== 0;
        expect(ix.search(query, k, { filter })).toEqual(everyDocument(ix, texts, query, k, filter));
        // a filter passing few: the full scoring through it
        const rare = (id: string) => Number(id.slice(1)) % 97 === 0;
        expect(ix.search(query, k, { filter: rare })).toEqual(everyDocument(ix, texts, query, k, rare));
      }
    }
  });

  it('keeps ties with the k-th score, decided by id', () => {
    const ix = new TextIndex();
    const texts = new Map<string, string>();
    // 300 documents, three texts: scores tie in groups of 100
    for (let i = 0; i < 300; i++) {
      const text = ['red apple pie', 'green apple tart', 'red cherry pie'][i % 3];
      texts.set(`d${String(299 - i).padStart(3, '0')}`, text);
      ix.add(`d${String(299 - i).padStart(3, '0')}`, text);
    }
    for (const k of [1, 50, 99, 100, 101, 250]) expect(ix.search('red pie apple', k)).toEqual(everyDocument(ix, texts, 'red pie apple', k));
  });

  it('never reads the list of a term that can no longer bring a document into the k best', () => {
    // a rare term and a term in every document: once the rare term's 5 documents are read, the common
    // term's bound cannot lift any other document to the 4th score, so its 2,000 postings are only
    // looked up for those 5
    const n = 2000;
    const lengths = new Int32Array(n).fill(3);
    const ids = Array.from({ length: n }, (_, i) => `d${i}`);
    const params: Bm25Params = { k1: 0.9, b: 0.4, avgdl: 3, lengths, ids };
    const rare = { docs: Int32Array.from([5, 10, 15, 20, 1999]), tfs: Int32Array.from([1, 1, 1, 1, 1]), length: 5, idf: 6, bound: 6 };
    const common = { docs: Int32Array.from({ length: n }, (_, i) => i), tfs: new Int32Array(n).fill(1), length: n, idf: 0.1, bound: 0.1 };
    let read = 0;
    const counting = new Proxy(ids, { get: (target, key) => (typeof key === 'string' && /^\d+$/.test(key) && read++, Reflect.get(target, key)) });
    const scratch = { scores: new Float64Array(n), touched: new Int32Array(n) };
    const top = maxScoreTop({ ...params, ids: counting }, [common, rare], 4, scratch);
    // five tie: the smallest ids; each scored with both terms, common first as in the query
    expect(top).toEqual(['d10', 'd15', 'd1999', 'd20'].map((key) => ({ key, score: 0 + (0.1 * 1 * 1.9) / (1 + 0.9 * (1 - 0.4 + (0.4 * 3) / 3)) + (6 * 1 * 1.9) / (1 + 0.9 * (1 - 0.4 + (0.4 * 3) / 3)) })));
    expect(read).toBeLessThan(50);
    expect(scratch.scores.every((x) => x === 0)).toBe(true); // left clean for the next search
  });
});
