/**
 * A deterministic bag-of-words embedder for tests: each lowercased word (stopwords dropped, plural "s"
 * trimmed) is hashed (FNV-1a) into one of `dimensions` buckets with a hashed sign; the vector is L2-normalized.
 * Texts sharing most words are close, texts sharing none are orthogonal (up to collisions).
 */
import type { Embedder } from '../../src/providers/types';

const STOP = new Set(['a', 'an', 'the', 'and', 'or', 'to', 'of', 'in', 'on', 'at', 'is', 'it', 'was', 'i', 'my', 'me', 'so', 'for', 'with', 'that', 'this', 'be', 'am', 'are', 'really', 'very', 'just']);

function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

export class HashEmbedder implements Embedder {
  readonly id: string;
  calls = 0;
  constructor(readonly dimensions = 512) {
    this.id = `test-hash-${dimensions}`;
  }
  async embed(texts: string[]): Promise<Float32Array[]> {
    this.calls++;
    return texts.map((t) => {
      const v = new Float32Array(this.dimensions);
      const words = t.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
      for (const raw of words) {
        if (STOP.has(raw)) continue;
        const w = raw.length > 3 && raw.endsWith('s') && !raw.endsWith('ss') ? raw.slice(0, -1) : raw;
        const h = fnv1a(w);
        v[h % this.dimensions] += (h >>> 31) === 1 ? -1 : 1;
      }
      let n = 0;
      for (let i = 0; i < v.length; i++) n += v[i] * v[i];
      n = Math.sqrt(n);
      if (n > 0) for (let i = 0; i < v.length; i++) v[i] /= n;
      return v;
    });
  }
}
