/**
 * The default, offline embedder: SIF-weighted GloVe word vectors (see sif.ts) from the binary that
 * `scripts/prepare-embeddings.ts` made at install. Loading reads two files and makes typed-array views.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Embedder } from '../providers/types';
import { EmbeddingSetupError } from './errors';
import { defaultEmbeddingsDir, PREPARE_COMMAND, VECTORS_FILE, VOCAB_FILE } from './paths';
import { takeWordVectors } from './prefetch';
import { sifEmbed, type SifParams, type WordVectors } from './sif';
import { decodeWordVectorFile, decodeWordVectors, verifyWordVectors, type WordVectorTable } from './word-vector-format';

export const DEFAULT_SIF_A = 1e-3;

export interface SifEmbedderOptions {
  /** SIF smoothing (default 1e-3). */
  a?: number;
  /** Project out the stored common-discourse direction (default false: measured, it lowered recall). */
  removeCommonComponent?: boolean;
  /** Give unknown words a hashed character n-gram vector (default true); false drops them. */
  oovFallback?: boolean;
}

export interface LoadSifOptions extends SifEmbedderOptions {
  /** Directory holding vectors.bin and vocab.txt (default: see paths.ts). */
  dir?: string;
  /** Check both files' SHA-256 before use (default false: the prepare step already did, and it costs ~100 ms). */
  verify?: boolean;
  /**
   * loadAsync: how many of the most frequent words' rows are held in memory (default 32,768); the others
   * are read from the file when a text uses them (word-vector-file.ts). With `verify` every row is read.
   */
  residentRows?: number;
}

export class SifEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions: number;
  private readonly params: SifParams;

  constructor(
    private readonly table: WordVectors & { close?(): void },
    meta: { sourceName: string; commonComponents: readonly Float32Array[]; oovProb: number; medianNorm: number },
    options: SifEmbedderOptions = {},
  ) {
    const a = options.a ?? DEFAULT_SIF_A;
    const pc = options.removeCommonComponent ?? false; // off by default: it lowered LoCoMo recall (bench-embeddings)
    const oov = options.oovFallback ?? true;
    this.dimensions = table.dims;
    this.params = { a, commonComponents: pc ? meta.commonComponents : [], oovProb: meta.oovProb, oovNorm: oov ? meta.medianNorm : 0 };
    // Every knob that changes the vectors is in the id, so an index built with other settings is rebuilt.
    this.id = `sif-v1:${meta.sourceName}:a=${a}:pc=${pc ? 1 : 0}:oov=${oov ? 'ngram' : 'drop'}`;
  }

  static fromTable(table: WordVectorTable, options: SifEmbedderOptions = {}): SifEmbedder {
    const h = table.header;
    return new SifEmbedder(table, { sourceName: h.source.name, commonComponents: h.commonComponents.map((c) => Float32Array.from(c)), oovProb: h.oovProb, medianNorm: h.medianNorm }, options);
  }

  /** Loads the prepared binary; throws EmbeddingSetupError naming the command to run when it is missing. */
  static load(options: LoadSifOptions = {}): SifEmbedder {
    return SifEmbedder.fromTable(loadWordVectorTable(options.dir ?? defaultEmbeddingsDir(), options.verify ?? false), options);
  }

  /**
   * load() with the files read off the main thread (prefetch.ts), taking a read begun earlier by
   * prefetchWordVectors when there is one: what a node uses. Same checks and errors as load(), the same
   * vectors; only the most frequent words' rows are held in memory (`residentRows`), the file stays
   * open for the others until `close`.
   */
  static async loadAsync(options: LoadSifOptions = {}): Promise<SifEmbedder> {
    const dir = options.dir ?? defaultEmbeddingsDir();
    checkPrepared(dir);
    if (options.verify) {
      let files;
      try {
        files = await Promise.all([fs.promises.readFile(path.join(dir, VECTORS_FILE)), fs.promises.readFile(path.join(dir, VOCAB_FILE))]);
      } catch (err) {
        throw unusable(dir, err);
      }
      return SifEmbedder.fromTable(decodeTable(dir, files[0], files[1], true), options);
    }
    let table: WordVectorTable;
    try {
      table = decodeWordVectorFile(await takeWordVectors(dir, options.residentRows));
    } catch (err) {
      throw unusable(dir, err);
    }
    return SifEmbedder.fromTable(table, options);
  }

  /** Lets go of the word-vector file a table loaded by loadAsync reads its rare words' rows from. */
  async close(): Promise<void> {
    this.table.close?.();
  }

  embedSync(texts: readonly string[]): Float32Array[] {
    return texts.map((t) => sifEmbed(t, this.table, this.params));
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    return this.embedSync(texts);
  }
}

/** Throws EmbeddingSetupError naming the command to run when a file of `dir` is missing. */
function checkPrepared(dir: string): void {
  for (const p of [path.join(dir, VECTORS_FILE), path.join(dir, VOCAB_FILE)]) {
    if (!fs.existsSync(p)) {
      throw new EmbeddingSetupError(
        `The local embedding model is not prepared: ${p} is missing. Run \`${PREPARE_COMMAND}\` in the Strata checkout ` +
          '(npm install / npm ci run it as postinstall), or set STRATA_EMBEDDINGS_DIR to where it was written.',
      );
    }
  }
}

function unusable(dir: string, err: unknown): EmbeddingSetupError {
  return new EmbeddingSetupError(`The local embedding model in ${dir} is unusable (${(err as Error).message}). Rebuild it with \`${PREPARE_COMMAND} --force\`.`, { cause: err });
}

function decodeTable(dir: string, bin: Buffer, vocab: Buffer, verify: boolean): WordVectorTable {
  try {
    if (verify) verifyWordVectors(bin, vocab);
    return decodeWordVectors(bin, vocab);
  } catch (err) {
    throw unusable(dir, err);
  }
}

export function loadWordVectorTable(dir: string, verify = false): WordVectorTable {
  checkPrepared(dir);
  let bin: Buffer;
  let vocab: Buffer;
  try {
    bin = fs.readFileSync(path.join(dir, VECTORS_FILE));
    vocab = fs.readFileSync(path.join(dir, VOCAB_FILE));
  } catch (err) {
    throw unusable(dir, err);
  }
  return decodeTable(dir, bin, vocab, verify);
}
