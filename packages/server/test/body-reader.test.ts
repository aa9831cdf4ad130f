/**
 * The JSON body reader (http/body.ts) against body-parser, which it replaced (issue 27): for every input
 * below, the reader and body-parser (wrapped as app.ts used it before) give the same body or the same
 * refusal, and a refused request leaves the connection usable.
 */
import { createServer, request, Agent, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import express, { type Request, type Response } from 'express';
import { StrataError } from '@strata/store';
import { jsonBodyReader } from '../src/http/body';
import { MAX_JSON_DEPTH, jsonDeeperThan } from '../src/validation';

const LIMIT = 1000;

/** The reader as it was, over body-parser (the reference). */
function bodyParserReader(limit: number): (req: Request, res: Response) => Promise<void> {
  const parse = express.json({
    limit, type: () => true,
    verify: (_req: unknown, _res: unknown, buf: Buffer) => {
      if (jsonDeeperThan(buf, MAX_JSON_DEPTH)) throw Object.assign(new Error('JSON nested too deep'), { type: 'json.too.deep' });
    },
  });
  return (req, res) => new Promise<void>((resolve, reject) => {
    if (!['POST', 'PUT', 'PATCH', 'DELETE'].includes(req.method) || !(req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0)) return resolve();
    if (!req.is('application/json') && !req.is('application/*+json')) return reject(new StrataError('unsupported_media_type', 'x'));
    const m = /;\s*charset\s*=\s*("?)([^";\s]*)\1/i.exec(req.headers['content-type'] ?? '');
    const charset = m ? m[2].toLowerCase() : null;
    if (charset !== null && charset !== 'utf-8' && charset !== 'utf8') return reject(new StrataError('unsupported_media_type', 'x'));
    parse(req, res, (err?: unknown) => {
      if (!err) return resolve();
      const type = (err as { type?: string }).type;
      const code = ({
        'entity.parse.failed': 'invalid_json', 'json.too.deep': 'json_too_deep', 'entity.too.large': 'payload_too_large',
        'encoding.unsupported': 'unsupported_media_type', 'charset.unsupported': 'unsupported_media_type',
        'request.aborted': 'invalid_request', 'request.size.invalid': 'invalid_request',
      } as Record<string, string>)[type ?? ''] ?? (String(req.headers['content-encoding'] ?? 'identity').toLowerCase() !== 'identity' ? 'invalid_body_encoding' : 'bug');
      reject(new StrataError(code as 'invalid_json', 'x'));
    });
  });
}

interface Input { name: string; headers: Record<string, string>; body?: Buffer | Buffer[]; method?: string }

const json = (s: string) => Buffer.from(s);
const CT = { 'content-type': 'application/json' };
const nested = (n: number) => '['.repeat(n) + ']'.repeat(n);

const INPUTS: Input[] = [
  { name: 'an object', headers: CT, body: json('{"a":1,"b":"é"}') },
  { name: 'an array', headers: CT, body: json('[1,2]') },
  { name: 'a BOM first', headers: CT, body: json('\ufeff{"a":1}') },
  { name: 'two BOMs', headers: CT, body: json('\ufeff\ufeff{"a":1}') },
  { name: 'whitespace around', headers: CT, body: json(' \r\n\t{"a":1} \n') },
  { name: 'whitespace only', headers: CT, body: json('   ') },
  { name: 'a string', headers: CT, body: json('"text"') },
  { name: 'a number', headers: CT, body: json('12') },
  { name: 'null', headers: CT, body: json('null') },
  { name: 'broken JSON', headers: CT, body: json('{"a":') },
  { name: 'trailing junk', headers: CT, body: json('{"a":1} x') },
  { name: 'bad UTF-8 in a string', headers: CT, body: Buffer.concat([json('{"a":"'), Buffer.from([0xff, 0xc3]), json('"}')]) },
  { name: 'chunked, empty', headers: { ...CT, 'transfer-encoding': 'chunked' }, body: [] },
  { name: 'chunked, three chunks', headers: { ...CT, 'transfer-encoding': 'chunked' }, body: [json('{"a"'), json(':'), json('[1]}')] },
  { name: 'content-length 0', headers: { ...CT, 'content-length': '0' }, body: Buffer.alloc(0) },
  { name: 'a GET with a body', method: 'GET', headers: CT, body: json('{"a":1}') },
  { name: 'a DELETE with a body', method: 'DELETE', headers: CT, body: json('{"a":1}') },
  { name: 'gzip', headers: { ...CT, 'content-encoding': 'gzip' }, body: gzipSync('{"z":1}') },
  { name: 'GZIP in capitals', headers: { ...CT, 'content-encoding': 'GZIP' }, body: gzipSync('{"z":1}') },
  { name: 'deflate', headers: { ...CT, 'content-encoding': 'deflate' }, body: deflateSync('{"z":2}') },
  { name: 'br', headers: { ...CT, 'content-encoding': 'br' }, body: brotliCompressSync('{"z":3}') },
  { name: 'x-gzip', headers: { ...CT, 'content-encoding': 'x-gzip' }, body: gzipSync('{"z":1}') },
  { name: 'identity', headers: { ...CT, 'content-encoding': 'identity' }, body: json('{"i":1}') },
  { name: 'an unknown encoding', headers: { ...CT, 'content-encoding': 'compress' }, body: json('{"z":1}') },
  { name: 'gzip that is not', headers: { ...CT, 'content-encoding': 'gzip' }, body: json('{"z":1}') },
  { name: 'gzip cut short', headers: { ...CT, 'content-encoding': 'gzip' }, body: gzipSync('{"z":"' + 'q'.repeat(200) + '"}').subarray(0, 20) },
  { name: 'gzip inflating past the limit', headers: { ...CT, 'content-encoding': 'gzip' }, body: gzipSync(`{"a":"${'x'.repeat(5000)}"}`) },
  { name: 'gzip of exactly the limit', headers: { ...CT, 'content-encoding': 'gzip' }, body: gzipSync(`{"a":"${'x'.repeat(LIMIT - 8)}"}`) },
  { name: 'over the limit, declared', headers: CT, body: json(`{"a":"${'x'.repeat(5000)}"}`) },
  { name: 'exactly the limit', headers: CT, body: json(`{"a":"${'x'.repeat(LIMIT - 8)}"}`) },
  { name: 'over the limit, chunked', headers: { ...CT, 'transfer-encoding': 'chunked' }, body: [json('{"a":"'), json('x'.repeat(700)), json('x'.repeat(700)), json('"}')] },
  { name: 'too deep', headers: CT, body: json(nested(MAX_JSON_DEPTH + 1)) },
  { name: 'deep enough', headers: CT, body: json(nested(MAX_JSON_DEPTH)) },
  { name: 'too deep in gzip', headers: { ...CT, 'content-encoding': 'gzip' }, body: gzipSync(nested(MAX_JSON_DEPTH + 1)) },
  { name: 'text/plain', headers: { 'content-type': 'text/plain' }, body: json('{"a":1}') },
  { name: 'no content type', headers: {}, body: json('{"a":1}') },
  { name: 'a +json type', headers: { 'content-type': 'application/vnd.strata+json' }, body: json('{"a":1}') },
  { name: 'JSON in capitals', headers: { 'content-type': 'APPLICATION/JSON' }, body: json('{"a":1}') },
  { name: 'charset=utf-8', headers: { 'content-type': 'application/json; charset=utf-8' }, body: json('{"a":1}') },
  { name: 'charset=UTF-8 quoted', headers: { 'content-type': 'application/json; charset="UTF-8"' }, body: json('{"a":1}') },
  { name: 'charset=utf8', headers: { 'content-type': 'application/json;charset=utf8' }, body: json('{"a":1}') },
  { name: 'charset=latin1', headers: { 'content-type': 'application/json; charset=latin1' }, body: json('{"a":1}') },
  { name: 'charset=utf-16', headers: { 'content-type': 'application/json; charset=utf-16' }, body: json('{"a":1}') },
  { name: 'a malformed parameter', headers: { 'content-type': 'application/json; charset' }, body: json('{"a":1}') },
  { name: 'another parameter', headers: { 'content-type': 'application/json; v=1' }, body: json('{"a":1}') },
];

type Outcome = { status: number; answer: unknown };

describe('the JSON body reader', () => {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const app = express();
  const reference = bodyParserReader(LIMIT);
  const reader = jsonBodyReader(LIMIT);
  const outcomes: Record<string, unknown[]> = { old: [], new: [] };
  for (const [path, read] of [['/old', reference], ['/new', reader]] as const) {
    app.all(path, (req, res) => {
      read(req, res).then(
        () => {
          outcomes[path.slice(1)].push({ body: req.body as unknown });
          res.json({ body: req.body as unknown, present: req.body !== undefined });
        },
        (err: unknown) => {
          const code = err instanceof StrataError ? err.code : `not a StrataError: ${String(err)}`;
          outcomes[path.slice(1)].push({ code });
          res.status(400).json({ code });
        },
      );
    });
  }
  const server = createServer(app);
  const port = () => (server.address() as AddressInfo).port;

  beforeAll(() => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve)));

  afterAll(() => {
    agent.destroy();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });

  function send(path: string, input: Input): Promise<Outcome & { headers: IncomingHttpHeaders }> {
    return new Promise((resolve, reject) => {
      const chunks = input.body === undefined ? [] : Array.isArray(input.body) ? input.body : [input.body];
      const headers = { ...input.headers };
      if (!Array.isArray(input.body) && input.body !== undefined && headers['content-length'] === undefined) headers['content-length'] = String(input.body.length);
      const req = request({ host: '127.0.0.1', port: port(), path, method: input.method ?? 'POST', headers, agent }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c)).on('end', () => resolve({ status: res.statusCode ?? 0, answer: JSON.parse(text) as unknown, headers: res.headers }));
      });
      req.on('error', reject);
      for (const c of chunks) req.write(c);
      req.end();
    });
  }

  it.each(INPUTS.map((i) => [i.name, i] as const))('answers %s as body-parser did', async (_name, input) => {
    const before = await send('/old', input);
    const after = await send('/new', input);
    expect(after.answer).toEqual(before.answer);
    expect(after.status).toBe(before.status);
    // the connection still serves the next request once a refusal is answered
    const next = await send('/new', { name: 'next', headers: CT, body: json('{"next":true}') });
    expect(next.answer).toEqual({ body: { next: true }, present: true });
  });

  it('gives the bodies and refusals the contract names', async () => {
    const by = async (name: string) => (await send('/new', INPUTS.find((i) => i.name === name)!)).answer;
    expect(await by('a BOM first')).toEqual({ body: { a: 1 }, present: true });
    expect(await by('chunked, empty')).toEqual({ body: {}, present: true });
    expect(await by('content-length 0')).toEqual({ present: false });
    expect(await by('a string')).toEqual({ code: 'invalid_json' });
    expect(await by('gzip that is not')).toEqual({ code: 'invalid_body_encoding' });
    expect(await by('gzip inflating past the limit')).toEqual({ code: 'payload_too_large' });
    expect(await by('over the limit, chunked')).toEqual({ code: 'payload_too_large' });
    expect(await by('too deep')).toEqual({ code: 'json_too_deep' });
    expect(await by('charset=latin1')).toEqual({ code: 'unsupported_media_type' });
    expect(await by('an unknown encoding')).toEqual({ code: 'unsupported_media_type' });
  });

  it('refuses a body the client stopped sending midway as incomplete, as body-parser did', async () => {
    for (const path of ['/old', '/new']) {
      const before = outcomes[path.slice(1)].length;
      await new Promise<void>((resolve) => {
        const req = request({ host: '127.0.0.1', port: port(), path, method: 'POST', headers: { ...CT, 'content-length': '100' } });
        req.on('error', () => resolve());
        req.write('{"a":"partial');
        setTimeout(() => req.destroy(), 50);
      });
      for (let i = 0; i < 100 && outcomes[path.slice(1)].length === before; i++) await new Promise((r) => setTimeout(r, 20));
      expect(outcomes[path.slice(1)].slice(before)).toEqual([{ code: 'invalid_request' }]);
    }
  });
});
