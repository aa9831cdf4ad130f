import type { Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import express, { type Request, type Response } from 'express';
import { StrataError, badRequest, payloadTooLarge } from '@strata/store';
import { MAX_JSON_DEPTH, jsonDeeperThan } from '../validation';

/**
 * Reading a request body (CONTRACT.md §0): JSON in UTF-8 only (415 otherwise), optionally sent with
 * Content-Encoding gzip, deflate or br (a body that does not decode: 400 invalid_body_encoding), at
 * most `limit` bytes once decoded (413, so a small compressed body cannot inflate past it), nested at
 * most 64 levels (400 json_too_deep, measured on the raw bytes before anything parses them). Every
 * refusal is a StrataError, so it reaches the client as the envelope.
 */
export function jsonBodyReader(limit: number): (req: Request, res: Response) => Promise<void> {
  const parse = express.json({ limit, type: () => true, verify: refuseDeepJson });
  return (req, res) => new Promise<void>((resolve, reject) => {
    if (!['POST', 'PUT', 'PATCH', 'DELETE'].includes(req.method) || !hasBody(req)) return resolve();
    if (!req.is('application/json') && !req.is('application/*+json')) {
      return reject(new StrataError('unsupported_media_type', 'Send the body as JSON with Content-Type: application/json.'));
    }
    // body-parser accepts any utf-* charset and decodes it; JSON on the wire is UTF-8 (RFC 8259 §8.1).
    const charset = charsetOf(req.headers['content-type'] ?? '');
    if (charset !== null && charset !== 'utf-8' && charset !== 'utf8') {
      return reject(new StrataError('unsupported_media_type', `The body must be UTF-8 JSON; charset=${charset} is not accepted.`));
    }
    parse(req, res, (err?: unknown) => (err ? reject(bodyError(err, req)) : resolve()));
  });
}

function hasBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

/** The charset parameter of a Content-Type, lowercase and unquoted; null when there is none. */
function charsetOf(contentType: string): string | null {
  const m = /;\s*charset\s*=\s*("?)([^";\s]*)\1/i.exec(contentType);
  return m ? m[2].toLowerCase() : null;
}

const TOO_DEEP = 'json.too.deep';

/** body-parser's verify hook: runs on the decoded bytes, before JSON.parse. */
function refuseDeepJson(_req: unknown, _res: unknown, buf: Buffer): void {
  if (jsonDeeperThan(buf, MAX_JSON_DEPTH)) throw Object.assign(new Error('JSON nested too deep'), { type: TOO_DEEP });
}

/** body-parser's errors as the contract's; an error it did not classify is returned as is (a bug: 500). */
function bodyError(err: unknown, req: Request): unknown {
  const e = err as { type?: string };
  switch (e.type) {
    case 'entity.parse.failed':
      return new StrataError('invalid_json', 'The request body is not valid JSON (an object or array is expected).');
    case TOO_DEEP:
      return new StrataError('json_too_deep', `The request body nests JSON deeper than ${MAX_JSON_DEPTH} levels.`);
    case 'entity.too.large':
      return new StrataError('payload_too_large', 'The request body is larger than server.body_limit (once decoded).');
    case 'encoding.unsupported':
      return new StrataError('unsupported_media_type', 'Content-Encoding must be gzip, deflate, br or identity.');
    case 'charset.unsupported':
      return new StrataError('unsupported_media_type', 'The body must be UTF-8 JSON.');
    case 'request.aborted':
    case 'request.size.invalid':
      return new StrataError('invalid_request', 'The request body was incomplete.');
  }
  // What is left is the decompressor's own error (zlib or brotli: bad header, bad data, truncated).
  const coding = String(req.headers['content-encoding'] ?? 'identity').toLowerCase();
  if (coding !== 'identity') {
    return new StrataError('invalid_body_encoding', `The request body does not decode as Content-Encoding ${coding}.`);
  }
  return err;
}

/** The media types a raw NDJSON body may be sent as. */
const NDJSON_TYPES = ['application/x-ndjson', 'application/ndjson', 'application/jsonl', 'application/x-jsonlines'];

/**
 * A route that reads its body itself, as a stream (`rawBody` in its RouteSpec row): the media type
 * is checked here, before anything is read (415 otherwise); the bytes are read by `rawBodyChunks`.
 */
export function checkRawBody(req: Request, kind: 'ndjson'): void {
  if (kind !== 'ndjson') return;
  if (!hasBody(req)) throw badRequest('validation_failed', 'The request needs a body: NDJSON, one JSON document a line.', [{ path: '/', message: 'is empty' }]);
  const type = String(req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (!NDJSON_TYPES.includes(type)) {
    throw new StrataError('unsupported_media_type', 'Send the body as NDJSON with Content-Type: application/x-ndjson.');
  }
  const charset = charsetOf(req.headers['content-type'] ?? '');
  if (charset !== null && charset !== 'utf-8' && charset !== 'utf8') {
    throw new StrataError('unsupported_media_type', `The body must be UTF-8; charset=${charset} is not accepted.`);
  }
}

function decoderOf(req: Request): Transform | null {
  const coding = String(req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  switch (coding) {
    case 'identity':
    case '':
      return null;
    case 'gzip':
    case 'x-gzip':
      return createGunzip();
    case 'deflate':
      return createInflate();
    case 'br':
      return createBrotliDecompress();
    default:
      throw new StrataError('unsupported_media_type', 'Content-Encoding must be gzip, deflate, br or identity.');
  }
}

/**
 * The body of a raw route as it arrives, decoded (Content-Encoding), at most `limit` bytes once
 * decoded (413 `payload_too_large` naming `what`). Pulled by the consumer: while it does not ask for
 * more, nothing more is read from the socket (TCP back-pressure reaches the client). A body that does
 * not decode: 400 `invalid_body_encoding`; a client that stops sending midway: 400 `invalid_request`.
 */
export async function* rawBodyChunks(req: Request, limit: number, what: string): AsyncGenerator<Buffer> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  const decoder = decoderOf(req);
  if (!decoder && declared > limit) throw payloadTooLarge(`The body is ${declared} bytes; at most ${limit} (${what}) are accepted.`);
  // Not the request's default iterator: leaving it early would destroy the request, and the socket with
  // it, before the refusal could be answered.
  const source: AsyncIterable<Buffer> = decoder ? req.pipe(decoder) : req.iterator({ destroyOnReturn: false });
  // pipe() does not pass the request's errors on: an aborted request must end the decoder's stream too
  const onAbort = () => decoder?.destroy(Object.assign(new Error('request aborted'), { code: 'ECONNRESET' }));
  if (decoder) req.once('error', onAbort).once('aborted', onAbort);
  let total = 0;
  try {
    for await (const chunk of source) {
      total += chunk.length;
      if (total > limit) throw payloadTooLarge(`The body is larger than ${limit} bytes (${what}) once decoded.`);
      yield chunk;
    }
    if (!req.complete) throw new StrataError('invalid_request', 'The request body was incomplete.');
  } catch (err) {
    if (err instanceof StrataError) throw err;
    const code = (err as { code?: string }).code;
    if (code === 'ECONNRESET' || code === 'ERR_STREAM_PREMATURE_CLOSE') throw new StrataError('invalid_request', 'The request body was incomplete.');
    if (decoder) throw new StrataError('invalid_body_encoding', `The request body does not decode as Content-Encoding ${String(req.headers['content-encoding'])}.`);
    throw err;
  } finally {
    if (decoder) {
      req.off('error', onAbort).off('aborted', onAbort);
      req.unpipe(decoder);
      decoder.destroy();
    }
    // Refused before its end (a bad line, too large): the rest is read and discarded, as Node does with a
    // body nobody reads, so the answer reaches the client and the connection stays usable. The client's
    // time to send it all is bounded by server.request_timeout_ms.
    if (!req.complete) req.resume();
  }
}
