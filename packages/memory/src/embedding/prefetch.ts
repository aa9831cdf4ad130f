/**
 * Reading the local word vectors ahead of their use. The two files (about 43 MB) took 0.1-0.3 s to read
 * on the node's main thread at start; read on libuv's thread pool from the moment the configuration is
 * known, they arrive while the node's modules are still loading. Kept to node:fs and paths.ts so that
 * requiring it (`@strata/memory/embedding-files`) loads nothing else of the package.
 */
import fs from 'node:fs';
import path from 'node:path';
import { defaultEmbeddingsDir, VECTORS_FILE, VOCAB_FILE } from './paths';

export interface WordVectorFiles {
  bin: Buffer;
  vocab: Buffer;
}

/** Reads begun and not yet taken, by directory. */
const begun = new Map<string, Promise<WordVectorFiles>>();

/** Begins reading the files of `dir` (default: where the provider looks); a missing file is reported when they are taken. */
export function prefetchWordVectors(dir: string = defaultEmbeddingsDir()): void {
  if (begun.has(dir)) return;
  const read = Promise.all([fs.promises.readFile(path.join(dir, VECTORS_FILE)), fs.promises.readFile(path.join(dir, VOCAB_FILE))])
    .then(([bin, vocab]) => ({ bin, vocab }));
  read.catch(() => undefined); // taken and reported by takeWordVectors; never an unhandled rejection
  begun.set(dir, read);
}

/** The files of `dir`: the read begun by prefetchWordVectors (handed out once), else a new one. */
export function takeWordVectors(dir: string): Promise<WordVectorFiles> {
  const read = begun.get(dir);
  begun.delete(dir); // not pinned here once taken: the table keeps what it uses
  if (read) return read;
  prefetchWordVectors(dir);
  return takeWordVectors(dir);
}
