/**
 * The current L1 units of a user nearest to a vector: what consolidation's `findSimilar` answers (pure).
 * Exact cosine with memory's `dot`/`l2norm`: a unit's norm is computed once, when it is put.
 *
 * Kept current rather than rebuilt: the consolidation worker holds one per user across batches and puts
 * or removes the units each applied command changed (server/src/workers/memory-view.ts), so a batch no
 * longer reads all of the user's units and vectors.
 *
 * Pruned, still exact: a cosine is bounded above through a few fixed directions (`Directions`): for unit
 * vectors q and v and an orthonormal basis p₁…pₘ, q·v = Σ (q·pᵢ)(v·pᵢ) + q⊥·v⊥ ≤ Σ (q·pᵢ)(v·pᵢ) + |q⊥||v⊥|,
 * and the same holds for every prefix of the basis. A unit whose bound is below the k-th best similarity
 * found so far (by more than rounding could explain) cannot enter the top k and is skipped; every other
 * one is compared exactly, so the answer is the full scan's, bit for bit. The bound is tried with a
 * quarter, a half and all of the m directions in turn, most units being ruled out by the cheapest.
 *
 * Why it pays: sentence vectors share a dominant direction. With the default local embedder, LoCoMo
 * turns are all within cosine 0.5 of one another and the first direction holds ~87% of their energy,
 * so a threshold on similarity rules nothing out, while the bound in a few principal directions does.
 * Measured on the 2,126 statements of LoCoMo conv-41, each asked for its 8 nearest among those before it
 * (2.26 M comparisons for a full scan): one bound in m directions left 45% of them to compare exactly
 * at m = 8, 33% at 16, 17% at 32, 7% at 64; time in topK went from 1.50 s (full scan) to 0.71 s (16),
 * 0.44 s (32), 0.49 s (48), and to 0.31 s with the three-level cascade at m = 32 (0.29 s at 48 or 64,
 * not worth the dearer directions; starting at m/8 gained nothing). In the whole planner over the three
 * conversations (scripts/bench-consolidation-plan.ts), where each user's first 512 units are scanned
 * in full, the time in findSimilar about halves (docs/performance.md).
 */
import type { MemoryUnit } from '@strata/store';
import { dot, l2norm } from '../embedding/vector-math';
import type { SimilarUnit } from './types';

/** Ranks (similarity, id) before `than`: higher similarity first, then the smaller id. */
function better(similarity: number, id: string, than: SimilarUnit): boolean {
  return similarity > than.similarity || (similarity === than.similarity && id < than.unit.id);
}

/** Absolute slack on the bound: far above float64 rounding of m + 1 products of values ≤ 1. */
const BOUND_SLACK = 1e-9;
/** Directions of the bound (m). */
export const BOUND_DIRECTIONS = 32;
/** Below this many units a plain scan is cheap enough. */
const MIN_UNITS_FOR_BOUND = 128;
/** The directions are computed again when the units held have grown this much since (the data may have moved). */
const REGROWTH = 8;
/** vectors the directions are computed from, at most (evenly spaced over the units) */
const SAMPLE = 256;

function norm64(v: Float64Array): number {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i] * v[i];
  return Math.sqrt(s);
}

/**
 * An orthonormal set of directions (the principal directions of a sample of vectors, by power
 * iteration with deflation, orthonormalized) and the projection of a vector on them. Any orthonormal
 * set makes the bound valid; principal ones make it tight.
 */
export class Directions {
  private constructor(readonly dims: number, readonly basis: Float64Array[]) {}

  static of(sample: readonly Float32Array[], m: number): Directions | null {
    if (sample.length === 0) return null;
    const d = sample[0].length;
    const cov: Float64Array[] = Array.from({ length: d }, () => new Float64Array(d));
    const u = new Float64Array(d);
    for (const v of sample) {
      if (v.length !== d) continue;
      const n = l2norm(v);
      if (n === 0) continue;
      for (let a = 0; a < d; a++) u[a] = v[a] / n;
      for (let a = 0; a < d; a++) {
        const ua = u[a];
        const row = cov[a];
        for (let b = a; b < d; b++) row[b] += ua * u[b];
      }
    }
    for (let a = 0; a < d; a++) for (let b = 0; b < a; b++) cov[a][b] = cov[b][a];
    const basis: Float64Array[] = [];
    for (let c = 0; c < Math.min(m, d); c++) {
      // Deterministic start (every coordinate), 10 power steps: enough for a useful direction; exactness never depends on it.
      let x = new Float64Array(d).fill(1 / Math.sqrt(d));
      for (let it = 0; it < 10; it++) {
        const y = new Float64Array(d);
        for (let a = 0; a < d; a++) {
          let s = 0;
          const row = cov[a];
          for (let b = 0; b < d; b++) s += row[b] * x[b];
          y[a] = s;
        }
        const ny = norm64(y);
        if (!(ny > 0)) break;
        for (let a = 0; a < d; a++) y[a] /= ny;
        x = y;
      }
      // Orthonormal against the directions so far (twice, for rounding), or dropped when nothing is left.
      for (let pass = 0; pass < 2; pass++) {
        for (const p of basis) {
          let s = 0;
          for (let a = 0; a < d; a++) s += x[a] * p[a];
          for (let a = 0; a < d; a++) x[a] -= s * p[a];
        }
      }
      const nx = norm64(x);
      if (!(nx > 1e-6)) break;
      for (let a = 0; a < d; a++) x[a] /= nx;
      basis.push(x);
      // Deflate: cov -= λ x xᵀ with λ = xᵀ cov x.
      let lambda = 0;
      for (let a = 0; a < d; a++) {
        let s = 0;
        for (let b = 0; b < d; b++) s += cov[a][b] * x[b];
        lambda += x[a] * s;
      }
      for (let a = 0; a < d; a++) for (let b = 0; b < d; b++) cov[a][b] -= lambda * x[a] * x[b];
    }
    return basis.length === 0 ? null : new Directions(d, basis);
  }

  /** The prefixes of the basis the bound is tried at, cheapest first (a quarter, a half, all of it). */
  get levels(): number[] {
    const m = this.basis.length;
    return [...new Set([Math.ceil(m / 4), Math.ceil(m / 2), m])];
  }

  /**
   * The unit vector v/|v| projected on the basis, into `out` (m values from `at`), and its residual norm
   * |v⊥|/|v| beyond each prefix of `levels`, into `resid` (from `residAt`).
   */
  project(v: Float32Array, norm: number, out: Float64Array, at: number, resid: Float64Array, residAt: number): void {
    const levels = this.levels;
    let inside = 0;
    let level = 0;
    for (let c = 0; c < this.basis.length; c++) {
      const p = this.basis[c];
      let s = 0;
      for (let a = 0; a < p.length; a++) s += v[a] * p[a];
      s /= norm;
      out[at + c] = s;
      inside += s * s;
      // 1 - Σ is the residual's square up to rounding (~1e-15); the 1e-12 added keeps the square root an
      // upper bound even when the residual is tiny, where a square root would magnify that rounding.
      if (c + 1 === levels[level]) resid[residAt + level++] = Math.sqrt(Math.max(0, 1 - inside) + 1e-12);
    }
  }
}

/**
 * Directions shared by the sets of one embedder (a worker's users): the first set large enough computes
 * them and the others start from those instead of computing their own (any orthonormal basis keeps the
 * bound exact, and vectors of one embedder share their dominant directions). A set that has grown
 * REGROWTH-fold since its directions were made computes new ones from its own units and shares those.
 */
export class SharedDirections {
  private readonly byDims = new Map<number, Directions>();

  get(dims: number): Directions | null {
    return this.byDims.get(dims) ?? null;
  }

  offer(directions: Directions): void {
    this.byDims.set(directions.dims, directions);
  }
}

export interface SimilarUnitsOptions {
  /** how many units before the bound is used (default 128) */
  boundFrom?: number;
  /** directions computed by another set of the same embedder, reused (see SharedDirections) */
  shared?: SharedDirections;
}

interface Entry {
  unit: MemoryUnit;
  vector: Float32Array;
  norm: number;
}

export class SimilarUnits {
  private entries: Entry[] = [];
  private readonly slot = new Map<string, number>();
  /** the dimension of the vectors held (the first put fixes it); units with vectors of another are left out */
  private dims = -1;
  private directions: Directions | null = null;
  /** per slot: its projection on the directions (m values) and its residual norm beyond each level; valid while `directions` is set */
  private proj = new Float64Array(0);
  private resid = new Float64Array(0);
  private levels: number[] = [];
  /** how many units the directions were computed from */
  private directionsAt = 0;

  private readonly boundFrom: number;
  private readonly shared: SharedDirections | null;

  constructor(readonly embedderId: string, options: SimilarUnitsOptions = {}) {
    this.boundFrom = options.boundFrom ?? MIN_UNITS_FOR_BOUND;
    this.shared = options.shared ?? null;
  }

  /** Current L1 units that have a vector of this embedder (vectors of another model are not comparable). */
  static of(
    units: Iterable<MemoryUnit>, vectors: ReadonlyMap<string, { vector: Float32Array; embedder_id: string }>, embedderId: string, options: SimilarUnitsOptions = {},
  ): SimilarUnits {
    const set = new SimilarUnits(embedderId, options);
    for (const unit of units) set.put(unit, vectors.get(unit.id));
    return set;
  }

  get size(): number {
    return this.entries.length;
  }

  /**
   * Puts (or replaces) a unit with its stored vector. A unit that is not a current L1 unit with a
   * non-zero vector of this embedder and dimension is removed instead (it can never be an answer).
   */
  put(unit: MemoryUnit, stored: { vector: Float32Array; embedder_id: string } | undefined): void {
    const vector = stored?.vector;
    if (unit.level !== 1 || unit.retired_at !== null || !vector || stored.embedder_id !== this.embedderId) { this.remove(unit.id); return; }
    if (this.dims < 0) this.dims = vector.length;
    const norm = l2norm(vector);
    if (vector.length !== this.dims || norm === 0) { this.remove(unit.id); return; }
    let at = this.slot.get(unit.id);
    if (at === undefined) {
      at = this.entries.length;
      this.slot.set(unit.id, at);
      this.entries.push({ unit, vector, norm });
    } else {
      this.entries[at] = { unit, vector, norm };
    }
    if (this.directions && this.entries.length < REGROWTH * this.directionsAt) this.projectSlot(at);
    else if (this.entries.length >= Math.max(this.boundFrom, REGROWTH * this.directionsAt)) this.computeDirections();
  }

  remove(id: string): void {
    const at = this.slot.get(id);
    if (at === undefined) return;
    this.slot.delete(id);
    const last = this.entries.length - 1;
    if (at !== last) {
      // The last entry moves into the hole (order is irrelevant: ties are broken by id).
      this.entries[at] = this.entries[last];
      this.slot.set(this.entries[at].unit.id, at);
      if (this.directions) {
        const m = this.directions.basis.length;
        const l = this.levels.length;
        this.proj.copyWithin(at * m, last * m, last * m + m);
        this.resid.copyWithin(at * l, last * l, last * l + l);
      }
    }
    this.entries.pop();
  }

  /** The k most similar units, best first (ties by id, so the answer is deterministic); none for a zero vector. */
  topK(vector: Float32Array, k: number): SimilarUnit[] {
    if (k <= 0 || vector.length !== this.dims) return [];
    const qn = l2norm(vector);
    if (qn === 0) return [];
    const entries = this.entries;
    const top: SimilarUnit[] = [];
    const dir = this.directions;
    const m = dir ? dir.basis.length : 0;
    const levels = this.levels;
    const nl = levels.length;
    const qp = new Float64Array(m);
    const qr = new Float64Array(nl);
    if (dir) dir.project(vector, qn, qp, 0, qr, 0);
    const proj = this.proj;
    const resid = this.resid;
    scan: for (let i = 0; i < entries.length; i++) {
      const e = entries[i];
      if (dir && top.length === k) {
        // The bound at each level in turn: most units are ruled out by the first, cheapest one.
        const floor = top[k - 1].similarity - BOUND_SLACK;
        const o = i * m;
        let partial = 0;
        let c = 0;
        for (let l = 0; l < nl; l++) {
          for (const end = levels[l]; c < end; c++) partial += qp[c] * proj[o + c];
          if (partial + qr[l] * resid[i * nl + l] < floor) continue scan;
        }
      }
      const similarity = dot(vector, e.vector) / (qn * e.norm);
      if (top.length === k && !better(similarity, e.unit.id, top[k - 1])) continue;
      let at = top.length;
      while (at > 0 && better(similarity, e.unit.id, top[at - 1])) at--;
      top.splice(at, 0, { unit: e.unit, similarity });
      if (top.length > k) top.pop();
    }
    return top;
  }

  /** The shared ones the first time when there are, else from (a sample of) the units held now. */
  private computeDirections(): void {
    const reuse = this.directionsAt === 0 ? this.shared?.get(this.dims) ?? null : null;
    if (reuse) {
      this.directions = reuse;
    } else {
      const step = Math.max(1, Math.floor(this.entries.length / SAMPLE));
      const sample: Float32Array[] = [];
      for (let i = 0; i < this.entries.length; i += step) sample.push(this.entries[i].vector);
      this.directions = Directions.of(sample, BOUND_DIRECTIONS);
      if (this.directions) this.shared?.offer(this.directions);
    }
    this.directionsAt = this.entries.length;
    if (!this.directions) return;
    this.proj = new Float64Array(0); // the number of directions may have changed: every slot is projected again
    this.resid = new Float64Array(0);
    this.levels = this.directions.levels;
    this.ensureCapacity(this.entries.length);
    for (let i = 0; i < this.entries.length; i++) this.projectSlot(i);
  }

  private projectSlot(at: number): void {
    const dir = this.directions!;
    this.ensureCapacity(at + 1);
    const e = this.entries[at];
    dir.project(e.vector, e.norm, this.proj, at * dir.basis.length, this.resid, at * this.levels.length);
  }

  private ensureCapacity(slots: number): void {
    const m = this.directions!.basis.length;
    const l = this.levels.length;
    if (this.resid.length >= slots * l) return;
    const cap = Math.max(slots, (this.resid.length / l) * 2, 256);
    const proj = new Float64Array(cap * m);
    proj.set(this.proj);
    const resid = new Float64Array(cap * l);
    resid.set(this.resid);
    this.proj = proj;
    this.resid = resid;
  }
}
