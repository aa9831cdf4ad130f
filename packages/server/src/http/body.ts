import type { Readable, Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Request, Response } from 'express';
import { StrataError, badRequest, payloadTooLarge } from '@strata/store';
import { MAX_JSON_DEPTH, jsonDeeperThan } from '../validation';

/**
 * Reading a request body (CONTRACT.md §0): JSON in UTF-8 only (415 otherwise), optionally sent with
 * Content-Encoding gzip, deflate or br (a body that does not decode: 400 invalid_body_encoding), at
 * most `limit` bytes once decoded (413, so a small compressed body cannot inflate past it), nested at
 * most 64 levels (400 json_too_deep, measured on the raw bytes before anything parses them). Every
 * refusal is a StrataError, so it reaches the client as the envelope.
 *
 * The bytes are read here rather than by body-parser (issue 27: its stream machinery, media-type and
 * charset parsing and iconv decoding were a tenth of a write's CPU). What it did is kept, step for step:
 * a body already finished is not read; a declared length over the limit is refused before reading; the
 * rest of a refused body is read and discarded before the refusal is answered; one UTF-8 BOM is
 * dropped; an empty body is `{}`; anything but an object or array at the top is invalid JSON.
 * `packages/server/test/body-reader.test.ts` checks the answers against body-parser's, input for input.
 */
export function jsonBodyReader(limit: number): (req: Request, res: Response) => Promise<void> {
  return async (req) => {
    if (!BODY_METHODS.has(req.method) || !hasBody(req)) return;
    const contentType = req.headers['content-type'];
    // the common spellings of JSON in UTF-8 without parsing the header; anything else the full way
    if (typeof contentType !== 'string' || !PLAIN_JSON.has(contentType.toLowerCase())) {
      if (!req.is('application/json') && !req.is('application/*+json')) {
        throw new StrataError('unsupported_media_type', 'Send the body as JSON with Content-Type: application/json.');
      }
      // JSON on the wire is UTF-8 (RFC 8259 §8.1), named so (body-parser refused `utf8`, and so does this).
      const charset = charsetOf(contentType ?? '');
      if (charset === 'utf8') throw new StrataError('unsupported_media_type', 'The body must be UTF-8 JSON.');
      if (charset !== null && charset !== 'utf-8') {
        throw new StrataError('unsupported_media_type', `The body must be UTF-8 JSON; charset=${charset} is not accepted.`);
      }
    }
    // a request whose body is over (or whose client stopped sending) has none to read
    if ((req as { upgrade?: boolean }).upgrade || !req.socket?.readable || (req.complete && !req.readable)) return;
    const bytes = await readJsonBytes(req, limit);
    if (jsonDeeperThan(bytes, MAX_JSON_DEPTH)) {
      throw new StrataError('json_too_deep', `The request body nests JSON deeper than ${MAX_JSON_DEPTH} levels.`);
    }
    req.body = parseJsonBody(bytes.toString('utf8'));
  };
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Content-Type values (lowercased) that are JSON in UTF-8 as they stand. */
const PLAIN_JSON = new Set(['application/json', 'application/json; charset=utf-8', 'application/json;charset=utf-8']);

function hasBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

/** The charset parameter of a Content-Type, lowercase and unquoted; null when there is none. */
function charsetOf(contentType: string): string | null {
  const m = /;\s*charset\s*=\s*("?)([^";\s]*)\1/i.exec(contentType);
  return m ? m[2].toLowerCase() : null;
}

const incomplete = () => new StrataError('invalid_request', 'The request body was incomplete.');
const tooLarge = () => new StrataError('payload_too_large', 'The request body is larger than server.body_limit (once decoded).');

/**
 * The decoder of a Content-Encoding (lowercased, as sent), null for identity; 415 for one not known.
 * Kept apart from `decoderOf` below on purpose: JSON bodies answer as body-parser did (no trim, no
 * `x-gzip`: the differential test in packages/server/test/body-reader.test.ts holds them to it).
 */
function jsonDecoderOf(req: Request): Transform | null {
  switch ((req.headers['content-encoding'] || 'identity').toLowerCase()) {
    case 'identity':
      return null;
    case 'deflate':
      return createInflate();
    case 'gzip':
      return createGunzip();
    case 'br':
      return createBrotliDecompress();
  }
  throw new StrataError('unsupported_media_type', 'Content-Encoding must be gzip, deflate, br or identity.');
}

/**
 * The body's bytes, decoded, at most `limit` of them. A refusal (too large, cut short, not decodable)
 * is thrown once the rest of the request has been read and discarded, so the answer reaches a client
 * still sending and the connection stays usable.
 */
function readJsonBytes(req: Request, limit: number): Promise<Buffer> {
  const decoder = jsonDecoderOf(req);
  const declared = decoder ? NaN : parseInt(String(req.headers['content-length']), 10);
  return new Promise<Buffer>((resolve, reject) => {
    const source: Readable = decoder ?? req;
    const chunks: Buffer[] = [];
    let received = 0;
    let done = false;
    const finish = (err: unknown, body?: Buffer) => {
      if (done) return;
      done = true;
      source.off('data', onData).off('end', onEnd).off('error', onError);
      req.off('aborted', onAborted).off('close', onClose);
      if (decoder) {
        req.unpipe(decoder);
        decoder.on('error', () => {});
        decoder.destroy();
      }
      if (err === undefined) {
        if (decoder) req.resume();
        return resolve(body!);
      }
      discardRest(req, () => reject(err));
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limit) return finish(tooLarge());
      chunks.push(chunk);
    };
    const onEnd = () => {
      if (!Number.isNaN(declared) && received !== declared) return finish(incomplete());
      finish(undefined, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, received));
    };
    const onError = (err: Error) => {
      if (decoder && source === decoder) return finish(new StrataError('invalid_body_encoding', `The request body does not decode as Content-Encoding ${String(req.headers['content-encoding']).toLowerCase()}.`));
      const code = (err as { code?: string }).code;
      finish(code === 'ECONNRESET' || code === 'ERR_STREAM_PREMATURE_CLOSE' ? incomplete() : err);
    };
    const onAborted = () => finish(incomplete());
    // a request closed before all of it arrived never ends (one that did may close before its decoder ends)
    const onClose = () => {
      if (!req.complete) finish(incomplete());
    };
    if (!Number.isNaN(declared) && declared > limit) return finish(tooLarge());
    source.on('data', onData).on('end', onEnd).on('error', onError);
    req.on('aborted', onAborted).on('close', onClose);
    if (decoder) req.pipe(decoder);
  });
}

/** Reads what is left of a request into nothing, then calls `then` (at once if nothing is left). */
function discardRest(req: Request, then: () => void): void {
  if (req.complete && !req.readable) return then();
  if (req.destroyed || !req.socket?.readable) return then();
  let called = false;
  const once = () => {
    if (called) return;
    called = true;
    req.off('end', once).off('close', once).off('error', once);
    then();
  };
  req.on('end', once).on('close', once).on('error', once);
  req.resume();
}

/** JSON with an object or array at the top (RFC 7159 whitespace around it); an empty body is `{}`. */
function parseJsonBody(raw: string): unknown {
  const text = raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw;
  if (text.length === 0) return {};
  let at = 0;
  // RFC 7159 whitespace: space, tab, line feed, carriage return
  for (let c = text.charCodeAt(0); c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d; c = text.charCodeAt(++at));
  const first = text[at];
  if (first === '{' || first === '[') {
    try {
      return JSON.parse(text);
    } catch {
      // the same answer as a body that does not start as JSON may
    }
  }
  throw new StrataError('invalid_json', 'The request body is not valid JSON (an object or array is expected).');
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
