/**
 * Peer RPC authentication over real HTTP on loopback: the signature, timestamp and nonce are checked
 * from the headers before any body byte is read; replays, forgeries and stale requests get 401;
 * signed bodies in flight are capped (503).
 */
import type http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { MsgType } from '../src/core/types';
import { encodeBatch, type GroupMessage } from '../src/transport/codec';
import { bodyDigest, HttpTransport, signedHeaders, startRaftServer } from '../src/transport/http';
import { ReplayGuard } from '../src/transport/replay';
import { FrameError, FrameKind, FrameReader, FrameWriter, STREAM_PROTOCOL, streamKey } from '../src/transport/stream';

const SECRET = 'transport-test-secret';
const PATH = '/raft/msgs';
const batch = (term: number): Buffer => encodeBatch([{ group: 0, msg: { type: MsgType.Heartbeat, from: 2, to: 1, term, commit: 0 } }]);

let nonce = 0;
/** Headers of a correctly signed request for `body`, with `over` replacing fields before signing. */
function headersFor(body: Buffer, over: Partial<{ ts: number; nonce: string; from: number }> = {}): Record<string, string> {
  return signedHeaders(SECRET, {
    method: 'POST', path: PATH, from: 2, fromUrl: 'http://127.0.0.1:1', ts: Date.now(), nonce: `abc.${++nonce}`, digest: bodyDigest(body), ...over,
  });
}

async function post(url: string, body: Buffer, headers: Record<string, string>): Promise<{ status: number; retryAfter: unknown }> {
  const res = await request(`${url}${PATH}`, { method: 'POST', body, headers: { 'content-type': 'application/octet-stream', ...headers } });
  await res.body.dump();
  return { status: res.statusCode, retryAfter: res.headers['retry-after'] };
}

/** Writes raw bytes on a fresh connection; resolves with everything the server sent once it closes. */
function raw(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(text));
    let got = '';
    socket.on('data', (c) => (got += c.toString()));
    socket.on('close', () => resolve(got));
    socket.on('error', reject);
  });
}

describe('HTTP transport: signed peer requests', () => {
  let received: GroupMessage[][];
  let transport: HttpTransport;
  let server: http.Server;
  let url: string;
  let port: number;

  beforeEach(async () => {
    received = [];
    transport = new HttpTransport({ nodeId: 1, selfUrl: 'http://127.0.0.1:1', secret: SECRET, maxInflightBytes: 1000 });
    transport.setHandler((_from, _url, msgs) => received.push(msgs));
    server = await startRaftServer(transport, 0);
    port = (server.address() as AddressInfo).port;
    url = `http://127.0.0.1:${port}`;
  });
  afterEach(async () => {
    server.closeAllConnections();
    await transport.close(); // ends the inbound streams, which the server's close waits for
    await new Promise((r) => server.close(r));
  });

  test('a batch sent by another transport with the same secret is delivered', async () => {
    const sender = new HttpTransport({ nodeId: 2, selfUrl: 'http://127.0.0.1:2', secret: SECRET });
    sender.send(1, url, [{ group: 0, msg: { type: MsgType.Heartbeat, from: 2, to: 1, term: 3, commit: 0 } }]);
    while (received.length === 0) await new Promise((r) => setTimeout(r, 10));
    expect(received[0][0].msg.term).toBe(3);
    await sender.close();
  });

  test('an unsigned request declaring a huge body is answered 401 at once, without waiting for the body', async () => {
    // 1 GiB declared, nothing sent: an answer can only come from the headers alone.
    const answer = await raw(port, `POST ${PATH} HTTP/1.1\r\nHost: x\r\nContent-Length: ${1 << 30}\r\nx-raft-from: 2\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 401/);
    expect(transport.stats.rejected).toBe(1);
  });

  test('a signed request declaring more than 64 MiB is answered 413 without reading it', async () => {
    const headers = headersFor(Buffer.alloc(0));
    const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
    const answer = await raw(port, `POST ${PATH} HTTP/1.1\r\nHost: x\r\nContent-Length: ${65 << 20}\r\n${lines}\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 413/);
  });

  test('a tampered body or header is refused with 401', async () => {
    const body = batch(5);
    const headers = headersFor(body);
    expect((await post(url, batch(6), headers)).status).toBe(401); // same length, other bytes
    expect((await post(url, body, { ...headersFor(body), 'x-raft-from': '3' })).status).toBe(401);
    expect((await post(url, body, { ...headersFor(body), 'x-raft-sig': '0'.repeat(64) })).status).toBe(401);
    expect(received).toHaveLength(0);
  });

  test('the exact same request replayed is refused with 401', async () => {
    const body = batch(7);
    const headers = headersFor(body);
    expect((await post(url, body, headers)).status).toBe(204);
    expect((await post(url, body, headers)).status).toBe(401);
    expect(received).toHaveLength(1);
  });

  test('a timestamp outside the allowed clock skew (30 s) is refused with 401', async () => {
    const body = batch(8);
    expect((await post(url, body, headersFor(body, { ts: Date.now() - 31_000 }))).status).toBe(401);
    expect((await post(url, body, headersFor(body, { ts: Date.now() + 31_000 }))).status).toBe(401);
    expect((await post(url, body, headersFor(body, { ts: Date.now() + 5_000 }))).status).toBe(204);
  });

  test('a request signed before the receiving process started is refused (no replay across a restart)', async () => {
    const body = batch(9);
    const old = headersFor(body, { ts: Date.now() - 10_000 }); // captured earlier, still within the skew
    expect((await post(url, body, old)).status).toBe(401);
  });

  test('signed bodies beyond the in-flight cap get 503 with Retry-After; once drained, requests pass again', async () => {
    // A holds 800 of the 1000 bytes: it declares 800 and sends only half.
    const slow = Buffer.alloc(800, 1);
    const lines = Object.entries(headersFor(slow)).map(([k, v]) => `${k}: ${v}\r\n`).join('');
    const socket = net.connect(port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    socket.write(`POST ${PATH} HTTP/1.1\r\nHost: x\r\nContent-Length: 800\r\n${lines}\r\n`);
    socket.write(slow.subarray(0, 400));
    let answerA = '';
    socket.on('data', (c) => (answerA += c.toString()));
    const closedA = new Promise((r) => socket.once('close', r));
    // wait until the server has taken A's reservation (its first body bytes arrived)
    const filler = Buffer.alloc(400, 2);
    let b = await post(url, filler, headersFor(filler));
    while (b.status !== 503) b = await post(url, filler, headersFor(filler));
    expect(b.status).toBe(503);
    expect(b.retryAfter).toBe('1');
    expect(transport.stats.busy).toBeGreaterThan(0);
    socket.end(slow.subarray(400)); // A completes (its bytes are not a valid batch: 400), freeing its reservation
    await closedA;
    expect(answerA).toMatch(/^HTTP\/1\.1 400/);
    expect((await post(url, batch(10), headersFor(batch(10)))).status).toBe(204);
  });
});

const STREAM_PATH = '/raft/stream';
const EMPTY = bodyDigest(Buffer.alloc(0));

/** Opens a peer stream by hand (signed as node 2); resolves once the server answered, with its status line. */
function upgrade(port: number, over: Partial<{ nonce: string; digest: string; sigFrom: number }> = {}): Promise<{ socket: net.Socket; status: string; key: Buffer; nonce: string }> {
  const nonce = over.nonce ?? `abc.${++nonce_}`;
  const h = signedHeaders(SECRET, { method: 'GET', path: STREAM_PATH, from: over.sigFrom ?? 2, fromUrl: 'http://127.0.0.1:1', ts: Date.now(), nonce, digest: over.digest ?? EMPTY });
  const lines = Object.entries(h).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(`GET ${STREAM_PATH} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: ${STREAM_PROTOCOL}\r\n${lines}\r\n`));
    socket.once('data', (c) => resolve({ socket, status: c.toString().split('\r\n')[0], key: streamKey(SECRET, nonce, 2, 'out'), nonce }));
    socket.once('error', reject);
  });
}
let nonce_ = 1_000_000;

const heartbeat = (term: number): GroupMessage[] => [{ group: 0, msg: { type: MsgType.Heartbeat, from: 2, to: 1, term, commit: 0 } }];
const closed = (socket: net.Socket) => new Promise<void>((r) => (socket.destroyed ? r() : socket.once('close', () => r())));

describe('HTTP transport: peer streams', () => {
  let received: GroupMessage[][];
  let transport: HttpTransport;
  let server: http.Server;
  let port: number;
  let upgrades: number;

  beforeEach(async () => {
    received = [];
    upgrades = 0;
    transport = new HttpTransport({ nodeId: 1, selfUrl: 'http://127.0.0.1:1', secret: SECRET });
    transport.setHandler((_from, _url, msgs) => received.push(msgs));
    server = await startRaftServer(transport, 0);
    server.on('upgrade', () => upgrades++);
    port = (server.address() as AddressInfo).port;
  });
  afterEach(async () => {
    server.closeAllConnections();
    await transport.close();
    await new Promise((r) => server.close(r));
  });

  const until = async (what: () => boolean) => {
    while (!what()) await new Promise((r) => setTimeout(r, 5));
  };

  test('a sender opens one stream and, once open, delivers every batch over it in order, its round trip measured by ping', async () => {
    const rtts: number[] = [];
    const sender = new HttpTransport({ nodeId: 2, selfUrl: 'http://127.0.0.1:2', secret: SECRET, onRoundTrip: (_peer, s) => rtts.push(s) });
    const url = `http://127.0.0.1:${port}`;
    sender.send(1, url, heartbeat(1)); // goes by POST while the stream opens
    // the stream is open once its first ping came back (sent as the stream attached)
    await until(() => received.length === 1 && rtts.length > 0);
    const postsBefore = transport.stats.requestsReceived;
    for (let t = 2; t <= 50; t++) {
      sender.send(1, url, heartbeat(t));
      if (t % 10 === 0) await new Promise((r) => setImmediate(r));
    }
    await until(() => received.flat().length === 50);
    expect(received.flat().map((m) => m.msg.term)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(upgrades).toBe(1);
    expect(transport.stats.requestsReceived).toBeGreaterThan(postsBefore); // frames counted as requests
    await sender.close();
  });

  test('an unsigned or wrongly signed upgrade is refused with 401 and closed; a replayed one too', async () => {
    expect((await upgrade(port, { digest: bodyDigest(Buffer.from('x')) })).status).toBe('HTTP/1.1 401 Unauthorized');
    const ok = await upgrade(port, { nonce: 'fe.7' });
    expect(ok.status).toBe('HTTP/1.1 101 Switching Protocols');
    expect((await upgrade(port, { nonce: 'fe.7' })).status).toBe('HTTP/1.1 401 Unauthorized');
    ok.socket.destroy();
    expect(transport.stats.rejected).toBe(2);
  });

  test('authenticated frames are delivered; a tampered or replayed frame closes the stream and delivers nothing', async () => {
    const s = await upgrade(port);
    expect(s.status).toBe('HTTP/1.1 101 Switching Protocols');
    const writer = new FrameWriter(s.key);
    const frame = (term: number) => Buffer.concat(writer.frame(FrameKind.Messages, encodeBatch(heartbeat(term))));
    s.socket.write(frame(7));
    await until(() => received.length === 1);
    expect(received[0][0].msg.term).toBe(7);
    // the same bytes again: its MAC was for sequence 0, the reader expects 1
    const replay = new FrameWriter(s.key);
    s.socket.write(Buffer.concat(replay.frame(FrameKind.Messages, encodeBatch(heartbeat(8)))));
    await closed(s.socket);
    expect(received.length).toBe(1);

    const t = await upgrade(port);
    const w2 = new FrameWriter(t.key);
    const bad = Buffer.concat(w2.frame(FrameKind.Messages, encodeBatch(heartbeat(9))));
    bad[10] ^= 1; // one payload bit
    t.socket.write(bad);
    await closed(t.socket);
    expect(received.length).toBe(1);
  });

  test('a frame declaring more than 64 MiB closes the stream before its bytes are read', async () => {
    const s = await upgrade(port);
    const head = Buffer.alloc(5);
    head.writeUInt32BE((64 << 20) + 1, 0);
    s.socket.write(head);
    await closed(s.socket);
    expect(received).toEqual([]);
  });

  test('a peer that serves no streams still gets every batch, by POST', async () => {
    const plain = await startRaftServer({ handle: transport.handle, handleUpgrade: (_req, socket) => socket.destroy() }, 0);
    const sender = new HttpTransport({ nodeId: 2, selfUrl: 'http://127.0.0.1:2', secret: SECRET });
    const url = `http://127.0.0.1:${(plain.address() as AddressInfo).port}`;
    for (let t = 1; t <= 5; t++) {
      sender.send(1, url, heartbeat(t));
      await until(() => received.length === t);
    }
    expect(received.flat().map((m) => m.msg.term)).toEqual([1, 2, 3, 4, 5]);
    await sender.close();
    plain.closeAllConnections();
    await new Promise((r) => plain.close(r));
  });
});

describe('stream frames', () => {
  const key = streamKey(SECRET, 'n.1', 2, 'out');
  const frames = (): Buffer => {
    const w = new FrameWriter(key);
    return Buffer.concat([0, 300, 5].flatMap((size, i) => w.frame(FrameKind.Messages, Buffer.alloc(size, i + 1))));
  };

  test('frames read the same whatever pieces the bytes arrive in, one byte at a time included', () => {
    const whole = new FrameReader(key, 1024).push(frames());
    expect(whole.map((f) => [f.kind, f.payload.length, f.payload[0]])).toEqual([[0, 0, undefined], [0, 300, 2], [0, 5, 3]]);
    const bytes = frames();
    const reader = new FrameReader(key, 1024);
    const piecewise = [];
    for (let i = 0; i < bytes.length; i++) piecewise.push(...reader.push(bytes.subarray(i, i + 1)));
    expect(piecewise.map((f) => Buffer.from(f.payload))).toEqual(whole.map((f) => Buffer.from(f.payload)));
  });

  test('a frame under another key, or over the size bound, is refused', () => {
    expect(() => new FrameReader(streamKey(SECRET, 'n.2', 2, 'out'), 1024).push(frames())).toThrow(FrameError);
    expect(() => new FrameReader(key, 100).push(frames())).toThrow(FrameError);
  });
});

describe('ReplayGuard', () => {
  test('accepts each sequence number once, out of order within the window, never far behind', () => {
    const g = new ReplayGuard(60_000, 8);
    expect(g.accept('2/a', 1, 0)).toBe(true);
    expect(g.accept('2/a', 3, 0)).toBe(true);
    expect(g.accept('2/a', 2, 0)).toBe(true); // late but inside the window
    expect(g.accept('2/a', 2, 0)).toBe(false);
    expect(g.accept('2/b', 2, 0)).toBe(true); // another boot of the sender
    expect(g.accept('2/a', 20, 0)).toBe(true);
    expect(g.accept('2/a', 3, 0)).toBe(false); // fell out of the window
    expect(g.accept('2/a', 13, 0)).toBe(true);
    expect(g.accept('2/a', 12, 0)).toBe(false); // 20 - 8: out of the window
  });

  test('forgets senders silent for longer than its ttl', () => {
    const g = new ReplayGuard(1000, 8);
    g.accept('old/a', 1, 0);
    for (let i = 1; i <= 1024; i++) g.accept('live/b', i, 5000);
    expect(g.size).toBe(1);
  });
});
