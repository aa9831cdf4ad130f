/**
 * Reading the local word vectors ahead of their use. The files took 0.1-0.3 s to read on the node's
 * main thread at start; read on libuv's thread pool from the moment the configuration is known, they
 * arrive while the node's modules are still loading. What is read is what the table keeps in memory
 * (word-vector-file.ts: the small sections, the most frequent words' rows, the vocabulary, ~14 MB); the
 * other rows are read when a text uses them. Kept to node:fs, paths.ts and word-vector-file.ts so that
 * requiring it (`@strata/memory/embedding-files`) loads nothing else of the package.
 */
import path from 'node:path';
import { defaultEmbeddingsDir, VECTORS_FILE, VOCAB_FILE } from './paths';
import { DEFAULT_RESIDENT_ROWS, readWordVectorParts, type WordVectorFileParts } from './word-vector-file';

/** Reads begun and not yet taken, by directory and rows read. */
const begun = new Map<string, Promise<WordVectorFileParts>>();

const keyOf = (dir: string, residentRows: number) => `${residentRows}\0${dir}`;

/** Begins reading the files of `dir` (default: where the provider looks); a missing file is reported when they are taken. */
export function prefetchWordVectors(dir: string = defaultEmbeddingsDir(), residentRows = DEFAULT_RESIDENT_ROWS): void {
  const key = keyOf(dir, residentRows);
  if (begun.has(key)) return;
  const read = readWordVectorParts(path.join(dir, VECTORS_FILE), path.join(dir, VOCAB_FILE), residentRows);
  read.catch(() => undefined); // taken and reported by takeWordVectors; never an unhandled rejection
  begun.set(key, read);
}

/** The parts of `dir`'s files: the read begun by prefetchWordVectors (handed out once), else a new one. */
export function takeWordVectors(dir: string, residentRows = DEFAULT_RESIDENT_ROWS): Promise<WordVectorFileParts> {
  const key = keyOf(dir, residentRows);
  const read = begun.get(key);
  begun.delete(key); // not pinned here once taken: the table keeps what it uses
  if (read) return read;
  prefetchWordVectors(dir, residentRows);
  return takeWordVectors(dir, residentRows);
}
