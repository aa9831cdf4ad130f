import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { OpenAiEmbedder, type OpenAiEmbedderOptions } from '../../src/embedding/openai-embedder';
import { EmbeddingHttpError, EmbeddingResponseError, EmbeddingTransportError } from '../../src/embedding/errors';
import { l2norm } from '../../src/embedding/vector-math';

/** A local server speaking the real protocol; each test scripts how the next requests are answered. */
type Handler = (body: { input: string[]; model: string; dimensions?: number }, req: http.IncomingMessage, res: http.ServerResponse) => void;

const DIMS = 4;
/** The "model": a deterministic vector per text (its length and char codes), deliberately not unit length. */
const fakeVector = (t: string): number[] => [t.length, t.charCodeAt(0) || 1, 3, 4];

const ok: Handler = (body, _req, res) => {
  // Items in reverse order: the client must put them back by `index`.
  const data = body.input.map((t, index) => ({ object: 'embedding', index, embedding: fakeVector(t) })).reverse();
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ object: 'list', data, model: body.model, usage: { prompt_tokens: 1, total_tokens: 1 } }));
};

let server: http.Server;
let baseUrl: string;
let script: Handler[];
let requests: { body: { input: string[]; model: string; dimensions?: number }; auth?: string; path?: string }[];
const clients: OpenAiEmbedder[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
    req.on('end', () => {
      const body = JSON.parse(raw) as { input: string[]; model: string };
      requests.push({ body, auth: req.headers.authorization, path: req.url });
      const h = script.shift() ?? ok;
      if (req.method !== 'POST' || req.url !== '/v1/embeddings') {
        res.writeHead(404).end('{"error":{"message":"not found"}}');
        return;
      }
      h(body, req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  script = [];
  requests = [];
});

afterEach(async () => {
  server.closeAllConnections(); // ends requests a test left hanging on purpose
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

function client(extra: Partial<OpenAiEmbedderOptions> = {}): { e: OpenAiEmbedder; sleeps: number[] } {
  const sleeps: number[] = [];
  const e = new OpenAiEmbedder({
    baseUrl,
    apiKey: 'sk-test',
    model: 'test-embed',
    dimensions: DIMS,
    batchSize: 2,
    timeoutMs: 2000,
    maxRetries: 2,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    random: () => 0.5,
    ...extra,
  });
  clients.push(e);
  return { e, sleeps };
}

describe('OpenAiEmbedder against a local OpenAI-compatible server', () => {
  it('batches, authenticates, restores order by index and normalizes', async () => {
    const { e } = client();
    const texts = ['alpha', 'be', 'gamma', '', 'delta', 'epsilon'];
    const vs = await e.embed(texts);
    expect(requests.map((r) => r.body.input)).toEqual([['alpha', 'be'], ['gamma', 'delta'], ['epsilon']]); // empty text not sent
    expect(requests.every((r) => r.auth === 'Bearer sk-test' && r.body.model === 'test-embed' && r.body.dimensions === undefined)).toBe(true);
    texts.forEach((t, i) => {
      expect(l2norm(vs[i])).toBeCloseTo(1, 5);
      if (t) {
        const f = fakeVector(t);
        const n = Math.hypot(...f);
        expect(Array.from(vs[i]).map((x) => +x.toFixed(5))).toEqual(f.map((x) => +(x / n).toFixed(5)));
      }
    });
    expect(e.id).toContain('test-embed');
    expect(e.dimensions).toBe(DIMS);
  });

  it('sends dimensions when asked to', async () => {
    const { e } = client({ sendDimensions: true });
    await e.embed(['x']);
    expect(requests[0].body.dimensions).toBe(DIMS);
  });

  it('waits as Retry-After says on 429, then succeeds', async () => {
    script.push((_b, _q, res) => res.writeHead(429, { 'retry-after': '1', 'content-type': 'application/json' }).end('{"error":{"message":"Rate limit reached"}}'));
    const { e, sleeps } = client();
    const [v] = await e.embed(['hello']);
    expect(l2norm(v)).toBeCloseTo(1, 5);
    expect(requests).toHaveLength(2);
    expect(sleeps).toEqual([1000]);
  });

  it('retries a 500 with exponential backoff', async () => {
    script.push((_b, _q, res) => res.writeHead(500).end('{"error":{"message":"boom"}}'));
    script.push((_b, _q, res) => res.writeHead(503).end('overloaded'));
    const { e, sleeps } = client({ retryBaseMs: 100 });
    await e.embed(['hello']);
    expect(requests).toHaveLength(3);
    expect(sleeps).toEqual([50, 100]); // random 0.5 of 100 * 2^0, then of 100 * 2^1
  });

  it('gives up after max retries with the last status and the server message', async () => {
    for (let i = 0; i < 3; i++) script.push((_b, _q, res) => res.writeHead(502).end('{"error":{"message":"bad gateway"}}'));
    const { e } = client();
    const err = await e.embed(['hello']).catch((x: unknown) => x);
    expect(err).toBeInstanceOf(EmbeddingHttpError);
    expect((err as EmbeddingHttpError).status).toBe(502);
    expect((err as Error).message).toMatch(/answered 502: bad gateway \(gave up after 3 attempts\)/);
    expect(requests).toHaveLength(3);
  });

  it('does not retry a 400 and reports why', async () => {
    script.push((_b, _q, res) => res.writeHead(400).end('{"error":{"message":"input too long"}}'));
    const { e } = client();
    await expect(e.embed(['hello'])).rejects.toThrow(/answered 400: input too long/);
    expect(requests).toHaveLength(1);
  });

  it('fails at once when Retry-After is longer than it will wait', async () => {
    script.push((_b, _q, res) => res.writeHead(429, { 'retry-after': '3600' }).end('{}'));
    const { e, sleeps } = client();
    await expect(e.embed(['hello'])).rejects.toThrow(/retry after 3600 s/);
    expect(sleeps).toEqual([]);
  });

  it('times out a request that gets no answer, retries, then fails clearly', async () => {
    script.push(() => undefined, () => undefined); // never answer (closed in afterEach)
    const { e } = client({ timeoutMs: 150, maxRetries: 1 });
    const err = await e.embed(['hello']).catch((x: unknown) => x);
    expect(err).toBeInstanceOf(EmbeddingTransportError);
    expect((err as EmbeddingTransportError).code).toBe('embedding_timeout');
    expect((err as Error).message).toMatch(/timed out after 150 ms \(gave up after 2 attempts\)/);
    expect(requests).toHaveLength(2);
  });

  it('recovers when a timed-out request is followed by an answer', async () => {
    script.push(() => undefined);
    const { e } = client({ timeoutMs: 150, maxRetries: 1 });
    const [v] = await e.embed(['hello']);
    expect(l2norm(v)).toBeCloseTo(1, 5);
  });

  it('rejects malformed replies without retrying', async () => {
    const cases: [Handler, RegExp][] = [
      [(_b, _q, res) => res.writeHead(200).end('<html>not json'), /not JSON/],
      [(_b, _q, res) => res.writeHead(200).end('{"data": [{"index": 0, "embedding": [1, 2, 3, 4]}]}'), /1 embeddings for 2 inputs/],
      [(_b, _q, res) => res.writeHead(200).end('{"data": [{"index": 0, "embedding": [1, 2]}, {"index": 1, "embedding": [1, 2]}]}'), /2 dimensions, configured 4/],
      [(_b, _q, res) => res.writeHead(200).end('{"data": [{"index": 0, "embedding": [1,2,3,4]}, {"index": 0, "embedding": [1,2,3,4]}]}'), /appears twice/],
      [(_b, _q, res) => res.writeHead(200).end('{"data": [{"index": 0, "embedding": [0,0,0,0]}, {"index": 1, "embedding": [1,2,3,"x"]}]}'), /all zeros/],
      [(_b, _q, res) => res.writeHead(200).end('{"object": "list"}'), /no "data" array/],
    ];
    for (const [handler, message] of cases) {
      requests = [];
      script.push(handler);
      const { e } = client();
      const err = await e.embed(['a', 'b']).catch((x: unknown) => x);
      expect(err).toBeInstanceOf(EmbeddingResponseError);
      expect((err as Error).message).toMatch(message);
      expect(requests).toHaveLength(1);
    }
  });

  it('accepts base64-encoded vectors', async () => {
    script.push((body, _q, res) => {
      const data = body.input.map((t, index) => ({ index, embedding: Buffer.from(new Float32Array(fakeVector(t)).buffer).toString('base64') }));
      res.writeHead(200).end(JSON.stringify({ data, model: body.model }));
    });
    const { e } = client();
    const [v] = await e.embed(['abc']);
    expect(v[0] * Math.hypot(...fakeVector('abc'))).toBeCloseTo(3, 4);
  });

  it('reports a refused connection as a network error after retries', async () => {
    const probe = http.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const { e, sleeps } = client({ baseUrl: `http://127.0.0.1:${port}/v1`, maxRetries: 2 });
    const err = await e.embed(['hello']).catch((x: unknown) => x);
    expect(err).toBeInstanceOf(EmbeddingTransportError);
    expect((err as EmbeddingTransportError).code).toBe('embedding_network');
    expect(sleeps).toHaveLength(2);
  });

  it('validates its configuration', () => {
    expect(() => new OpenAiEmbedder({ baseUrl: 'not a url', model: 'm', dimensions: 4 })).toThrow(/base_url/);
    expect(() => new OpenAiEmbedder({ baseUrl: 'ftp://x', model: 'm', dimensions: 4 })).toThrow(/http/);
    expect(() => new OpenAiEmbedder({ baseUrl: baseUrl, model: 'm', dimensions: 0 })).toThrow(/dimensions/);
    expect(() => new OpenAiEmbedder({ baseUrl: baseUrl, model: '', dimensions: 4 })).toThrow(/model/);
  });
});
