import Ajv, { type ErrorObject, type SchemaValidateFunction, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats';
import { badRequest, type ErrorDetail } from '@strata/store';
import { SCHEMAS, type SchemaName } from './schemas';

function detail(err: ErrorObject): ErrorDetail {
  if (err.keyword === 'required') {
    const missing = (err.params as { missingProperty: string }).missingProperty;
    return { path: `${err.instancePath}/${missing}`, message: 'is required' };
  }
  if (err.keyword === 'enum') {
    const allowed = (err.params as { allowedValues: unknown[] }).allowedValues.filter((v) => v !== null);
    return { path: err.instancePath || '/', message: `must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}` };
  }
  return { path: err.instancePath || '/', message: err.message ?? 'is invalid' };
}

/** An ajv instance with Strata's formats and keywords (the request schemas and the import line schemas use it). */
export function createAjv(): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats(ajv);
  // RFC 3339 allows a leap second (23:59:60) and lowercase t/z; a JavaScript Date holds neither the
  // one nor, on every engine, the other. A time the server could not store is refused here, as 400.
  const rfc3339 = fullFormats['date-time'] as { validate: (s: string) => boolean };
  ajv.addFormat('date-time', { type: 'string', validate: (s: string) => rfc3339.validate(s) && Number.isFinite(Date.parse(s)) });
  ajv.addKeyword({ keyword: MAX_BYTES, type: 'string', schemaType: 'number', validate: maxBytes });
  return ajv;
}

/** ajv's errors as the envelope's details, one per path and message. */
export function errorDetails(errors: ErrorObject[] | null | undefined): ErrorDetail[] {
  const seen = new Set<string>();
  return (errors ?? [])
    // `type: [x, 'null']` reports type errors once per alternative; one line per path is enough.
    .map(detail)
    .filter((d) => !seen.has(d.path + d.message) && seen.add(d.path + d.message));
}

/**
 * Validators of the request schemas; `check` throws 400 validation_failed with details. Each schema is
 * compiled the first time a body is checked against it: compiling all of them took about 0.1-0.2 s of
 * a node's start, mostly for routes a node may never be asked. (Every schema compiles: the schema
 * tests check a body against each one.)
 */
export class Validator {
  private readonly compiled = new Map<SchemaName, ValidateFunction>();
  private ajv: Ajv | null = null;

  check<T>(name: SchemaName, body: unknown): T {
    let validate = this.compiled.get(name);
    if (!validate) {
      this.ajv ??= createAjv();
      validate = this.ajv.compile(SCHEMAS[name]);
      this.compiled.set(name, validate);
    }
    if (!validate(body)) {
      const details = errorDetails(validate.errors);
      const first = details[0];
      throw badRequest('validation_failed', `Invalid request body: ${first.path} ${first.message}.`, details);
    }
    return body as T;
  }
}

/** The schema keyword that bounds a string's length in bytes of UTF-8 (maxLength counts characters). */
export const MAX_BYTES = 'x-max-bytes';

/**
 * A lone UTF-16 surrogate (possible in a JSON string) cannot be encoded: it would be stored as U+FFFD
 * and share its keys with the real U+FFFD spelling of another id. With the u flag this class matches
 * only unpaired surrogates.
 */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

const maxBytes: SchemaValidateFunction = (max: number, data: string): boolean => {
  if (LONE_SURROGATE.test(data)) {
    maxBytes.errors = [{ keyword: MAX_BYTES, message: 'must be well-formed Unicode (no lone surrogate)', params: { limit: max } }];
    return false;
  }
  if (Buffer.byteLength(data, 'utf8') <= max) return true;
  maxBytes.errors = [{ keyword: MAX_BYTES, message: `must be at most ${max} bytes of UTF-8`, params: { limit: max } }];
  return false;
};

/** Control characters (C0, DEL and C1): never part of an identifier. */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** 1 to 256 bytes of UTF-8 without control characters (user_id, org_id, agent_id). */
export function checkIdentifier(value: string, path: string): string {
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes < 1 || bytes > 256 || CONTROL.test(value) || LONE_SURROGATE.test(value)) {
    throw badRequest('invalid_id', `${path} must be 1 to 256 bytes of UTF-8 without control characters.`, [{ path, message: 'invalid identifier' }]);
  }
  return value;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A UUID of any version, case-insensitive in, lowercase out. */
export function checkUuid(value: string, path: string): string {
  if (!UUID_RE.test(value)) throw badRequest('invalid_id', `${path} must be a UUID.`, [{ path, message: 'must be a UUID' }]);
  return value.toLowerCase();
}

/** How deep JSON may nest (CONTRACT.md §0): bodies, and the `content` of `json` events. */
export const MAX_JSON_DEPTH = 64;

/**
 * True when JSON text nests arrays and objects deeper than `limit` levels (the outermost is level 1).
 * A linear scan that skips strings and needs no recursion, so it measures any depth safely and before
 * anything parses or walks the document. Works on UTF-8 bytes as on strings: the structural characters
 * are ASCII, which never occurs inside a multi-byte UTF-8 sequence.
 */
export function jsonDeeperThan(text: string | Uint8Array, limit = MAX_JSON_DEPTH): boolean {
  const at = typeof text === 'string' ? (i: number) => text.charCodeAt(i) : (i: number) => text[i];
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = at(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return false;
}

/**
 * A query parameter that must be a decimal integer from `min` to `max` (no hex, exponent, sign,
 * fraction or spaces, and not repeated); `def` when absent or empty. 400 validation_failed otherwise.
 */
export function queryInt(value: unknown, name: string, def: number, min: number, max: number): number {
  if (value === undefined || value === '') return def;
  const n = typeof value === 'string' && /^[0-9]{1,15}$/.test(value) ? Number(value) : NaN;
  if (!(n >= min && n <= max)) {
    throw badRequest('validation_failed', `${name} must be a decimal integer from ${min} to ${max}.`, [{ path: `/${name}`, message: `must be a decimal integer from ${min} to ${max}` }]);
  }
  return n;
}

/** A page cursor query parameter (`after`): null when absent or empty; 400 when repeated. */
export function queryCursor(value: unknown, name = 'after'): string | null {
  if (value === undefined || value === '') return null;
  if (typeof value !== 'string') {
    throw badRequest('validation_failed', `${name} must be given once, as a next_cursor returned by this route.`, [{ path: `/${name}`, message: 'is not a cursor' }]);
  }
  return value;
}

/** The `after` cursor and `limit` of a paged listing's query (limit from 1 to `max`, `def` when absent). */
export function queryPage(query: Record<string, unknown>, def: number, max: number): { after: string | null; limit: number } {
  return { after: queryCursor(query.after), limit: queryInt(query.limit, 'limit', def, 1, max) };
}

/**
 * Every query parameter must be one the route declares (its `queryParams`, which the OpenAPI document
 * lists too): a misspelt one (`cursor` for `after`) would otherwise be ignored and the caller would
 * get an answer to another question. 400 validation_failed naming each unknown parameter.
 */
export function checkQueryNames(query: Record<string, unknown>, declared: readonly { name: string }[] | undefined): void {
  const known = new Set((declared ?? []).map((q) => q.name));
  const unknown = Object.keys(query).filter((name) => !known.has(name));
  if (unknown.length === 0) return;
  const accepted = known.size ? `it accepts ${[...known].join(', ')}` : 'it takes no query parameters';
  throw badRequest('validation_failed', `Unknown query parameter ${unknown.join(', ')}: ${accepted}.`, unknown.map((name) => ({ path: `/${name}`, message: 'is not a query parameter of this route' })));
}

/** A boolean query parameter `?name=true|false` (absent or empty: false); anything else 400. */
export function queryBool(value: unknown, name: string): boolean {
  if (value === undefined || value === '' || value === 'false') return false;
  if (value === 'true') return true;
  throw badRequest('validation_failed', `${name} must be true or false.`, [{ path: `/${name}`, message: 'must be true or false' }]);
}
