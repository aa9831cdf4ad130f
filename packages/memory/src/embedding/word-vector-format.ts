/**
 * The compact on-disk form of a word-vector table, made once at install by `scripts/prepare-embeddings.ts`
 * and memory-mapped-in-spirit at run time (one read, then typed-array views; nothing is parsed per word).
 *
 * vectors.bin:  "STRWVEC1" | u32 header length | header JSON | padding to 8 | sections (each 8-aligned):
 *   vectors  Int8Array   count*dims   row i = round(v_i / scale_i), scale_i = max|v_i| / 127
 *   scales   Float32Array count
 *   probs    Float32Array count       unigram probability p(w), for SIF weights a/(a+p(w))
 *   offsets  Uint32Array count+1      word i is vocab[offsets[i], offsets[i+1]) in UTF-16 code units
 *   table    Int32Array  tableSize    open-addressing hash table (FNV-1a, linear probing) of row ids, -1 empty
 * vocab.txt:    the words, one per line, in row order (row order = the source's frequency rank).
 *
 * Pure functions over buffers; the file I/O lives in the provider and the prepare script.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { fnv1a } from './hash';
import { FileRows, type WordVectorFileParts } from './word-vector-file';

export const MAGIC = 'STRWVEC1';
export const FORMAT_VERSION = 1;

export interface WordVectorSource {
  /** Where the vectors came from (package name@version and a fingerprint of the source file). */
  name: string;
  fingerprint: string;
}

export interface WordVectorHeader {
  format: 'strata-word-vectors';
  version: number;
  dims: number;
  count: number;
  quantization: 'int8-per-row-scale';
  source: WordVectorSource;
  /** How p(w) was estimated, for the record. */
  frequencySource: string;
  /** The SIF `a` the stored common component was computed with. */
  sifA: number;
  /** Unit vectors to project out of sentence vectors (SIF's "common discourse" direction). */
  commonComponents: number[][];
  /** Median L2 norm of the word vectors: the scale given to fallback vectors of unknown words. */
  medianNorm: number;
  /** Probability given to out-of-vocabulary words (the rarest word's). */
  oovProb: number;
  sections: Record<SectionName, { offset: number; length: number }>;
  /** SHA-256 (hex) of every byte after the header, and of the vocabulary file. */
  bodySha256: string;
  vocabSha256: string;
}

type SectionName = 'vectors' | 'scales' | 'probs' | 'offsets' | 'table';

/** Everything the converter has computed, before quantization. */
export interface WordVectorInput {
  words: string[];
  /** Row-major float vectors, words.length * dims. */
  vectors: Float32Array;
  dims: number;
  probs: Float32Array;
  source: WordVectorSource;
  frequencySource: string;
  sifA: number;
  commonComponents: Float32Array[];
}

export interface EncodedWordVectors {
  bin: Buffer;
  vocab: Buffer;
  header: WordVectorHeader;
}

const align8 = (n: number): number => (n + 7) & ~7;

export function tableSizeFor(count: number): number {
  let size = 1;
  while (size < count * 2) size *= 2;
  return size;
}

/** Quantizes and lays out a table (see the file comment). Deterministic: the same input gives the same bytes. */
export function encodeWordVectors(input: WordVectorInput): EncodedWordVectors {
  const { words, vectors, dims, probs } = input;
  const count = words.length;
  if (vectors.length !== count * dims) throw new RangeError(`vectors has ${vectors.length} values, expected ${count * dims}`);
  if (probs.length !== count) throw new RangeError(`probs has ${probs.length} values, expected ${count}`);

  const q = new Int8Array(count * dims);
  const scales = new Float32Array(count);
  const norms = new Float64Array(count);
  for (let r = 0; r < count; r++) {
    let max = 0;
    let sq = 0;
    for (let d = 0; d < dims; d++) {
      const x = vectors[r * dims + d];
      if (Math.abs(x) > max) max = Math.abs(x);
      sq += x * x;
    }
    norms[r] = Math.sqrt(sq);
    const scale = max > 0 ? max / 127 : 1;
    scales[r] = scale;
    for (let d = 0; d < dims; d++) q[r * dims + d] = Math.round(vectors[r * dims + d] / scale);
  }
  const sortedNorms = Array.from(norms).sort((a, b) => a - b);
  const medianNorm = count > 0 ? sortedNorms[Math.floor(count / 2)] : 1;

  const offsets = new Uint32Array(count + 1);
  let pos = 0;
  for (let r = 0; r < count; r++) {
    const w = words[r];
    if (w.length === 0 || w.includes('\n')) throw new Error(`word ${r} is empty or holds a newline`);
    offsets[r] = pos;
    pos += w.length + 1; // +1: the newline in vocab.txt
  }
  offsets[count] = pos;
  const vocabText = words.join('\n') + '\n';
  const vocab = Buffer.from(vocabText, 'utf8');

  const tableSize = tableSizeFor(count);
  const table = new Int32Array(tableSize).fill(-1);
  const mask = tableSize - 1;
  const seen = new Set<string>();
  for (let r = 0; r < count; r++) {
    if (seen.has(words[r])) continue; // keep the first (most frequent) of duplicate spellings
    seen.add(words[r]);
    let slot = fnv1a(words[r]) & mask;
    while (table[slot] !== -1) slot = (slot + 1) & mask;
    table[slot] = r;
  }

  let oovProb = 1;
  for (let r = 0; r < count; r++) if (probs[r] > 0 && probs[r] < oovProb) oovProb = probs[r];

  const parts: Record<SectionName, Uint8Array> = {
    vectors: new Uint8Array(q.buffer, q.byteOffset, q.byteLength),
    scales: new Uint8Array(scales.buffer),
    probs: new Uint8Array(probs.buffer, probs.byteOffset, probs.byteLength),
    offsets: new Uint8Array(offsets.buffer),
    table: new Uint8Array(table.buffer),
  };
  const names: SectionName[] = ['vectors', 'scales', 'probs', 'offsets', 'table'];
  let bodyLen = 0;
  const rel: Record<string, { offset: number; length: number }> = {};
  for (const n of names) {
    rel[n] = { offset: bodyLen, length: parts[n].byteLength };
    bodyLen = align8(bodyLen + parts[n].byteLength);
  }
  const body = Buffer.alloc(bodyLen);
  for (const n of names) body.set(parts[n], rel[n].offset);

  const headerBase = {
    format: 'strata-word-vectors' as const,
    version: FORMAT_VERSION,
    dims,
    count,
    quantization: 'int8-per-row-scale' as const,
    source: input.source,
    frequencySource: input.frequencySource,
    sifA: input.sifA,
    commonComponents: input.commonComponents.map((c) => Array.from(c)),
    medianNorm,
    oovProb,
    bodySha256: sha256(body),
    vocabSha256: sha256(vocab),
  };
  // Section offsets are absolute, so they depend on the header's own length: iterate until it is stable.
  let headerStart = align8(12 + Buffer.byteLength(JSON.stringify({ ...headerBase, sections: rel })) + 64);
  for (;;) {
    const sections = Object.fromEntries(names.map((n) => [n, { offset: headerStart + rel[n].offset, length: rel[n].length }])) as WordVectorHeader['sections'];
    const header: WordVectorHeader = { ...headerBase, sections };
    const json = Buffer.from(JSON.stringify(header), 'utf8');
    if (12 + json.length <= headerStart) {
      const bin = Buffer.alloc(headerStart + body.length);
      bin.write(MAGIC, 0, 'latin1');
      bin.writeUInt32LE(json.length, 8);
      json.copy(bin, 12);
      body.copy(bin, headerStart);
      return { bin, vocab, header };
    }
    headerStart = align8(12 + json.length + 64);
  }
}

export function sha256(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Reads and checks the header only (cheap: used to decide whether a prepared file is current). */
export function readHeader(bin: Uint8Array): WordVectorHeader {
  return parseHeader(bin, bin.length);
}

/**
 * The header of a file of `fileLength` bytes from its first bytes (`head` holds at least the header):
 * checked as readHeader checks it, the sections' bounds against the whole file's length.
 */
export function parseHeader(head: Uint8Array, fileLength: number): WordVectorHeader {
  const buf = Buffer.from(head.buffer, head.byteOffset, head.byteLength);
  if (buf.length < 12 || buf.toString('latin1', 0, 8) !== MAGIC) throw new Error('not a Strata word-vector file (bad magic)');
  const len = buf.readUInt32LE(8);
  if (12 + len > buf.length) throw new Error('truncated Strata word-vector file (header)');
  const header = JSON.parse(buf.toString('utf8', 12, 12 + len)) as WordVectorHeader;
  if (header.format !== 'strata-word-vectors' || header.version !== FORMAT_VERSION) {
    throw new Error(`unsupported word-vector file: format ${String(header.format)} version ${String(header.version)} (expected ${FORMAT_VERSION})`);
  }
  for (const [name, s] of Object.entries(header.sections)) {
    if (s.offset % 8 !== 0 || s.offset + s.length > fileLength) throw new Error(`truncated Strata word-vector file (section ${name})`);
  }
  return header;
}

/** Full integrity check: header, section bounds, and both checksums. */
export function verifyWordVectors(bin: Uint8Array, vocab: Uint8Array): WordVectorHeader {
  const header = readHeader(bin);
  const bodyStart = header.sections.vectors.offset;
  if (sha256(bin.subarray(bodyStart)) !== header.bodySha256) throw new Error('word-vector file is corrupt (body checksum mismatch)');
  if (sha256(vocab) !== header.vocabSha256) throw new Error('vocabulary file does not match the word-vector file (checksum mismatch)');
  return header;
}

/**
 * The int8 rows of a table that are not held in memory (word-vector-file.ts reads them from the file):
 * `read` fills `into` (dims bytes) with row `row`'s quantized values.
 */
export interface FarRows {
  read(row: number, into: Int8Array): void;
  close?(): void;
}

/**
 * The sections of a table, as typed-array views. `vectors` may hold only the first rows (the most
 * frequent words: rows are in the source's frequency order); `far` then gives the others.
 */
export interface WordVectorSections {
  vectors: Int8Array;
  scales: Float32Array;
  probs: Float32Array;
  offsets: Uint32Array;
  table: Int32Array;
  far?: FarRows;
}

/** Views over the sections of a whole file's bytes. */
export function sectionViews(header: WordVectorHeader, bin: Uint8Array): WordVectorSections {
  const ab = bin.byteOffset % 8 === 0 ? bin : new Uint8Array(bin); // typed views need aligned offsets
  const view = <T>(name: SectionName, Ctor: { new (b: ArrayBufferLike, o: number, l: number): T; BYTES_PER_ELEMENT: number }): T => {
    const s = header.sections[name];
    return new Ctor(ab.buffer, ab.byteOffset + s.offset, s.length / Ctor.BYTES_PER_ELEMENT);
  };
  return { vectors: view('vectors', Int8Array), scales: view('scales', Float32Array), probs: view('probs', Float32Array), offsets: view('offsets', Uint32Array), table: view('table', Int32Array) };
}

/** A loaded table: typed-array views (over the file bytes, or over the sections read), and an allocation-free lookup. */
export class WordVectorTable {
  readonly dims: number;
  readonly count: number;
  /** rows [0, residentRows) are in `q`; the others come from `far` */
  readonly residentRows: number;
  private readonly q: Int8Array;
  private readonly scales: Float32Array;
  readonly probs: Float32Array;
  private readonly offsets: Uint32Array;
  private readonly table: Int32Array;
  private readonly mask: number;
  private readonly far: FarRows | undefined;
  /** a far row, read into it for the time of one addScaled */
  private readonly farRow: Int8Array;

  constructor(
    readonly header: WordVectorHeader,
    sections: Uint8Array | WordVectorSections,
    private readonly vocab: string,
  ) {
    const s = sections instanceof Uint8Array ? sectionViews(header, sections) : sections;
    this.dims = header.dims;
    this.count = header.count;
    this.q = s.vectors;
    this.scales = s.scales;
    this.probs = s.probs;
    this.offsets = s.offsets;
    this.table = s.table;
    this.far = s.far;
    this.farRow = new Int8Array(this.dims);
    this.mask = this.table.length - 1;
    this.residentRows = Math.floor(this.q.length / Math.max(1, this.dims));
    if (this.q.length % this.dims !== 0 || this.residentRows > this.count || (this.residentRows < this.count && !this.far)) {
      throw new Error('word-vector file sections do not match its header');
    }
    if (this.offsets.length !== this.count + 1) throw new Error('word-vector file sections do not match its header');
    if (this.offsets[this.count] !== vocab.length) throw new Error('vocabulary file does not match the word-vector file (length)');
  }

  /** Row of `word`, or -1. */
  lookup(word: string): number {
    let slot = fnv1a(word) & this.mask;
    for (let probes = 0; probes <= this.mask; probes++) {
      const r = this.table[slot];
      if (r === -1) return -1;
      const start = this.offsets[r];
      if (this.offsets[r + 1] - start - 1 === word.length && this.vocab.startsWith(word, start)) return r;
      slot = (slot + 1) & this.mask;
    }
    return -1;
  }

  word(row: number): string {
    return this.vocab.slice(this.offsets[row], this.offsets[row + 1] - 1);
  }

  /** out += weight * vector(row), dequantizing on the fly. */
  addScaled(row: number, weight: number, out: Float32Array): void {
    const w = weight * this.scales[row];
    if (row < this.residentRows) {
      const base = row * this.dims;
      for (let d = 0; d < this.dims; d++) out[d] += w * this.q[base + d];
      return;
    }
    const q = this.farRow;
    this.far!.read(row, q);
    for (let d = 0; d < this.dims; d++) out[d] += w * q[d];
  }

  vector(row: number): Float32Array {
    const v = new Float32Array(this.dims);
    this.addScaled(row, 1, v);
    return v;
  }

  /** Lets go of the file the far rows are read from (a table of a file's bytes holds none). */
  close(): void {
    this.far?.close?.();
  }
}

/** Opens a table from the two files' bytes (no checksum pass: `verifyWordVectors` is for the prepare step). */
export function decodeWordVectors(bin: Uint8Array, vocab: Uint8Array | string): WordVectorTable {
  const header = readHeader(bin);
  const text = typeof vocab === 'string' ? vocab : Buffer.from(vocab.buffer, vocab.byteOffset, vocab.byteLength).toString('utf8');
  return new WordVectorTable(header, bin, text);
}

/**
 * Makes a table of a file opened in part (word-vector-file.ts): its first rows in memory, the others
 * read from the file when used. The header is checked as readHeader checks a whole file. The table
 * owns the descriptor from then on (`close`); a file it cannot use is closed here.
 */
export function decodeWordVectorFile(parts: WordVectorFileParts, cacheRows?: number): WordVectorTable {
  try {
    const header = parseHeader(parts.head, parts.fileLength);
    const tail = <T>(name: Exclude<SectionName, 'vectors'>, Ctor: { new (b: ArrayBufferLike, o: number, l: number): T; BYTES_PER_ELEMENT: number }): T => {
      const s = header.sections[name];
      if (s.offset < parts.tail.offset) throw new Error(`word-vector file section ${name} is not after the vectors`);
      return new Ctor(parts.tail.bytes.buffer, parts.tail.bytes.byteOffset + s.offset - parts.tail.offset, s.length / Ctor.BYTES_PER_ELEMENT);
    };
    const sections: WordVectorSections = {
      vectors: parts.resident,
      scales: tail('scales', Float32Array),
      probs: tail('probs', Float32Array),
      offsets: tail('offsets', Uint32Array),
      table: tail('table', Int32Array),
      far: new FileRows(parts.fd, header.sections.vectors.offset, header.dims, cacheRows),
    };
    return new WordVectorTable(header, sections, parts.vocab.toString('utf8'));
  } catch (err) {
    fs.closeSync(parts.fd);
    throw err;
  }
}
