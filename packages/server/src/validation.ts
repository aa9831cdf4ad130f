import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
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

/** Compiled validators of every request schema; `check` throws 400 validation_failed with details. */
export class Validator {
  private readonly compiled = new Map<SchemaName, ValidateFunction>();

  constructor() {
    const ajv = new Ajv({ allErrors: true, strict: false });
    addFormats(ajv);
    for (const name of Object.keys(SCHEMAS) as SchemaName[]) this.compiled.set(name, ajv.compile(SCHEMAS[name]));
  }

  check<T>(name: SchemaName, body: unknown): T {
    const validate = this.compiled.get(name)!;
    if (!validate(body)) {
      const seen = new Set<string>();
      const details = (validate.errors ?? [])
        // `type: [x, 'null']` reports type errors once per alternative; one line per path is enough.
        .map(detail)
        .filter((d) => !seen.has(d.path + d.message) && seen.add(d.path + d.message));
      const first = details[0];
      throw badRequest('validation_failed', `Invalid request body: ${first.path} ${first.message}.`, details);
    }
    return body as T;
  }
}

/** 1 to 256 bytes of UTF-8 without control characters (user_id, org_id, agent_id). */
export function checkIdentifier(value: string, path: string): string {
  const bytes = Buffer.byteLength(value, 'utf8');
  // eslint-disable-next-line no-control-regex
  if (bytes < 1 || bytes > 256 || /[\u0000-\u001f\u007f]/.test(value)) {
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
