import express, { type Request, type Response } from 'express';
import { StrataError } from '@strata/store';
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
