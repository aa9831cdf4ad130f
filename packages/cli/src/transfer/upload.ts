/**
 * A request body read from a Node stream as the request sends it: the web ReadableStream the client
 * takes, pulled one chunk at a time, so a file of any size is never held whole, and each chunk counted
 * when it leaves (the progress of an upload).
 */
import type { Readable } from 'node:stream';

export function uploadBody(source: Readable, onChunk: (bytes: number) => void): ReadableStream<Uint8Array> {
  const chunks = source[Symbol.asyncIterator]() as AsyncIterator<Buffer | string>;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await chunks.next();
      if (next.done) return controller.close();
      const bytes = typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
      onChunk(bytes.length);
      controller.enqueue(bytes);
    },
    async cancel() {
      await chunks.return?.();
    },
  }, { highWaterMark: 0 });
}
