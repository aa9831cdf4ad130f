/**
 * Vectors as int8 codes, a scale per row, and a bound on each row's rounding error: a quarter of a
 * float32 matrix's bytes. The vector index keeps its rows so once its HNSW graph holds the same float32
 * vectors (at 100,000 × 100 dimensions, 10 MB instead of a second 40 MB copy); its exact scans then
 * score every row on the codes and only the rows that may be among the best again on the graph's floats
 * (boundedTopK), which gives the answer a float scan gives.
 *
 * Row r holds codes c and scale s with v = s·c + e, |e_j| ≤ s/2, and `errors[r]` ≥ ‖e‖₂. For a query q,
 * |v·q − s·(c·q)| = |e·q| ≤ ‖e‖₂·‖q‖₂ (Cauchy-Schwarz): the code's score is within errors[r]·‖q‖ of the
 * row's.
 */
import { TopK } from './topk';

/** Relative and absolute margin on each stored error bound: float32 storage and double sums cannot make it too small. */
const RELATIVE_MARGIN = 1e-6;
const ABSOLUTE_MARGIN = 1e-7;

export class QuantizedRows {
  codes: Int8Array;
  scales: Float32Array;
  errors: Float32Array;

  constructor(
    readonly dims: number,
    public capacity: number,
  ) {
    this.codes = new Int8Array(capacity * dims);
    this.scales = new Float32Array(capacity);
    this.errors = new Float32Array(capacity);
  }

  /** Rows [0, rows) of a float matrix (row-major, `dims` wide), with room for `capacity`. */
  static of(matrix: Float32Array, dims: number, rows: number, capacity: number): QuantizedRows {
    const q = new QuantizedRows(dims, Math.max(rows, capacity));
    for (let r = 0; r < rows; r++) q.set(r, matrix, r * dims);
    return q;
  }

  get byteLength(): number {
    return this.codes.byteLength + this.scales.byteLength + this.errors.byteLength;
  }

  /** Stores row `row` from `v[offset .. offset + dims)`. */
  set(row: number, v: ArrayLike<number>, offset = 0): void {
    const dims = this.dims;
    let max = 0;
    for (let j = 0; j < dims; j++) max = Math.max(max, Math.abs(v[offset + j]));
    const s = Math.fround(max / 127);
    const base = row * dims;
    let err2 = 0;
    for (let j = 0; j < dims; j++) {
      const x = v[offset + j];
      const c = s > 0 ? Math.max(-127, Math.min(127, Math.round(x / s))) : 0;
      this.codes[base + j] = c;
      const e = x - s * c;
      err2 += e * e;
    }
    this.scales[row] = s;
    this.errors[row] = Math.sqrt(err2) * (1 + RELATIVE_MARGIN) + ABSOLUTE_MARGIN;
  }

  /** s·(c·q) of row `row`: within errors[row]·‖q‖ of the row's dot product with q. */
  approx(row: number, q: Float32Array): number {
    const dims = this.dims;
    const c = this.codes;
    const base = row * dims;
    let dot = 0;
    for (let j = 0; j < dims; j++) dot += c[base + j] * q[j];
    return dot * this.scales[row];
  }

  /** Room for `capacity` rows, the stored ones kept. */
  grow(capacity: number): void {
    if (capacity <= this.capacity) return;
    const codes = new Int8Array(capacity * this.dims);
    codes.set(this.codes);
    const scales = new Float32Array(capacity);
    scales.set(this.scales);
    const errors = new Float32Array(capacity);
    errors.set(this.errors);
    this.codes = codes;
    this.scales = scales;
    this.errors = errors;
    this.capacity = capacity;
  }
}

/**
 * The k best of the rows `visit` offers, as a float scan scoring each with `exact` would keep them
 * (TopK's order: score, then key), scoring exactly only the rows whose code score's bound reaches the
 * k-th best lower bound. A row of the true top k has exact ≥ the k-th exact ≥ the k-th lower bound, so
 * it is never left out; the others rescored cannot displace it. `visit` calls `offer(key, row)` for each
 * candidate row; `accept(key)` is the caller's filter, asked only of rows that may still enter.
 */
export function boundedTopK<K extends string | number>(
  k: number,
  rows: QuantizedRows,
  q: Float32Array,
  visit: (offer: (key: K, row: number) => void) => void,
  exact: (row: number) => number,
  accept?: (key: K) => boolean,
): TopK<K> {
  let qNorm = 0;
  for (let j = 0; j < q.length; j++) qNorm += q[j] * q[j];
  qNorm = Math.sqrt(qNorm) * (1 + RELATIVE_MARGIN);
  const lower = new TopK<number>(k);
  const keys: K[] = [];
  const cand: number[] = [];
  const uppers: number[] = [];
  let n = 0;
  visit((key, row) => {
    const a = rows.approx(row, q);
    const slack = rows.errors[row] * qNorm;
    if (a + slack < lower.threshold()) return;
    if (accept && !accept(key)) return;
    lower.push(n++, a - slack); // keyed by arrival: only its threshold is read
    keys.push(key);
    cand.push(row);
    uppers.push(a + slack);
  });
  const floor = lower.threshold();
  const top = new TopK<K>(k);
  for (let i = 0; i < cand.length; i++) {
    if (uppers[i] < floor) continue;
    top.push(keys[i], exact(cand[i]));
  }
  return top;
}
