/**
 * Counts the records of an export file by kind as its bytes pass through, without holding a line: the
 * node writes `kind` as each line's first key (docs/export-format.md), so the first bytes of a line
 * name it. Only those are kept, whatever the line's length (an asset line can be megabytes of base64).
 */
import { Transform, type TransformCallback } from 'node:stream';

/** The kinds of an export file, in file order, by the names the import's counts use. */
export const RECORD_KINDS: Record<string, string> = { event: 'events', asset: 'assets', unit: 'units', edge: 'edges', goal: 'goals', task: 'tasks', user: 'users' };

/** Enough for `{"kind":"<kind>"` with room to spare. */
const PREFIX_BYTES = 64;
const KIND = /^\s*\{\s*"kind"\s*:\s*"([A-Za-z_]+)"/;
const NEWLINE = 0x0a;

export class RecordCounter extends Transform {
  /** records by plural kind (`other` for a line whose kind could not be read); the header is not one */
  readonly counts: Record<string, number> = Object.fromEntries(Object.values(RECORD_KINDS).map((k) => [k, 0]));
  bytes = 0;
  records = 0;
  private prefix: Buffer = Buffer.alloc(0);

  constructor(private readonly onChunk: (bytes: number, records: number) => void = () => {}) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    let from = 0;
    for (;;) {
      const nl = chunk.indexOf(NEWLINE, from);
      const end = nl === -1 ? chunk.length : nl;
      const room = PREFIX_BYTES - this.prefix.length;
      if (room > 0 && end > from) {
        const take = chunk.subarray(from, Math.min(end, from + room));
        // copied when kept past this chunk, so the chunk itself is not held
        this.prefix = this.prefix.length === 0 && nl !== -1 ? take : Buffer.concat([this.prefix, take]);
      }
      if (nl === -1) break;
      this.endLine();
      from = nl + 1;
    }
    this.onChunk(chunk.length, this.records);
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    this.endLine();
    callback();
  }

  private endLine(): void {
    const head = this.prefix.toString('utf8');
    this.prefix = Buffer.alloc(0);
    if (head.trim() === '') return;
    const kind = KIND.exec(head)?.[1];
    if (kind === 'header') return;
    const name = kind !== undefined && RECORD_KINDS[kind] !== undefined ? RECORD_KINDS[kind] : 'other';
    this.counts[name] = (this.counts[name] ?? 0) + 1;
    this.records++;
  }
}

/** `events 5, units 4, users 1`: the kinds with a count, in file order. */
export function countsLine(counts: Record<string, number>): string {
  const parts = Object.entries(counts).filter(([, n]) => n > 0).map(([kind, n]) => `${kind} ${n}`);
  return parts.length === 0 ? 'none' : parts.join(', ');
}

export function total(counts: Record<string, number>): number {
  return Object.values(counts).reduce((a, b) => a + b, 0);
}
