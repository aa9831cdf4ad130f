import { InlineHnswBuilder, WorkerHnswBuilder, type HnswBuilder, type HnswBuildInput } from '../../src/indexes/hnsw-builder';
import { VectorIndex } from '../../src/indexes/vector-index';

/** Deterministic pseudo-random unit vectors. */
function vectors(n: number, dims: number, seed = 1): Float32Array[] {
  let s = seed;
  const rnd = () => ((s = (s * 1103515245 + 12345) % 2147483648) / 2147483648) - 0.5;
  return Array.from({ length: n }, () => {
    const v = Float32Array.from({ length: dims }, rnd);
    const norm = Math.hypot(...v);
    return v.map((x) => x / norm);
  });
}

const DIMS = 16;

describe('VectorIndex, exact mode', () => {
  it('returns the nearest vectors by cosine, best first', () => {
    const idx = new VectorIndex({ dimensions: 2 });
    idx.add('east', [1, 0]);
    idx.add('north', [0, 5]); // not normalized: the index normalizes
    idx.add('northeast', [1, 1]);
    const hits = idx.search([1, 0.1], 3);
    expect(hits.map((h) => h.id)).toEqual(['east', 'northeast', 'north']);
    expect(hits[0].score).toBeCloseTo(1 / Math.hypot(1, 0.1), 5);
    expect(hits[2].score).toBeCloseTo(0.1 / Math.hypot(1, 0.1), 5);
  });

  it('agrees with brute force on random data and respects the filter', () => {
    const data = vectors(500, DIMS);
    const idx = new VectorIndex({ dimensions: DIMS });
    data.forEach((v, i) => idx.add(`u${i}`, v));
    const q = vectors(1, DIMS, 99)[0];
    const dot = (a: Float32Array) => a.reduce((s, x, j) => s + x * q[j], 0);
    const expected = data
      .map((v, i) => ({ id: `u${i}`, score: dot(v) }))
      .filter((h) => Number(h.id.slice(1)) % 7 === 0)
      .sort((a, b) => b.score - a.score)
      .slice(0, 10);
    const got = idx.search(q, 10, { filter: (id) => Number(id.slice(1)) % 7 === 0 });
    expect(got.map((h) => h.id)).toEqual(expected.map((h) => h.id));
    got.forEach((h, i) => expect(h.score).toBeCloseTo(expected[i].score, 5));
  });

  it('searchAsync scans a large graphless index in slices, turning the event loop, with the answer of search', async () => {
    const data = vectors(3000, DIMS, 5);
    const idx = new VectorIndex({ dimensions: DIMS, exactThreshold: Number.MAX_SAFE_INTEGER });
    data.forEach((v, i) => idx.add(`u${i}`, v));
    idx.add('twin', data[7]); // a tie: order by label, as search does
    const filter = (id: string) => id === 'twin' || Number(id.slice(1)) % 3 !== 0;
    for (const [qi, k] of [[99, 10], [7, 25], [123, 1]] as const) {
      const q = vectors(1, DIMS, qi)[0];
      let turns = 0;
      let ticking = true;
      const tick = () => {
        turns++;
        if (ticking) setImmediate(tick);
      };
      setImmediate(tick);
      const sliced = await idx.searchAsync(q, k, { filter }, 500);
      ticking = false;
      expect(turns).toBeGreaterThanOrEqual(5); // 3001 rows in slices of 500: the loop turned between them
      expect(sliced).toEqual(idx.search(q, k, { filter }));
    }
  });

  it('scores every row as one chain of adds in dimension order, bit for bit, whatever rows are dead and however the scan is sliced', async () => {
    // searchAmong scores one row at a time: the scan's rows, four at a time, must give the very same float64 sums
    const data = vectors(1003, 100, 13);
    const idx = new VectorIndex({ dimensions: 100, exactThreshold: Number.MAX_SAFE_INTEGER });
    data.forEach((v, i) => idx.add(`u${i}`, v));
    for (let i = 0; i < 1003; i++) if (i % 5 === 2 || (i >= 40 && i < 47) || i === 1001) idx.remove(`u${i}`);
    const ids = data.map((_v, i) => `u${i}`);
    const filter = (id: string) => Number(id.slice(1)) % 11 !== 0;
    for (const qi of [3, 77]) {
      const q = vectors(1, 100, qi)[0];
      const one = idx.searchAmong(q, 1003, ids, filter);
      expect(one.length).toBeGreaterThan(700);
      expect(idx.search(q, 1003, { filter })).toEqual(one);
      expect(idx.searchExact(q, 1003, filter)).toEqual(one);
      expect(await idx.searchAsync(q, 1003, { filter }, 7)).toEqual(one);
      expect(idx.search(q, 10)).toEqual(idx.searchAmong(q, 10, ids));
    }
  });

  it('searchAsync keeps the id a hit was scored for when its label is reused between slices', async () => {
    const data = vectors(1200, DIMS, 9);
    const idx = new VectorIndex({ dimensions: DIMS, exactThreshold: Number.MAX_SAFE_INTEGER });
    data.forEach((v, i) => idx.add(`u${i}`, v));
    const q = data[3]; // u3 is the best hit, in the first slice
    const pending = idx.searchAsync(q, 3, {}, 400);
    idx.remove('u3');
    idx.add('newcomer', data[1100]); // takes u3's label
    const hits = await pending;
    expect(hits[0]).toEqual({ id: 'u3', score: expect.closeTo(1, 5) });
    expect(hits.map((h) => h.id)).not.toContain('newcomer');
  });

  it('removes, replaces, and reuses labels', () => {
    const idx = new VectorIndex({ dimensions: 2 });
    idx.add('a', [1, 0]);
    idx.add('b', [0, 1]);
    expect(idx.remove('a')).toBe(true);
    expect(idx.remove('a')).toBe(false);
    expect(idx.search([1, 0], 5).map((h) => h.id)).toEqual(['b']);
    idx.add('c', [1, 0]); // takes a's freed slot
    idx.add('b', [-1, 0]); // replaces b's vector
    expect(idx.search([1, 0], 5).map((h) => h.id)).toEqual(['c', 'b']);
    expect(idx.size).toBe(2);
    expect(Array.from(idx.getVector('b')!)).toEqual([-1, 0]);
  });

  it('rejects vectors of the wrong size or with NaN', () => {
    const idx = new VectorIndex({ dimensions: 3 });
    expect(() => idx.add('x', [1, 0])).toThrow(RangeError);
    expect(() => idx.add('x', [1, NaN, 0])).toThrow(RangeError);
    expect(() => idx.search([1, 0], 1)).toThrow(RangeError);
    expect(idx.search([1, 0, 0], 1)).toEqual([]);
  });
});

describe('VectorIndex, HNSW mode', () => {
  const N = 1500;
  const data = vectors(N, DIMS, 3);
  const queries = vectors(20, DIMS, 77);

  async function built(builder: HnswBuilder = new InlineHnswBuilder(200)): Promise<VectorIndex> {
    const idx = new VectorIndex({ dimensions: DIMS, exactThreshold: 1000, builder });
    data.forEach((v, i) => idx.add(`u${i}`, v));
    await idx.whenIdle();
    return idx;
  }

  function recall(idx: VectorIndex, filter?: (id: string) => boolean): number {
    let found = 0;
    let total = 0;
    for (const q of queries) {
      const exact = new Set(idx.searchExact(q, 10, filter).map((h) => h.id));
      const approx = idx.search(q, 10, { filter });
      expect(approx).toHaveLength(10);
      total += exact.size;
      found += approx.filter((h) => exact.has(h.id)).length;
    }
    return found / total;
  }

  it('switches to a graph at the threshold and keeps recall high', async () => {
    const idx = await built();
    expect(idx.mode).toBe('hnsw');
    expect(recall(idx)).toBeGreaterThan(0.95);
  });

  it('builds in a worker thread', async () => {
    const idx = await built(new WorkerHnswBuilder());
    expect(idx.buildError).toBeNull();
    expect(idx.mode).toBe('hnsw');
    expect(recall(idx)).toBeGreaterThan(0.95);
  });

  it('returns k results under selective filters', async () => {
    const idx = await built();
    expect(recall(idx, (id) => Number(id.slice(1)) % 50 === 0)).toBe(1); // 30 of 1500 pass
    expect(recall(idx, (id) => Number(id.slice(1)) % 3 === 0)).toBeGreaterThan(0.9);
    // fewer matches than k: all of them
    expect(idx.search(queries[0], 10, { filter: (id) => id === 'u5' || id === 'u6' }).map((h) => h.id).sort()).toEqual(['u5', 'u6']);
  });

  it('scores a given candidate set exactly', async () => {
    const idx = await built();
    const among = new Set(['u1', 'u2', 'u3', 'u4', 'gone']);
    const hits = idx.search(queries[0], 3, { among, filter: (id) => id !== 'u2' });
    expect(hits).toEqual(idx.searchExact(queries[0], 3, (id) => among.has(id) && id !== 'u2'));
    expect(hits).toHaveLength(3);
  });

  it('goes exact under a filter that passes almost nothing', async () => {
    const idx = await built();
    const rare = (id: string) => id === 'u777' || id === 'u1234';
    expect(idx.search(queries[1], 5, { filter: rare }).map((h) => h.id).sort()).toEqual(['u1234', 'u777']);
  });

  it('hides removed ids, reuses their labels, and grows the graph when full', async () => {
    const idx = await built();
    for (let i = 0; i < 100; i++) idx.remove(`u${i}`);
    for (const q of queries) for (const h of idx.search(q, 20)) expect(Number(h.id.slice(1))).toBeGreaterThanOrEqual(100);
    const extra = vectors(3000, DIMS, 5);
    extra.forEach((v, i) => idx.add(`x${i}`, v)); // more than the initial capacity
    expect(idx.size).toBe(N - 100 + 3000);
    const hit = idx.search(extra[2999], 1)[0];
    expect(hit.id).toBe('x2999');
    expect(hit.score).toBeCloseTo(1, 4);
    expect(idx.search(data[0], 1)[0].id).not.toBe('u0');
  });

  it('answers exactly while building and catches up with writes made during the build', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const inner = new InlineHnswBuilder(500);
    const slow: HnswBuilder = { build: async (input: HnswBuildInput) => { await gate; return inner.build(input); } };
    const idx = new VectorIndex({ dimensions: DIMS, exactThreshold: 1000, builder: slow });
    data.forEach((v, i) => idx.add(`u${i}`, v));
    expect(idx.mode).toBe('building');
    expect(idx.search(data[10], 1)[0].id).toBe('u10');
    idx.remove('u10');
    idx.add('late', data[10]);
    release();
    await idx.whenIdle();
    expect(idx.mode).toBe('hnsw');
    expect(idx.search(data[10], 1)[0].id).toBe('late');
    expect(idx.search(data[10], 50).map((h) => h.id)).not.toContain('u10');
  });

  it('builds again instead of replaying a bulk load made during the build', async () => {
    let builds = 0;
    const inner = new InlineHnswBuilder(500);
    const counting: HnswBuilder = { build: (input: HnswBuildInput) => { builds++; return inner.build(input); } };
    const idx = new VectorIndex({ dimensions: DIMS, exactThreshold: 1000, maxReplay: 50, builder: counting });
    data.forEach((v, i) => idx.add(`u${i}`, v)); // 1000 trigger the build, 500 more arrive during it
    await idx.whenIdle();
    expect(builds).toBe(2);
    expect(idx.mode).toBe('hnsw');
    expect(recall(idx)).toBeGreaterThan(0.95);
    expect(idx.search(data[1400], 1)[0].id).toBe('u1400');
  });

  it('rebuild replaces the content from an async source', async () => {
    const idx = await built();
    async function* source() {
      for (let i = 0; i < 1200; i++) yield { id: `r${i}`, vector: data[i] };
    }
    await idx.rebuild(source());
    expect(idx.size).toBe(1200);
    expect(idx.has('u1')).toBe(false);
    expect(idx.search(data[7], 1)[0].id).toBe('r7'); // exact while the graph builds
    await idx.whenIdle();
    expect(idx.mode).toBe('hnsw');
    expect(idx.search(data[7], 1)[0].id).toBe('r7');
  });

  it('keeps answering exactly when a build fails', async () => {
    const failing: HnswBuilder = { build: async () => { throw new Error('no threads'); } };
    const idx = new VectorIndex({ dimensions: DIMS, exactThreshold: 100, builder: failing });
    data.slice(0, 200).forEach((v, i) => idx.add(`u${i}`, v));
    await idx.whenIdle();
    expect(idx.mode).toBe('exact');
    expect(idx.buildError?.message).toBe('no threads');
    expect(idx.search(data[3], 1)[0].id).toBe('u3');
  });

  it('once the graph is live, answers every exact scan as the float matrix does (codes rescored on the graph), through writes and growth', async () => {
    const idx = await built();
    // the same operations on an index that never builds a graph: its scans read the float matrix
    const floats = new VectorIndex({ dimensions: DIMS, exactThreshold: Number.MAX_SAFE_INTEGER });
    data.forEach((v, i) => floats.add(`u${i}`, v));
    const same = () => {
      for (const q of queries) {
        for (const k of [1, 10, 60]) {
          expect(idx.searchExact(q, k)).toEqual(floats.searchExact(q, k));
          const odd = (id: string) => id.length % 2 === 1;
          expect(idx.searchExact(q, k, odd)).toEqual(floats.searchExact(q, k, odd));
          const among = new Set(['u1', 'u9', 'u77', 'u500', 'u1499', 'x3', 'x2999', 'gone']);
          expect(idx.search(q, k, { among })).toEqual(floats.search(q, k, { among }));
          expect(idx.searchAmong(q, k, among, odd)).toEqual(floats.searchAmong(q, k, among, odd));
        }
      }
      for (const id of ['u0', 'u42', 'x7', 'nope']) expect(idx.getVector(id)).toEqual(floats.getVector(id));
    };
    same();
    // ties: the same vector under other ids
    for (const [id, v] of [['t1', data[3]], ['t2', data[3]], ['t0', [...data[3]].map((x) => x * 3)]] as const) {
      idx.add(id, v);
      floats.add(id, v);
    }
    for (let i = 0; i < 100; i++) {
      idx.remove(`u${i * 7}`);
      floats.remove(`u${i * 7}`);
    }
    const extra = vectors(1600, DIMS, 8); // beyond the capacity of both: the codes grow
    extra.forEach((v, i) => {
      idx.add(`x${i}`, v);
      floats.add(`x${i}`, v);
    });
    idx.add('u1', extra[0]); // a replaced vector
    floats.add('u1', extra[0]);
    same();
    expect(idx.searchExact(data[3], 4).map((h) => h.id).sort()).toEqual(['t0', 't1', 't2', 'u3']);
  });

  it('setEf is validated and kept', async () => {
    const idx = await built();
    expect(() => idx.setEf(0)).toThrow(RangeError);
    idx.setEf(200);
    expect(recall(idx)).toBeGreaterThan(0.97);
  });
});
