/**
 * Peer streams: one long-lived connection per peer and direction carrying framed message batches, as
 * etcd's stream transport does. A POST per batch paid, on both sides, an HTTP request and its answer
 * (parsing, headers, a SHA-256 and an HMAC, a response), per hop of every write; a frame is a length,
 * the batch and a MAC. The connection opens as an HTTP Upgrade signed like a POST (same headers,
 * digest of the empty body, one-time nonce), so only holders of the cluster secret open one; frames
 * are then authenticated with a key derived from the secret and that nonce, over a sequence number,
 * so nothing can be injected, replayed, reordered or moved to another stream.
 *
 * Frame: [u32 payload length][u8 kind][payload][32-byte HMAC-SHA256(key, u64 seq | kind | payload)].
 * Kinds: messages (the payload is a codec batch), ping (8 bytes), pong (the ping's 8 bytes, sent back
 * on the same connection: the round trip is the peer RTT metric).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Duplex } from 'node:stream';

export const STREAM_PROTOCOL = 'strata-raft-stream/1';
const HEAD = 5;
const MAC = 32;

export const enum FrameKind {
  Messages = 0,
  Ping = 1,
  Pong = 2,
}

/**
 * A connection's frame key for one direction ('out': opener to acceptor, 'back': the pongs): only the
 * secret's holders can compute it, and every connection and direction has its own.
 */
export function streamKey(secret: string, nonce: string, from: number, direction: 'out' | 'back'): Buffer {
  return createHmac('sha256', secret).update(`raft-stream\n${nonce}\n${from}\n${direction}`).digest();
}

function mac(key: Buffer, seq: number, kind: FrameKind, payload: Uint8Array): Buffer {
  const head = Buffer.allocUnsafe(9);
  head.writeBigUInt64BE(BigInt(seq), 0);
  head.writeUInt8(kind, 8);
  return createHmac('sha256', key).update(head).update(payload).digest();
}

/** Frames one direction of a stream: each frame carries the next sequence number in its MAC. */
export class FrameWriter {
  private seq = 0;

  constructor(private readonly key: Buffer) {}

  frame(kind: FrameKind, payload: Uint8Array): Buffer[] {
    const head = Buffer.allocUnsafe(HEAD);
    head.writeUInt32BE(payload.byteLength, 0);
    head.writeUInt8(kind, 4);
    return [head, Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength), mac(this.key, this.seq++, kind, payload)];
  }
}

export class FrameError extends Error {}

/**
 * Reads frames from a byte stream, checking each MAC against the next expected sequence number.
 * Holds at most one frame being assembled: its length is checked against `maxPayload` from its head,
 * before its bytes are kept, and its pieces are joined once, when the last arrives (joining them on
 * every piece would copy a large frame over and over).
 */
export class FrameReader {
  private seq = 0;
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** bytes of the frame being assembled, once its head was read (0: not yet) */
  private frameBytes = 0;

  constructor(private readonly key: Buffer, private readonly maxPayload: number) {}

  /** Takes bytes; returns the complete frames they finish. Throws FrameError on a bad or oversized frame. */
  push(data: Buffer): { kind: FrameKind; payload: Buffer }[] {
    this.chunks.push(data);
    this.buffered += data.length;
    const out: { kind: FrameKind; payload: Buffer }[] = [];
    for (;;) {
      if (this.frameBytes === 0) {
        if (this.buffered < HEAD) return out;
        const head = this.chunks[0].length >= HEAD ? this.chunks[0] : this.join();
        const length = head.readUInt32BE(0);
        const kind = head.readUInt8(4);
        if (length > this.maxPayload) throw new FrameError(`frame of ${length} bytes exceeds ${this.maxPayload}`);
        if (kind !== FrameKind.Messages && kind !== FrameKind.Ping && kind !== FrameKind.Pong) throw new FrameError(`unknown frame kind ${kind}`);
        this.frameBytes = HEAD + length + MAC;
      }
      if (this.buffered < this.frameBytes) return out;
      const all = this.join();
      const length = this.frameBytes - HEAD - MAC;
      const kind = all.readUInt8(4) as FrameKind;
      const payload = all.subarray(HEAD, HEAD + length);
      const want = mac(this.key, this.seq, kind, payload);
      if (!timingSafeEqual(want, all.subarray(HEAD + length, this.frameBytes))) throw new FrameError('frame authentication failed');
      this.seq++;
      out.push({ kind, payload });
      const rest = all.subarray(this.frameBytes);
      this.chunks = rest.length ? [rest] : [];
      this.buffered = rest.length;
      this.frameBytes = 0;
    }
  }

  /** The buffered pieces as one buffer (kept as the only piece). */
  private join(): Buffer {
    if (this.chunks.length > 1) this.chunks = [Buffer.concat(this.chunks, this.buffered)];
    return this.chunks[0];
  }
}

/** Writes frames to a socket; false when the socket's buffer is full (wait for 'drain'). */
export function writeFrame(socket: Duplex, writer: FrameWriter, kind: FrameKind, payload: Uint8Array): boolean {
  const parts = writer.frame(kind, payload);
  socket.cork();
  let ok = true;
  for (const p of parts) ok = socket.write(p) && ok;
  socket.uncork();
  return ok;
}
