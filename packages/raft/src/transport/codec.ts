/** Compact binary encoding of message batches for the wire (numbers as float64, bytes length-prefixed). */
import { invariant } from '../core/assert';
import { MsgType, type Entry, type Message } from '../core/types';

export interface GroupMessage {
  group: number;
  msg: Message;
}

class Writer {
  buf = Buffer.allocUnsafe(1024);
  pos = 0;
  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const nb = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(nb, 0, 0, this.pos);
    this.buf = nb;
  }
  u8(v: number): void {
    this.ensure(1);
    this.buf[this.pos++] = v;
  }
  u32(v: number): void {
    this.ensure(4);
    this.buf.writeUInt32LE(v, this.pos);
    this.pos += 4;
  }
  num(v: number): void {
    this.ensure(8);
    this.buf.writeDoubleLE(v, this.pos);
    this.pos += 8;
  }
  bytes(b: Uint8Array): void {
    this.u32(b.byteLength);
    this.ensure(b.byteLength);
    this.buf.set(b, this.pos);
    this.pos += b.byteLength;
  }
  done(): Buffer {
    return this.buf.subarray(0, this.pos);
  }
}

class Reader {
  pos = 0;
  constructor(private readonly buf: Buffer) {}
  private need(n: number): void {
    if (this.pos + n > this.buf.length) throw new Error('truncated message batch');
  }
  u8(): number {
    this.need(1);
    return this.buf[this.pos++];
  }
  u32(): number {
    this.need(4);
    const v = this.buf.readUInt32LE(this.pos);
    this.pos += 4;
    return v;
  }
  num(): number {
    this.need(8);
    const v = this.buf.readDoubleLE(this.pos);
    this.pos += 8;
    return v;
  }
  bytes(): Buffer {
    const n = this.u32();
    this.need(n);
    const b = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }
}

const F_REJECT = 1;
const F_FORCE = 2;
const F_ENTRIES = 4;
const F_SNAP = 8;

export function encodeBatch(msgs: GroupMessage[]): Buffer {
  const w = new Writer();
  w.u32(msgs.length);
  for (const { group, msg: m } of msgs) {
    w.u32(group);
    w.u8(m.type);
    w.u8((m.reject ? F_REJECT : 0) | (m.force ? F_FORCE : 0) | (m.entries ? F_ENTRIES : 0) | (m.snap ? F_SNAP : 0));
    w.num(m.from);
    w.num(m.to);
    w.num(m.term);
    w.num(m.index ?? -1);
    w.num(m.logTerm ?? -1);
    w.num(m.commit ?? -1);
    w.num(m.hintIndex ?? -1);
    w.num(m.hintTerm ?? -1);
    w.num(m.ctx ?? -1);
    w.num(m.snapOffset ?? -1);
    if (m.entries) {
      w.u32(m.entries.length);
      for (const e of m.entries) {
        w.num(e.index);
        w.num(e.term);
        w.u8(e.type);
        w.bytes(e.data);
      }
    }
    if (m.snap) {
      // The driver fills a chunk's bytes from its snapshot file before sending (the core leaves them out).
      invariant(m.snap.data !== undefined && m.snap.data.byteLength === m.snap.length, 'a Snap message is sent with exactly its chunk of bytes');
      w.bytes(Buffer.from(JSON.stringify(m.snap.meta)));
      w.num(m.snap.offset);
      w.num(m.snap.total);
      w.bytes(m.snap.data);
    }
  }
  return w.done();
}

const opt = (v: number): number | undefined => (v === -1 ? undefined : v);

export function decodeBatch(buf: Buffer): GroupMessage[] {
  const r = new Reader(buf);
  const n = r.u32();
  const out: GroupMessage[] = [];
  for (let i = 0; i < n; i++) {
    const group = r.u32();
    const type = r.u8() as MsgType;
    if (!(type in MsgType)) throw new Error(`unknown message type ${type}`);
    const flags = r.u8();
    const m: Message = { type, from: r.num(), to: r.num(), term: r.num() };
    const index = opt(r.num());
    const logTerm = opt(r.num());
    const commit = opt(r.num());
    const hintIndex = opt(r.num());
    const hintTerm = opt(r.num());
    const ctx = opt(r.num());
    const snapOffset = opt(r.num());
    if (index !== undefined) m.index = index;
    if (logTerm !== undefined) m.logTerm = logTerm;
    if (commit !== undefined) m.commit = commit;
    if (hintIndex !== undefined) m.hintIndex = hintIndex;
    if (hintTerm !== undefined) m.hintTerm = hintTerm;
    if (ctx !== undefined) m.ctx = ctx;
    if (snapOffset !== undefined) m.snapOffset = snapOffset;
    if (flags & F_REJECT) m.reject = true;
    if (flags & F_FORCE) m.force = true;
    if (flags & F_ENTRIES) {
      const k = r.u32();
      const ents: Entry[] = new Array(k);
      for (let j = 0; j < k; j++) ents[j] = { index: r.num(), term: r.num(), type: r.u8(), data: r.bytes() };
      m.entries = ents;
    }
    if (flags & F_SNAP) {
      const meta = JSON.parse(r.bytes().toString());
      const offset = r.num();
      const total = r.num();
      const data = r.bytes();
      m.snap = { meta, offset, total, length: data.byteLength, data };
    }
    out.push({ group, msg: m });
  }
  return out;
}
