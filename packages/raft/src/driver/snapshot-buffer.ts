/**
 * Snapshot images held in memory, for state machines and tests that have no file at hand (the store
 * simulator, the in-memory test machines, an export). The driver itself always streams files
 * (storage/snapshot-files.ts).
 */
import type { SnapshotReader, SnapshotWriter } from './state-machine';

/** Collects what a state machine writes. */
export class BufferSnapshotWriter implements SnapshotWriter {
  private readonly parts: Buffer[] = [];
  /** sizes of the pieces written, in order (tests check a writer never got the whole image at once) */
  readonly pieces: number[] = [];

  async write(bytes: Uint8Array): Promise<void> {
    this.parts.push(Buffer.from(bytes)); // a copy: the writer may reuse its buffer
    this.pieces.push(bytes.byteLength);
  }

  bytes(): Buffer {
    return Buffer.concat(this.parts);
  }
}

/** Reads an image in pieces of at most `pieceSize` bytes (or of the sizes `split` draws, for fault tests). */
export function bufferSnapshotReader(image: Uint8Array, pieceSize = 256 * 1024, split?: () => number): SnapshotReader {
  return {
    size: image.byteLength,
    async *chunks() {
      let at = 0;
      while (at < image.byteLength) {
        const n = Math.max(1, Math.min(split ? split() : pieceSize, image.byteLength - at));
        yield image.subarray(at, at + n);
        at += n;
      }
    },
  };
}

/** Reads a whole image into memory: only for state machines whose state is small by design (tests, tools). */
export async function readWholeSnapshot(image: SnapshotReader): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const piece of image.chunks()) parts.push(Buffer.from(piece));
  return Buffer.concat(parts);
}
