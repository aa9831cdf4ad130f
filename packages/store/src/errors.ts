/**
 * The one error hierarchy of Strata. Every failure a client can cause or see is a StrataError with a
 * stable snake_case `code` (CONTRACT.md §0) and, where the input is at fault, typed `details`. A thrower
 * names the cause; it never picks an HTTP status: the status follows from the code (ERROR_STATUS), and
 * server/src/http/errors.ts writes the envelope. Callers decide on `code` and fields, never on messages.
 * Errors raised inside `apply` must be deterministic (same log, same error on every replica).
 */
export interface ErrorDetail {
  path: string;
  message: string;
}

/**
 * Every code an error may carry, with the status class the contract gives it (§0 table). The one table:
 * it sits beside the codes rather than in the server because apply answers carry the status across the
 * log (ApplyFailure) and memory's domain errors expose it to their callers.
 */
export const ERROR_STATUS = {
  // 400: malformed input
  bad_request: 400, // not HTTP/1.1 at all (Node's parser)
  invalid_request: 400,
  invalid_json: 400,
  json_too_deep: 400,
  invalid_body_encoding: 400,
  validation_failed: 400,
  invalid_id: 400,
  invalid_json_content: 400,
  invalid_base64: 400, // retrieval's image/audio/video
  unsupported_image: 400,
  invalid_command: 400, // a command apply refuses (a bug of the proposer, or a forged entry)
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  route_not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  conflict: 409,
  invalid_transition: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  headers_too_large: 431,
  internal: 500,
  no_leader: 503,
  unavailable: 503,
  /** back-pressure: the shard's group holds as many uncommitted writes as it may (Retry-After) */
  overloaded: 503,
  /** the user's keys are being handed to another group (a split): retry, the directory names the new owner shortly */
  range_moving: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

/** The codes whose status is S (so `notFound` cannot be given a 409 code). */
export type CodeWithStatus<S extends number> = { [C in ErrorCode]: (typeof ERROR_STATUS)[C] extends S ? C : never }[ErrorCode];

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(ERROR_STATUS, value);
}

export class StrataError extends Error {
  /** the contract's status for `code` (ERROR_STATUS), kept as a field so plain matchers and logs see it */
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
    /** seconds, sent as Retry-After (429, 503) */
    readonly retryAfter?: number,
  ) {
    super(message);
    this.name = 'StrataError';
    this.status = ERROR_STATUS[code];
  }
}

export const badRequest = (code: CodeWithStatus<400>, message: string, details?: ErrorDetail[]) =>
  new StrataError(code, message, details);
export const unauthenticated = (message = 'Missing or invalid credentials: send Authorization: Bearer <token> or x-api-key.') =>
  new StrataError('unauthenticated', message);
export const forbidden = (message: string) => new StrataError('forbidden', message);
export const notFound = (message: string, code: CodeWithStatus<404> = 'not_found') => new StrataError(code, message);
export const conflict = (message: string, code: CodeWithStatus<409> = 'conflict') => new StrataError(code, message);
export const payloadTooLarge = (message: string) => new StrataError('payload_too_large', message);
export const unavailable = (message: string, code: CodeWithStatus<503> = 'unavailable', retryAfter = 1) =>
  new StrataError(code, message, undefined, retryAfter);

/**
 * A deterministic failure produced by apply, carried back to the proposer as data (it crosses the log).
 * `status` rides along for readers of raw answers; settle() trusts only the code.
 */
export interface ApplyFailure {
  error: { status: number; code: string; message: string };
}

export function isApplyFailure(value: unknown): value is ApplyFailure {
  return typeof value === 'object' && value !== null && 'error' in value &&
    typeof (value as ApplyFailure).error?.code === 'string';
}

export function failure(err: StrataError): ApplyFailure {
  return { error: { status: err.status, code: err.code, message: err.message } };
}

/** Turns a state machine result into the proposer's answer: a deterministic failure becomes the thrown error. */
export function settle<T>(result: T): Exclude<T, ApplyFailure> {
  if (isApplyFailure(result)) {
    const { code, message } = result.error;
    // A code this build does not know (a newer replica's) is still a refusal, not a success: 500.
    throw new StrataError(isErrorCode(code) ? code : 'internal', message);
  }
  return result as Exclude<T, ApplyFailure>;
}
