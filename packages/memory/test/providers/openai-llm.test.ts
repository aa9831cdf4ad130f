import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { OpenAiLlm } from '../../src/providers/openai-llm';
import { planConsolidation } from '../../src/consolidation';
import { HashEmbedder } from '../consolidation/hash-embedder';
import { MemoryFixture, counter, event } from '../consolidation/fixtures';

type Handler = (req: { method: string; url: string; headers: http.IncomingHttpHeaders; body: Record<string, unknown> }) => { status: number; body: string; headers?: Record<string, string> };

/** A local OpenAI-compatible endpoint on 127.0.0.1 that answers from a queue of handlers. */
async function server(handlers: Handler[]): Promise<{ baseUrl: string; requests: { url: string; body: Record<string, unknown>; headers: http.IncomingHttpHeaders }[]; sockets: Set<unknown>; close: () => Promise<void> }> {
  const requests: { url: string; body: Record<string, unknown>; headers: http.IncomingHttpHeaders }[] = [];
  const sockets = new Set<unknown>();
  let i = 0;
  const srv = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => { raw += c; });
    req.on('end', () => {
      const body = raw ? JSON.parse(raw) : {};
      requests.push({ url: req.url ?? '', body, headers: req.headers });
      const h = handlers[Math.min(i++, handlers.length - 1)];
      const out = h({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      res.writeHead(out.status, { 'content-type': 'application/json', ...out.headers });
      res.end(out.body);
    });
  });
  srv.on('connection', (s) => sockets.add(s));
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`, requests, sockets,
    close: () => new Promise<void>((r) => { srv.closeAllConnections(); srv.close(() => r()); }),
  };
}

const reply = (content: string): ReturnType<Handler> => ({ status: 200, body: JSON.stringify({ id: 'c1', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }] }) });

describe('OpenAiLlm against a local /v1/chat/completions', () => {
  const waits: number[] = [];
  const fast = { sleep: async (ms: number) => { waits.push(ms); }, random: () => 0.5 };
  beforeEach(() => { waits.length = 0; });

  it('speaks the protocol: POST /v1/chat/completions with model, messages, bearer key, JSON mode; reuses the connection', async () => {
    const s = await server([() => reply('hello'), () => reply('again')]);
    const llm = new OpenAiLlm({ baseUrl: s.baseUrl, model: 'm1', apiKey: 'sk-test', connections: 1, ...fast });
    try {
      expect(await llm.complete([{ role: 'user', content: 'hi' }], { json: true, maxTokens: 50 })).toBe('hello');
      expect(await llm.complete([{ role: 'user', content: 'hi' }])).toBe('again');
      expect(s.requests[0].url).toBe('/v1/chat/completions');
      expect(s.requests[0].headers.authorization).toBe('Bearer sk-test');
      expect(s.requests[0].body).toEqual({ model: 'm1', messages: [{ role: 'user', content: 'hi' }], max_tokens: 50, temperature: 0, response_format: { type: 'json_object' } });
      expect(s.requests[1].body.response_format).toBeUndefined();
      expect(s.sockets.size).toBe(1); // keep-alive: both requests on one connection (a pool of one makes this exact)
      expect(s.requests[1].headers.connection).toBe('keep-alive');
      expect(llm.id).toBe('openai-compatible:m1');
    } finally {
      await llm.close();
      await s.close();
    }
  });

  it('retries 429 and 5xx with exponential backoff (Retry-After honoured), then succeeds', async () => {
    const s = await server([
      () => ({ status: 429, body: '{"error":"slow down"}', headers: { 'retry-after': '2' } }),
      () => ({ status: 503, body: '{"error":"busy"}' }),
      () => ({ status: 500, body: 'oops' }),
      () => reply('ok at last'),
    ]);
    const llm = new OpenAiLlm({ baseUrl: s.baseUrl, model: 'm', backoffMs: 100, maxRetries: 3, ...fast });
    try {
      expect(await llm.complete([{ role: 'user', content: 'x' }])).toBe('ok at last');
      // attempt 1: max(Retry-After 2000, jittered 75); attempt 2: 150 (200 jittered at 0.5); attempt 3: 300.
      expect(waits).toEqual([2000, 150, 300]);
      expect(s.requests).toHaveLength(4);
    } finally {
      await llm.close();
      await s.close();
    }
  });

  it('gives up after maxRetries, and does not retry a 400', async () => {
    const s = await server([() => ({ status: 502, body: 'bad gateway' })]);
    const llm = new OpenAiLlm({ baseUrl: s.baseUrl, model: 'm', maxRetries: 2, ...fast });
    await expect(llm.complete([{ role: 'user', content: 'x' }])).rejects.toThrow('answered 502');
    expect(s.requests).toHaveLength(3);
    await llm.close();
    await s.close();
    const s2 = await server([() => ({ status: 400, body: '{"error":"bad model"}' })]);
    const llm2 = new OpenAiLlm({ baseUrl: s2.baseUrl, model: 'm', maxRetries: 5, ...fast });
    await expect(llm2.complete([{ role: 'user', content: 'x' }])).rejects.toThrow('answered 400');
    expect(s2.requests).toHaveLength(1);
    await llm2.close();
    await s2.close();
  });

  it('times out a request that never answers', async () => {
    const srv = http.createServer(() => { /* never answers */ });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const llm = new OpenAiLlm({ baseUrl: `http://127.0.0.1:${(srv.address() as AddressInfo).port}/v1`, model: 'm', timeoutMs: 200, maxRetries: 0, ...fast });
    await expect(llm.complete([{ role: 'user', content: 'x' }])).rejects.toThrow();
    await llm.close();
    srv.closeAllConnections();
    await new Promise<void>((r) => srv.close(() => r()));
  });

  it('a 200 without choices is an error', async () => {
    const s = await server([() => ({ status: 200, body: '{"id":"x"}' })]);
    const llm = new OpenAiLlm({ baseUrl: s.baseUrl, model: 'm', ...fast });
    await expect(llm.complete([{ role: 'user', content: 'x' }])).rejects.toThrow('no choices');
    await llm.close();
    await s.close();
  });

  it('consolidation uses its JSON facts, and falls back offline on a malformed reply', async () => {
    const good = JSON.stringify({ facts: [{ event: 0, statement: 'I live in Lisbon.', memory_type: 'factual', keywords: ['lisbon'], subject: 'user', attribute: 'residence', value: 'Lisbon' }], noise: [{ event: 1, reason: 'thanks' }] });
    const s = await server([() => reply(good), () => reply('I think the facts are: Lisbon')]);
    const llm = new OpenAiLlm({ baseUrl: s.baseUrl, model: 'm', ...fast });
    const mem = new MemoryFixture();
    const input = (events: ReturnType<typeof event>[]) => ({
      events, now: '2023-05-08T14:00:00.000Z', newId: counter(), embedder: new HashEmbedder(), llm,
      findSimilar: mem.findSimilar, findBySubjectAttribute: mem.findBySubjectAttribute,
    });
    try {
      const a = await planConsolidation(input([event('so I am living in Lisbon these days', { event_id: 'x1' }), event('thx', { event_id: 'x2' })]));
      expect(a.method).toBe('llm');
      expect(a.units.map((u) => [u.unit.content, u.unit.attribute])).toEqual([['I live in Lisbon.', 'residence']]);
      expect(a.dropped).toEqual([{ event_id: 'x2', reason: 'noise (llm): thanks' }]);
      const b = await planConsolidation(input([event('I play the cello.', { event_id: 'y1' })]));
      expect(b.method).toBe('offline');
      expect(b.units.map((u) => u.unit.content)).toEqual(['I play the cello.']);
      expect(String((s.requests[1].body.messages as { content: string }[])[1].content)).toContain('[0] (speaker: user, type: text');
    } finally {
      await llm.close();
      await s.close();
    }
  });
});
