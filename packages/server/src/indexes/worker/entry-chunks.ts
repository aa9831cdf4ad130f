/**
 * A load's entries as they cross to the index worker: the units and contexts cloned, the vectors packed
 * in one buffer that is moved (transferred), not copied. Cloned one by one, 100,000 vectors were 100,000
 * small buffers allocated on each side.
 */
import type { retrieval } from '@strata/memory';
import type { EntryChunk } from './protocol';

/** A load's entries with their vectors in one buffer (EntryChunk). */
export function packEntries(entries: readonly retrieval.IndexEntry[], dimensions: number): EntryChunk {
  const vectors = new Float32Array(entries.length * dimensions);
  const has = new Uint8Array(entries.length);
  entries.forEach((e, i) => {
    if (!e.vector || e.vector.length !== dimensions) return;
    vectors.set(e.vector, i * dimensions);
    has[i] = 1;
  });
  return { units: entries.map((e) => e.unit), contexts: entries.map((e) => e.context ?? null), vectors, has };
}

/** The entries of a chunk, each vector a view of the chunk's buffer (the index copies it into its own matrix). */
export function unpackEntries(chunk: EntryChunk, dimensions: number): retrieval.IndexEntry[] {
  return chunk.units.map((unit, i) => ({
    unit, context: chunk.contexts[i], vector: chunk.has[i] ? chunk.vectors.subarray(i * dimensions, (i + 1) * dimensions) : null,
  }));
}
