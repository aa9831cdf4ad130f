/**
 * A word-vector file (word-vector-format.ts) opened without reading all its rows. The int8 rows are 34 of
 * its 42 MB, and a node read them all into memory at start: 40 MiB of RSS for the life of the process,
 * though text uses few words (the LoCoMo conversations and questions: 2,945 distinct words, 98.7% of
 * their lookups in the 32,768 most frequent). Rows are in the source's frequency order, so the first
 * `residentRows` are read at open and kept; the others are read from the file when a text uses them
 * (a positional read of one row, `dims` bytes, from the page cache), the most recent `cacheRows` of them
 * kept. The values are the file's bytes either way: the embeddings are the same.
 *
 * Kept to node:fs (prefetch.ts requires it before the rest of the package loads); the header is parsed
 * here only to find the sections, and checked when the table is made (decodeWordVectorFile).
 */
import fs from 'node:fs';
import { promisify } from 'node:util';

/** The rows read at open: 3.2 MB at 100 dimensions. */
export const DEFAULT_RESIDENT_ROWS = 32_768;
/** Far rows kept after their first read (400 KB at 100 dimensions). */
export const DEFAULT_CACHE_ROWS = 4096;

const openAsync = promisify(fs.open);
const readAsync = promisify(fs.read);
const fstatAsync = promisify(fs.fstat);

/** What was read of a word-vector file, and the descriptor its other rows are read through. */
export interface WordVectorFileParts {
  fd: number;
  fileLength: number;
  /** the file's first bytes: magic, length, header JSON */
  head: Buffer;
  dims: number;
  /** where the vectors section starts in the file */
  vectorsOffset: number;
  /** the first rows of the vectors section */
  resident: Int8Array;
  /** every section after the vectors (scales, probs, offsets, table), read in one piece */
  tail: { offset: number; bytes: Uint8Array };
  vocab: Buffer;
}

async function readAt(fd: number, length: number, position: number): Promise<Uint8Array> {
  // a fresh ArrayBuffer: its start is aligned for every typed view the sections need
  const bytes = new Uint8Array(new ArrayBuffer(length));
  let done = 0;
  while (done < length) {
    const { bytesRead } = await readAsync(fd, bytes, done, length - done, position + done);
    if (bytesRead === 0) throw new Error('truncated Strata word-vector file');
    done += bytesRead;
  }
  return bytes;
}

/** Reads the header, the first `residentRows` rows and the small sections of `binPath`, and the vocabulary; the descriptor stays open. */
export async function readWordVectorParts(binPath: string, vocabPath: string, residentRows = DEFAULT_RESIDENT_ROWS): Promise<WordVectorFileParts> {
  const vocab = fs.promises.readFile(vocabPath);
  vocab.catch(() => undefined); // awaited below; a failure of the other reads is reported first
  const fd = await openAsync(binPath, 'r');
  try {
    const fileLength = (await fstatAsync(fd)).size;
    const prefix = Buffer.from(await readAt(fd, Math.min(12, fileLength), 0));
    const headerLength = prefix.length === 12 ? prefix.readUInt32LE(8) : 0;
    const head = Buffer.from(await readAt(fd, Math.min(fileLength, 12 + headerLength), 0));
    let sections: Record<string, { offset: number; length: number }>;
    let dims: number;
    try {
      ({ sections, dims } = JSON.parse(head.toString('utf8', 12)) as { sections: typeof sections; dims: number });
    } catch {
      // not ours, or damaged: decodeWordVectorFile's check of the header says which
      return { fd, fileLength, head, dims: 0, vectorsOffset: 0, resident: new Int8Array(0), tail: { offset: 0, bytes: new Uint8Array(0) }, vocab: await vocab };
    }
    const vectors = sections.vectors;
    const residentBytes = Math.min(vectors.length, Math.max(0, residentRows) * dims);
    const tailOffset = vectors.offset + vectors.length;
    const resident = new Int8Array((await readAt(fd, residentBytes, vectors.offset)).buffer);
    const tail = await readAt(fd, Math.max(0, fileLength - tailOffset), tailOffset);
    return { fd, fileLength, head, dims, vectorsOffset: vectors.offset, resident, tail: { offset: tailOffset, bytes: tail }, vocab: await vocab };
  } catch (err) {
    fs.closeSync(fd);
    throw err;
  }
}

/**
 * The rows not read at open, read from the file one at a time and kept in a ring of `cacheRows`.
 * Reads are synchronous: a row is wanted in the middle of an embedding, and one `dims`-byte read from
 * the page cache costs microseconds (the file was just read in part, and the kernel keeps it cached).
 */
export class FileRows {
  private readonly slab: Int8Array;
  private readonly slotOf = new Map<number, number>();
  private readonly rowAt: Int32Array;
  private next = 0;
  private open = true;

  constructor(
    private readonly fd: number,
    private readonly vectorsOffset: number,
    private readonly dims: number,
    private readonly cacheRows = DEFAULT_CACHE_ROWS,
  ) {
    this.slab = new Int8Array(cacheRows * dims);
    this.rowAt = new Int32Array(cacheRows).fill(-1);
  }

  read(row: number, into: Int8Array): void {
    const dims = this.dims;
    let slot = this.slotOf.get(row);
    if (slot === undefined) {
      if (!this.open) throw new Error('the word-vector file was closed');
      slot = this.next;
      this.next = (slot + 1) % this.cacheRows;
      const old = this.rowAt[slot];
      if (old >= 0) this.slotOf.delete(old);
      this.rowAt[slot] = -1;
      const n = fs.readSync(this.fd, this.slab, slot * dims, dims, this.vectorsOffset + row * dims);
      if (n !== dims) throw new Error(`truncated Strata word-vector file (row ${row})`);
      this.rowAt[slot] = row;
      this.slotOf.set(row, slot);
    }
    into.set(this.slab.subarray(slot * dims, (slot + 1) * dims));
  }

  close(): void {
    if (!this.open) return;
    this.open = false;
    fs.closeSync(this.fd);
  }
}
