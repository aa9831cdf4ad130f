import { boundedTopK, QuantizedRows } from '../../src/indexes/quantized-rows';
import { TopK } from '../../src/indexes/topk';

/** Seeded unit vectors in clusters of near-duplicates (scores within the codes' error of each other), and exact duplicates (ties). */
function clustered(n: number, dims: number, seed: number): Float32Array {
  let s = seed;
  const rnd = () => ((s = (s * 1103515245 + 12345) % 2147483648) / 2147483648) - 0.5;
  const m = new Float32Array(n * dims);
  const centre = new Float64Array(dims);
  for (let r = 0; r < n; r++) {
    if (r % 8 === 0) for (let j = 0; j < dims; j++) centre[j] = rnd();
    const dup = r % 8 === 7; // a copy of the row before it
    let norm = 0;
    for (let j = 0; j < dims; j++) {
      const x = dup ? m[(r - 1) * dims + j] : centre[j] + 0.01 * rnd();
      m[r * dims + j] = x;
      norm += x * x;
    }
    if (!dup) for (let j = 0; j < dims; j++) m[r * dims + j] /= Math.sqrt(norm);
  }
  return m;
}

const dotRow = (m: Float32Array, dims: number, r: number, q: Float32Array) => {
  let d = 0;
  for (let j = 0; j < dims; j++) d += m[r * dims + j] * q[j];
  return d;
};

describe('QuantizedRows', () => {
  it('scores every row within its error bound of the float dot product', () => {
    const dims = 100;
    const m = clustered(400, dims, 3);
    const rows = QuantizedRows.of(m, dims, 400, 400);
    const qs = clustered(16, dims, 9);
    let worst = -Infinity; // the largest (error - bound) seen: never above 0
    for (let i = 0; i < 16; i++) {
      const q = qs.subarray(i * dims, (i + 1) * dims);
      for (let r = 0; r < 400; r++) worst = Math.max(worst, Math.abs(rows.approx(r, q) - dotRow(m, dims, r, q)) - rows.errors[r]);
    }
    expect(worst).toBeLessThanOrEqual(0);
    expect(rows.byteLength).toBe(400 * dims + 400 * 8);
  });

  it('keeps its rows when it grows, and stores a zero row', () => {
    const rows = new QuantizedRows(3, 1);
    rows.set(0, [0.6, -0.8, 0]);
    rows.grow(4);
    rows.set(3, [0, 0, 0]);
    const q = Float32Array.from([1, 0, 0]);
    expect(rows.approx(0, q)).toBeCloseTo(0.6, 2);
    expect(rows.approx(3, q)).toBe(0);
    expect(rows.errors[3]).toBeGreaterThan(0);
  });
});

describe('boundedTopK', () => {
  const dims = 32;
  const n = 600;
  const m = clustered(n, dims, 5);
  const rows = QuantizedRows.of(m, dims, n, n);
  const queries = clustered(40, dims, 11);

  it('keeps what a float scan of every row keeps (ties by key, filters, k beyond the rows), rescoring few', () => {
    let rescored = 0;
    let codesAloneDiffer = 0;
    for (let i = 0; i < 40; i++) {
      const q = queries.subarray(i * dims, (i + 1) * dims);
      for (const k of [1, 5, 20, 700]) {
        for (const accept of [undefined, (r: number) => r % 3 !== 1]) {
          const full = new TopK<number>(k);
          const codes = new TopK<number>(k);
          for (let r = 0; r < n; r++) {
            if (accept && !accept(r)) continue;
            full.push(r, dotRow(m, dims, r, q));
            codes.push(r, rows.approx(r, q));
          }
          const got = boundedTopK<number>(k, rows, q, (offer) => { for (let r = 0; r < n; r++) offer(r, r); }, (r) => { rescored++; return dotRow(m, dims, r, q); }, accept);
          expect(got.sorted()).toEqual(full.sorted());
          if (codes.sorted().map((e) => e.key).join() !== full.sorted().map((e) => e.key).join()) codesAloneDiffer++;
        }
      }
    }
    // the data makes the codes alone rank otherwise (so the rescoring is what makes the answers equal) ...
    expect(codesAloneDiffer).toBeGreaterThan(10);
    // ... and the rescoring reads a few rows per query at small k, not all of them
    expect(rescored).toBeLessThan(40 * 2 * (n + 700) * 0.6);
  });

  it('keys by any key, in the order offered', () => {
    const q = queries.subarray(0, dims);
    const ids = ['b', 'a', 'd', 'c'];
    const got = boundedTopK<string>(2, rows, q, (offer) => ids.forEach((id, i) => offer(id, i * 8)), (r) => dotRow(m, dims, r, q));
    const full = new TopK<string>(2);
    ids.forEach((id, i) => full.push(id, dotRow(m, dims, i * 8, q)));
    expect(got.sorted()).toEqual(full.sorted());
  });
});
